"""The structure of a mechanism, apart from its values: its dependency graph (``graphs``),
the similarity of two graphs (``graph_score``) and of their equations' formulas
(``ast_score``), and their drawing as DOT, SVG and PNG (``drawing``).

May import: ``fastscore.support``, ``fastscore.solve``, ``fastscore.settings``.
"""
