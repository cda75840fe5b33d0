"""SymPy's ``solve`` as the solver's last symbolic attempt at one equation in one unknown.

Only on the main thread, and only when no caller's own interval timer is running: the
time limit is the solve's remaining budget (at most its SymPy share), enforced with
``SIGALRM``.  SymPy's first import and warm-up in a process are not charged
(``fastscore.tapes.warm.warm_sympy``).  Its results are converted object by object
(``sympy2symengine``), never parsed from text, and kept only when the kernels can
evaluate them; the solver still checks them on the sample points.
"""

from __future__ import annotations

import signal
import threading
import time

import symengine as se
from symengine.lib.symengine_wrapper import sympy2symengine

from fastscore.solve.closed_forms import has, names_of
from fastscore.tapes.compile import UnsupportedExpression, compile_tape
from fastscore.tapes.warm import warm_sympy

__all__ = ["sympy_forms"]


class _Timeout(Exception):
    """Raised by the SIGALRM handler when a SymPy attempt overruns the budget."""


def sympy_forms(solver, residual: se.Basic, x: se.Symbol) -> list[se.Basic] | None:
    """SymPy's ``solve`` on an expression we built, within the remaining budget of ``solver``
    (a ``_Solver``: its ``deadline`` and ``sympy_left`` are charged; SymPy's first import and
    warm-up in this process are not: ``warm_sympy``)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    if signal.getitimer(signal.ITIMER_REAL)[0]:
        return None  # the caller's own timer is running: leave it alone
    solver.deadline += warm_sympy()
    remaining = min(solver.sympy_left, solver.deadline - time.perf_counter())
    if remaining <= 0.01:
        return None
    started = time.perf_counter()
    import sympy

    def on_alarm(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, remaining)
    try:
        found = sympy.solve(residual._sympy_(), x._sympy_())
        forms = [sympy2symengine(f) for f in found]  # converts SymPy objects; never parses text
    except _Timeout:
        return None
    except Exception:  # noqa: BLE001 - SymPy fails in many ways (NotImplementedError, ...)
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        solver.sympy_left -= time.perf_counter() - started
    # a form in functions the kernels cannot evaluate (LambertW, undefined functions)
    # is no use: without any other, the unknown is solved numerically
    forms = [f for f in forms if not has(f, x) and _evaluable(f)]
    return forms or None


def _evaluable(expr: se.Basic) -> bool:
    """Whether the kernels can evaluate ``expr`` (every node has an instruction)."""
    try:
        compile_tape(expr, sorted(names_of(expr)))
    except UnsupportedExpression:
        return False
    return True
