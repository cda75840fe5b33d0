"""Once-per-process set-up kept out of time budgets: the kernels and SymPy's solver.

The first call of a kernel compiles it (seconds with an empty cache).  Work that runs
under a time budget, such as a mechanism solve, calls ``warm_up`` first so that the
compilation is never charged to the budget.  Likewise the solver's first use of SymPy
imports it and the modules its ``solve`` loads on demand (seconds on a busy machine):
``warm_sympy`` does that with one small solve, on the solver's first use of SymPy in a
process, and says how long it took, which the solver adds to its deadline (the feedback
service's fork server calls it up front, so its workers start with it done)."""
import time
from functools import cache

import numpy as np
import symengine as se

from fastscore.kernels import classify, evaluate, evaluate_bounded, pack, screen, split_metrics, worst
from fastscore.kernels.roots import Block, solve_block
from fastscore.tapes.compile import compile_tape


@cache  # once per process: not a memo of fastscore.support.caches, which clear() would empty and re-warm
def warm_up() -> None:
    """Run each kernel once on a tiny input (every kernel is compiled, and cached, on a
    process's first warm-up: ``fastscore.kernels.jit.cache_is_cold`` relies on it)."""
    x, u, w = se.Symbol("x"), se.Symbol("u"), se.Symbol("w")
    one = se.Integer(1)
    X = np.array([[1.0, 2.0]])
    tape = compile_tape(x * x + 1, ["x"])
    values, other = evaluate(tape, X), np.array([2.0, 5.5])
    split_metrics(values, other)
    evaluate_bounded(tape, X, np.arange(2))
    screen(values, other, rtol=1e-6, k=1)
    classify(values, other, rtol=1e-6)
    worst(values, other, np.arange(2), k=1)
    solve_block(_block([u * u - x], [2 * u], ["x"], ["u"]), X)
    solve_block(_block([u - x * w, w - u * u], [one, -x, -2 * u, one], ["x"], ["u", "w"]), X)  # the k > 1 path


def _block(residuals, jacobian, given, unknowns) -> Block:
    """A root-finding block from residuals and their Jacobian written out (row by row,
    the layout of ``Block``): ``fastscore.solve.solution.compile_block`` differentiates, but the
    solver imports this module."""
    variables = [*given, *unknowns]
    return Block(pack([compile_tape(e, variables) for e in (*residuals, *jacobian)]), tuple(given), tuple(unknowns))


_sympy_warm = False


def warm_sympy() -> float:
    """Import SymPy and run one small transcendental ``solve`` (which loads the solver's
    modules); the seconds this took on the first call in this process, 0 afterwards."""
    global _sympy_warm
    if _sympy_warm:
        return 0.0
    started = time.perf_counter()
    import sympy
    u, x = sympy.symbols("u x", positive=True)
    try:
        sympy.solve(u + sympy.exp(u) - x, u)
        sympy.solve(u**2 * x - 1, u)
    except Exception:  # noqa: BLE001 - a warm-up only; the real solve reports its own failure
        pass
    _sympy_warm = True
    return time.perf_counter() - started
