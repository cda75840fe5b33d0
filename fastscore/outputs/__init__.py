"""The output vocabulary: the tables a run writes and their schemas, rates and strata
(``tables``), MechBench's published numeric rates (``published``) and unbiased pass@k
(``passk``).

May import: ``fastscore.sweeps``, ``fastscore.benchmarks.declared``.
"""
