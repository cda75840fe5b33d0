"""Mechanism elimination: equations -> explicit steps, implicit blocks and the law they
imply (``mechanism``), the solved mechanism and the evaluation of its plan (``solution``),
with the block structure (``blocks``), closed forms of one unknown (``closed_forms``), exact
linear elimination (``linear``), SymPy's ``solve`` under a time limit as the last symbolic
attempt (``sympy_fallback``), copies of one mechanism (``copies``) and the size bounds on
what the solver builds (``growth``).

May import: ``fastscore.support``, ``fastscore.text``, ``fastscore.kernels``,
``fastscore.tapes``, ``fastscore.algebra``, ``fastscore.settings``.
"""
