"""Root finding for implicit blocks: k equations in k unknowns, at every sample.

One compiled kernel serves every system: residuals and their Jacobian come as tapes
(a ``Block``; ``fastscore.solve.solution.compile_block`` differentiates and compiles them) and
are run by ``evaluate.run_tape`` inside the loop.

- one unknown: the residual is scanned over a log-spaced grid of positive, then
  negative values (``±10**e``, ``e`` in [-40, 40] by quarter decades); the first
  sign change whose refined root passes the residual check is kept, so a positive
  root is preferred, the smallest first.  Refinement is safeguarded Newton inside
  the bracket (bisection whenever Newton leaves it).
- several unknowns: damped Newton (per-sample backtracking on the residual norm)
  from the caller's guess or from log-spaced equal starts.

A root is accepted when the last Newton step is negligible and the residual has
fallen far below its size at the start (rejecting poles and spurious stalls).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .evaluate import run_tape
from .jit import kernel
from .tape import TapeBatch

_GRID = np.concatenate([10.0 ** np.arange(-40.0, 40.25, 0.25), -(10.0 ** np.arange(-40.0, 40.25, 0.25))])
"""1-D scan: ascending positive values, then ascending magnitudes of negative ones."""

_STARTS = np.array([1.0, 1e-3, 1e3, 1e-6, 1e6, 1e-9, 1e9, 1e-12, 1e12, -1.0])
"""Equal starting values of all unknowns for multi-dimensional Newton."""

_MAX_ITER = 100

_ACCEPT_1D = 1e-6
"""A refined 1-D root is kept when its residual is at most this times the larger
residual at the bracket's ends (a pole's sign change fails it).  A property of the
root finder, not the agreement of two values (``fastscore.algebra.agreement``)."""

_ACCEPT_ND = 1e-8
"""Multi-dimensional Newton converges when the residual norm falls to this times its
largest value on the way."""


@dataclass(frozen=True)
class Block:
    """Compiled residuals (tapes ``0..k-1``) and Jacobian (tape ``k + i*k + j`` is
    d residual_i / d unknown_j) over the variables ``given + unknowns``."""

    batch: TapeBatch
    given: tuple[str, ...]
    unknowns: tuple[str, ...]


def solve_block(block: Block, X: np.ndarray, *, guess: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Solve at every sample; ``X`` holds the given values, shape ``(n_given, n)``.

    ``guess`` (``(k, n)``) seeds multi-dimensional Newton.  Returns the solution
    ``(k, n)`` (NaN where not converged) and the converged mask ``(n,)``."""
    X = np.asarray(X, dtype=np.float64)
    k, n = len(block.unknowns), X.shape[1]
    if X.shape[0] != len(block.given):
        raise ValueError(f"X has {X.shape[0]} rows for {len(block.given)} given variables")
    W = np.empty((len(block.given) + k, n))
    W[: len(block.given)] = X
    W[len(block.given) :] = np.nan if guess is None else guess
    converged = np.zeros(n, dtype=np.bool_)
    b = block.batch
    _solve(b.ops, b.args, b.starts, b.depth, W, k, guess is not None, _GRID, _STARTS, converged)
    return W[len(block.given) :].copy(), converged


@kernel
def _solve(ops, args, starts, depth, W, k, seeded, grid, starts_nd, converged):
    n_vars, n = W.shape
    first = n_vars - k
    column = np.empty((n_vars, 1))
    stack = np.empty((depth + 1, 1))
    for s in range(n):
        for v in range(n_vars):
            column[v, 0] = W[v, s]
        if k == 1:
            ok = _scan_1d(ops, args, starts, column, first, grid, stack)
        else:
            ok = False
            if seeded:
                ok = _newton(ops, args, starts, column, first, k, stack)
            for g in range(starts_nd.size):
                if ok:
                    break
                for j in range(k):
                    column[first + j, 0] = starts_nd[g]
                ok = _newton(ops, args, starts, column, first, k, stack)
        converged[s] = ok
        for j in range(k):
            W[first + j, s] = column[first + j, 0] if ok else np.nan


@kernel
def _tape(ops, args, starts, t, column, stack):
    run_tape(ops, args, starts[t], starts[t + 1], column, 0, 1, stack)
    return stack[0, 0]


@kernel
def _scan_1d(ops, args, starts, column, u, grid, stack):
    """First accepted root of the 1-D residual along the grid (positive side first)."""
    half = grid.size // 2
    for side in range(2):
        prev_x = 0.0
        prev_f = np.nan
        for i in range(side * half, (side + 1) * half):
            x = grid[i]
            column[u, 0] = x
            f = _tape(ops, args, starts, 0, column, stack)
            if f == 0.0:
                return True
            if np.isfinite(f) and np.isfinite(prev_f) and (f > 0.0) != (prev_f > 0.0):
                if _refine_1d(ops, args, starts, column, u, prev_x, prev_f, x, f, stack):
                    return True
            prev_x = x
            prev_f = f
    return False


@kernel
def _refine_1d(ops, args, starts, column, u, a, fa, b, fb, stack):
    """Safeguarded Newton in the bracket [a, b]; rejects poles (growing residual)."""
    scale = max(abs(fa), abs(fb))
    x = 0.5 * (a + b)
    for _ in range(200):
        column[u, 0] = x
        f = _tape(ops, args, starts, 0, column, stack)
        if not np.isfinite(f):
            x_new = 0.5 * (a + b)
        else:
            if f == 0.0:
                break
            if (f > 0.0) == (fa > 0.0):
                a, fa = x, f
            else:
                b, fb = x, f
            d = _tape(ops, args, starts, 1, column, stack)
            x_new = x - f / d if d != 0.0 and np.isfinite(d) else 0.5 * (a + b)
            if not (min(a, b) < x_new < max(a, b)):
                x_new = 0.5 * (a + b)
        if abs(b - a) <= 4e-16 * max(abs(a), abs(b)) or x_new == x:
            x = x_new
            break
        x = x_new
    column[u, 0] = x
    f = _tape(ops, args, starts, 0, column, stack)
    return np.isfinite(f) and abs(f) <= _ACCEPT_1D * scale


@kernel
def _newton(ops, args, starts, column, first, k, stack):
    """Damped Newton on k unknowns from the values in ``column``."""
    F = np.empty(k)
    J = np.empty((k, k))
    d = np.empty(k)
    x0 = np.empty(k)
    norm = _residuals(ops, args, starts, column, k, stack, F)
    peak = norm
    if not np.isfinite(norm):
        return False
    for _ in range(_MAX_ITER):
        for i in range(k):
            for j in range(k):
                J[i, j] = _tape(ops, args, starts, k + i * k + j, column, stack)
            d[i] = -F[i]
        if not _gauss(J, d, k):
            return False
        for j in range(k):
            x0[j] = column[first + j, 0]
        step = 1.0
        decreased = False
        for _ in range(30):
            for j in range(k):
                column[first + j, 0] = x0[j] + step * d[j]
            trial = _residuals(ops, args, starts, column, k, stack, F)
            if np.isfinite(trial) and trial < norm:
                decreased = True
                break
            step *= 0.5
        if not decreased:  # a minimum of the residual norm that is not a root
            return False
        small = True
        for j in range(k):
            if abs(step * d[j]) > 1e-13 * abs(x0[j]) + 1e-300:
                small = False
        norm = trial
        peak = max(peak, norm)
        if small or norm == 0.0:
            return norm <= _ACCEPT_ND * peak or norm == 0.0
    return False


@kernel
def _residuals(ops, args, starts, column, k, stack, F):
    """Fill F with the residuals; returns their max-norm (NaN if any is not finite)."""
    norm = 0.0
    for i in range(k):
        F[i] = _tape(ops, args, starts, i, column, stack)
        if not np.isfinite(F[i]):
            return np.nan
        norm = max(norm, abs(F[i]))
    return norm


@kernel
def _gauss(A, b, k):
    """Solve A x = b in place (x in b) by partial pivoting; False if singular."""
    for c in range(k):
        p = c
        for r in range(c + 1, k):
            if abs(A[r, c]) > abs(A[p, c]):
                p = r
        if A[p, c] == 0.0 or not np.isfinite(A[p, c]):
            return False
        if p != c:
            for j in range(k):
                A[c, j], A[p, j] = A[p, j], A[c, j]
            b[c], b[p] = b[p], b[c]
        for r in range(c + 1, k):
            m = A[r, c] / A[c, c]
            for j in range(c, k):
                A[r, j] -= m * A[c, j]
            b[r] -= m * b[c]
    for c in range(k - 1, -1, -1):
        s = b[c]
        for j in range(c + 1, k):
            s -= A[c, j] * b[j]
        b[c] = s / A[c, c]
    return True
