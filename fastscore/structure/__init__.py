"""The structure of a mechanism, apart from its values: its graph and the similarity of
two graphs (``graphs``), and their drawing as DOT, SVG and PNG (``drawing``).

May import: ``fastscore.support``, ``fastscore.solve``, ``fastscore.settings``.
"""
