"""Whether two expressions are equal: the one agreement rule (``agreement``), exact proofs
on SymEngine (``canonical``) and FLINT (``rational``), high-precision re-evaluation
(``precision``), and the ladder that judges a submission against a reference over its
domain (``equivalence``).

May import: ``fastscore.support``, ``fastscore.kernels``, ``fastscore.tapes``,
``fastscore.settings``.
"""
