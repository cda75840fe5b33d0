"""Compile (or load from Numba's cache) every kernel once per process, up front.

The first call of a kernel compiles it (seconds with an empty cache).  Work that runs
under a time budget, such as a mechanism solve, calls ``warm_up`` first so that the
compilation is never charged to the budget."""
from functools import cache

import numpy as np
import symengine as se

from fastscore.compile import compile_tape
from fastscore.kernels import evaluate, pack, split_metrics
from fastscore.kernels.roots import Block, solve_block


@cache  # once per process: not a memo of fastscore.caches, which clear() would empty and re-warm
def warm_up() -> None:
    """Run each kernel once on a tiny input."""
    x, u, w = se.Symbol("x"), se.Symbol("u"), se.Symbol("w")
    one = se.Integer(1)
    X = np.array([[1.0, 2.0]])
    split_metrics(evaluate(compile_tape(x * x + 1, ["x"]), X), np.array([2.0, 5.0]))
    solve_block(_block([u * u - x], [2 * u], ["x"], ["u"]), X)
    solve_block(_block([u - x * w, w - u * u], [one, -x, -2 * u, one], ["x"], ["u", "w"]), X)  # the k > 1 path


def _block(residuals, jacobian, given, unknowns) -> Block:
    """A root-finding block from residuals and their Jacobian written out (row by row,
    the layout of ``Block``): ``fastscore.solve.compile_block`` differentiates, but the
    solver imports this module."""
    variables = [*given, *unknowns]
    return Block(pack([compile_tape(e, variables) for e in (*residuals, *jacobian)]), tuple(given), tuple(unknowns))
