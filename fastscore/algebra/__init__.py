"""Whether two expressions are equal: the one agreement rule (``agreement``), exact proofs
on SymEngine (``canonical``, with the rewrites it applies in ``rewrites`` and the size
estimates that guard every expansion in ``sizes``) and FLINT (``rational``),
high-precision re-evaluation (``precision``), and the ladder that judges a submission
against a reference over its domain (``equivalence``).

May import: ``fastscore.support``, ``fastscore.kernels``, ``fastscore.tapes``,
``fastscore.settings``.
"""
