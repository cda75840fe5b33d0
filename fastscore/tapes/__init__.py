"""SymEngine expressions -> postfix tapes the kernels run: the compiler (``compile``), its
instruction lists (``instructions``) and the once-per-process warm-up (``warm``).

May import: ``fastscore.support``, ``fastscore.kernels``.
"""
