"""The operator's report of a run's tables: the document (``document``), its statistics
(``stats``) and figures (``figures``), the structure section (``structure``), the graph
of one task (``task_graph``) and the audit against MechBench's published verdicts
(``audit``).

May import: every package below ``run`` (not ``run`` or ``service``).
"""
