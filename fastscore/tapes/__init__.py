"""SymEngine expressions -> postfix tapes the kernels run: the compiler (``compile``), the
lowering of one tree to instructions (``lowering``), the float64 values of constants
(``constants``), the instruction lists (``instructions``) and the once-per-process
warm-up (``warm``).

May import: ``fastscore.support``, ``fastscore.kernels``.
"""
