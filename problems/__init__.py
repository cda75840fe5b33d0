"""The bundled problem sets and example sweep, installed as ``fastscore.bundled``
(package data; ``fastscore.bundled_data`` finds them in a checkout and when installed)."""
