"""The problem library: MechBench-style families (``families``) and their composed
instances (``compose``).

May import: ``fastscore.support``, ``fastscore.text``, ``fastscore.problems``,
``fastscore.solve``, ``fastscore.scoring``.
"""
