"""Sweeps in: every format a study's submissions come in, read as batches of normalised
rows.  The reader registry and ``read_sweep`` (``read``), the normalised rows
(``rows``), the file formats (``files``: Parquet, CSV, JSONL) and the directory tree
(``tree``), one row as the scorer reads it (``submission``: ``Submission``),
MechBench's run folders (``mechbench_runs``), its published results layer
(``results``) and PySR's hall-of-fame files (``pysr``).

May import: ``fastscore.support``, ``fastscore.problems``, ``fastscore.text`` (``submission``:
the one normalised ``Submission`` of a row; ``mechbench_runs``: the comment stripper).
"""
