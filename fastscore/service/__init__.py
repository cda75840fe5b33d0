"""The feedback service agents call while they search: the HTTP app (``app``), its
supervised workers (``workers``, ``preload``), the bounded answer cache (``memo``),
public MechBench task artifacts (``public``), one feedback answer (``feedback``) and
the protocol's constants (``protocol``).

May import: ``fastscore.support``, ``fastscore.text``, ``fastscore.kernels``,
``fastscore.tapes``, ``fastscore.algebra``, ``fastscore.solve``.
"""
