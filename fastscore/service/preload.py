"""Imported once by the feedback service's fork server (``fastscore.service.workers``): it loads
the solver and warms the Numba kernels and SymPy's solver there, so that every worker
forked from it, the first ones and each replacement of a killed one, starts warm at once."""
from fastscore.service.feedback import feedback  # noqa: F401 - loaded here so that workers inherit it
from fastscore.tapes.warm import warm_sympy, warm_up

warm_up()
warm_sympy()  # a worker's budget is wall-clock: SymPy's first import and solve are done here
