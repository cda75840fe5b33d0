"""Compile (or load from Numba's cache) every kernel once per process, up front.

The first call of a kernel compiles it (seconds with an empty cache).  Work that runs
under a time budget, such as a mechanism solve, calls ``warm_up`` first so that the
compilation is never charged to the budget."""
from functools import cache

import numpy as np
import symengine as se

from fastscore.kernels import compile_tape, evaluate, split_metrics
from fastscore.kernels.roots import compile_block, solve_block


@cache
def warm_up() -> None:
    """Run each kernel once on a tiny input."""
    x, u = se.Symbol("x"), se.Symbol("u")
    X = np.array([[1.0, 2.0]])
    split_metrics(evaluate(compile_tape(x * x + 1, ["x"]), X), np.array([2.0, 5.0]))
    solve_block(compile_block([u * u - x], ["x"], ["u"]), X)
    w = se.Symbol("w")
    solve_block(compile_block([u - x * w, w - u * u], ["x"], ["u", "w"]), X)  # the k > 1 path
