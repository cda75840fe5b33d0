"""Coupled blocks linear in their unknowns, solved exactly by symbolic elimination.

A block ``r_i(u) = 0`` (``r_i = lhs_i - rhs_i``) is *linear* when every derivative
``dr_i/du_j`` is free of the block's unknowns: then ``r_i = sum_j c_ij u_j - b_i`` with
``c_ij = dr_i/du_j`` and ``b_i = -r_i(u = 0)``, exactly (no expansion is needed to see it:
steady-state balances with expression left-hand sides are typical).

The system ``C u = b`` is solved by Gaussian elimination on SymEngine expressions,
without expanding anything (rational coefficients stay exact; each step is a few
SymEngine operations).  Pivots are taken from homogeneous rows first (balances without
a source term: their back-substitution is a product, not a difference that float64
would lose digits in), then large in their row (threshold partial pivoting), then by the
Markowitz rule (least fill-in, then the smallest coefficient), so the sparse systems of
real mechanisms stay small and well conditioned.  The values
of every coefficient at the sample points are carried along in float64: a pivot must be
finite and clearly non-zero at every point, and an entry that vanishes at every point
is dropped, which is how a singular, dependent or inconsistent block is recognised.
The float64 solution is then checked against the original equations, through their
coefficients' values at the points (`UnsatisfiedEquation` names one that fails).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import symengine as se

from fastscore.algebra.sizes import count_nodes

__all__ = ["LinearBlock", "SingularBlock", "UnsatisfiedEquation", "linear_block", "solve_linear"]

THRESHOLD = 0.1
"""A pivot at least this share of its row's largest entry (at every point) is preferred."""
ZERO_RTOL = 1e-12
"""An entry is zero at a point when it is below this share of the values it was made from."""


@dataclass
class LinearBlock:
    """``sum_j rows[i][u_j] * u_j = rhs[i]`` for every equation ``i``."""

    unknowns: tuple[str, ...]
    rows: list[dict[str, se.Basic]]
    rhs: list[se.Basic]


def linear_block(residuals: Sequence[se.Basic], unknowns: Sequence[str],
                 check: Callable[[], None] | None = None) -> LinearBlock | None:
    """The block as a linear system, or None when some residual is not linear in the
    unknowns; ``check()`` is called after each residual (the solver's time budget)."""
    symbols = {name: se.Symbol(name) for name in unknowns}
    block = set(symbols.values())
    zero = {s: se.Integer(0) for s in block}
    rows, rhs = [], []
    for residual in residuals:
        row = {}
        present = residual.free_symbols & block
        for name, s in symbols.items():
            if s not in present:
                continue
            coefficient = se.diff(residual, s)
            if coefficient.free_symbols & block:
                return None
            if not coefficient.is_zero:
                row[name] = coefficient
        rows.append(row)
        rhs.append(-residual.xreplace(zero))
        if check is not None:
            check()
    return LinearBlock(tuple(unknowns), rows, rhs)


class SingularBlock(ValueError):
    """The linear block has no unique solution; the message says why."""


class UnsatisfiedEquation(SingularBlock):
    """The solution fails equation ``index`` of the block at some point: the block is
    singular on part of the domain (a pivot cancelled to rounding there)."""

    def __init__(self, index: int):
        super().__init__(f"equation {index + 1} of the block fails at some point")
        self.index = index


def solve_linear(block: LinearBlock, values: Callable[[Sequence[se.Basic]], np.ndarray] | None, *,
                 rtol: float = 1e-6, bound: Callable[[se.Basic], None] | None = None,
                 check: Callable[[], None] | None = None,
                 ) -> tuple[dict[str, se.Basic], dict[str, np.ndarray] | None]:
    """Closed forms of the block's unknowns and, with ``values``, their float64 values at
    the points (raises `SingularBlock`, or `UnsatisfiedEquation` when those values fail
    an equation of the block beyond ``rtol``: see `unsatisfied`).

    ``values(exprs)`` gives the values of expressions at the sample points (shape
    ``(len(exprs), n)``), used to choose pivots that are non-zero everywhere; without it
    pivots are chosen on the symbols alone.  ``bound(expr)`` is called on every entry
    the elimination builds, and may raise to stop it (a dense block's entries grow at
    each step: the solver bounds their size), and ``check()`` between the steps of the
    work on its values (the solver's time budget)."""
    check = check or _nothing
    rows = [dict(row) for row in block.rows]
    rhs = list(block.rhs)
    numeric = None if values is None else _initial_values(rows, rhs, values, check)
    original = None if numeric is None else ([dict(row) for row in numeric.coefficients], list(numeric.rhs))
    remaining = set(block.unknowns)
    live = set(range(len(rows)))
    steps = []  # (unknown, pivot row, coefficient row, rhs) in elimination order
    while remaining:
        check()
        pick = _pivot(rows, rhs, live, remaining, numeric, check)
        if pick is None:
            raise SingularBlock(_singular_reason(rows, rhs, live, remaining, numeric))
        p, q = pick
        pivot_row, pivot_rhs = rows[p], rhs[p]
        steps.append((q, dict(pivot_row), pivot_rhs,
                      None if numeric is None else (dict(numeric.coefficients[p]), numeric.rhs[p])))
        live.discard(p)
        remaining.discard(q)
        pivot = pivot_row[q]
        for i in sorted(live):
            if q not in rows[i]:
                continue
            factor = rows[i].pop(q) / pivot
            for j, c in pivot_row.items():
                if j != q:
                    rows[i][j] = rows[i].get(j, se.Integer(0)) - factor * c
            rhs[i] = rhs[i] - factor * pivot_rhs
            if bound is not None:
                for expr in (rhs[i], *rows[i].values()):
                    bound(expr)
            if numeric is not None:
                _update_values(numeric, i, p, q, pivot_row)
            for j in [j for j, c in rows[i].items() if c.is_zero or _vanishes(numeric, i, j)]:
                del rows[i][j]
                _forget(numeric, i, j)
    for i in live:  # equations left over: a square block has none
        raise SingularBlock(f"over-determined linear block: {rhs[i]} = 0 is left")
    solved: dict[str, se.Basic] = {}
    solved_values: dict[str, np.ndarray] | None = None if numeric is None else {}
    for q, row, b, row_values in reversed(steps):
        total = b
        for j, c in row.items():
            if j != q:
                total = total - c * solved[j]
        solved[q] = total / row[q]
        if bound is not None:
            bound(solved[q])
        if row_values is not None:
            coefficients, value = row_values
            with np.errstate(all="ignore"):
                for j, c in coefficients.items():
                    if j != q:
                        value = value - c * solved_values[j]
                solved_values[q] = value / coefficients[q]
    if original is not None:
        failed = unsatisfied(*original, solved_values, rtol)
        if failed is not None:
            raise UnsatisfiedEquation(failed)
    return solved, solved_values


def unsatisfied(coefficients: Sequence[dict[str, np.ndarray]], rhs: Sequence[np.ndarray],
                solution: dict[str, np.ndarray], rtol: float) -> int | None:
    """The first equation ``sum_j c_ij u_j = b_i`` that ``solution`` fails at some point,
    from the values of its coefficients and right-hand side, or None.  An equation holds
    at a point when ``|sum_j c_ij u_j - b_i| <= rtol * max(|c_ij u_j|, |b_i|)`` (judged on
    the scale of its terms, as sides that cancel to zero must be), or when the equation
    itself is not finite there."""
    with np.errstate(all="ignore"):
        for i, (row, b) in enumerate(zip(coefficients, rhs)):
            terms = [c * solution[j] for j, c in row.items()]
            residual = np.sum(terms, axis=0) - b if terms else -b
            scale = np.max(np.abs([*terms, b]), axis=0)
            holds = np.abs(residual) <= rtol * scale
            if not np.all(holds):
                undefined = ~np.isfinite(b)
                for c in row.values():
                    undefined |= ~np.isfinite(c)
                if not np.all(holds | undefined):
                    return i
    return None


# --- numeric companions of the coefficients --------------------------------------------

@dataclass
class _Values:
    """Float64 values of every entry at the points, and the magnitude each was made from."""

    coefficients: list[dict[str, np.ndarray]]
    scales: list[dict[str, np.ndarray]]
    rhs: list[np.ndarray]
    rhs_scales: list[np.ndarray]
    pivots: dict[int, dict[str, tuple[bool, bool]]] = field(default_factory=dict)
    """Per row, per entry: (usable as a pivot, small in its row), until the row is updated."""


def _nothing() -> None:
    pass


def _initial_values(rows, rhs, values, check) -> _Values:
    """The values of the coefficients and right-hand sides, a row at a time (``check()``
    between rows)."""
    coefficients = []
    for row in rows:
        coefficients.append(dict(zip(row, np.asarray(values(list(row.values())), dtype=np.float64))) if row else {})
        check()
    b = list(np.asarray(values(list(rhs)), dtype=np.float64))
    return _Values(coefficients, [{j: np.abs(v) for j, v in row.items()} for row in coefficients],
                   b, [np.abs(v) for v in b])


def _subtract(value, scale, product):
    """``value - product`` and its magnitude (the larger operand, or the previous one)."""
    if value is None:
        return -product, np.abs(product)
    return value - product, np.maximum(scale, np.abs(product))


def _update_values(numeric: _Values, i: int, p: int, q: int, pivot_row) -> None:
    numeric.pivots.pop(i, None)
    coefficients, scales = numeric.coefficients, numeric.scales
    with np.errstate(all="ignore"):
        factor = coefficients[i].pop(q) / coefficients[p][q]
        scales[i].pop(q)
        for j in pivot_row:
            if j != q:
                coefficients[i][j], scales[i][j] = _subtract(coefficients[i].get(j), scales[i].get(j),
                                                             factor * coefficients[p][j])
        numeric.rhs[i], numeric.rhs_scales[i] = _subtract(numeric.rhs[i], numeric.rhs_scales[i],
                                                          factor * numeric.rhs[p])


def _zero(value: np.ndarray, scale: np.ndarray) -> bool:
    """Zero at every point, up to rounding relative to the values it was made from."""
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.abs(value) <= ZERO_RTOL * scale))


def _vanishes(numeric: _Values | None, i: int, j: str) -> bool:
    """Entry (i, j) is zero at every point (cancellation down to rounding): to be dropped."""
    return numeric is not None and _zero(numeric.coefficients[i][j], numeric.scales[i][j])


def _forget(numeric: _Values | None, i: int, j: str) -> None:
    """Drop entry (i, j) from the values too, whichever side found it zero: the values
    must hold exactly the symbolic row's entries (a stale value of an unknown already
    eliminated would be read by the back-substitution before that unknown is solved)."""
    if numeric is not None:
        numeric.coefficients[i].pop(j, None)
        numeric.scales[i].pop(j, None)
        numeric.pivots.pop(i, None)


def _usable(numeric: _Values | None, i: int, j: str) -> bool:
    """A pivot finite and clearly non-zero at every point."""
    if numeric is None:
        return True
    value, scale = numeric.coefficients[i][j], numeric.scales[i][j]
    with np.errstate(invalid="ignore"):
        return bool(np.all(np.isfinite(value)) and np.all(np.abs(value) > ZERO_RTOL * scale))


def _pivot_flags(numeric: _Values, i: int) -> dict[str, tuple[bool, bool]]:
    """(usable, small) of every entry of row ``i`` (`_pivot`), kept until the row changes."""
    flags = numeric.pivots.get(i)
    if flags is None:
        row = numeric.coefficients[i]
        if not row:  # every entry eliminated: the row fixes nothing (`_singular_reason`)
            numeric.pivots[i] = {}
            return {}
        largest = np.max([np.abs(v) for v in row.values()], axis=0)
        flags = numeric.pivots[i] = {j: (_usable(numeric, i, j), not np.all(np.abs(v) >= THRESHOLD * largest))
                                     for j, v in row.items()}
    return flags


def _pivot(rows, rhs, live, remaining, numeric, check=_nothing) -> tuple[int, str] | None:
    """The (row, unknown) usable as a pivot that is homogeneous (zero right-hand side),
    then large in its row (at least ``THRESHOLD`` of the row's largest entry at every
    point: threshold partial pivoting, which keeps the entries from growing), then of
    least fill-in (Markowitz), then of smallest coefficient, then the first in the order the
    equations came in (the author's order gives closed forms closest to the task's own
    formulas, so the most proofs).  Rows with a source term go last, so the closed forms
    are quotients and products rather than differences of similar values (``E_T -
    E_free`` from a conservation law loses digits in float64)."""
    column_count = {u: 0 for u in remaining}
    for i in live:
        for j in rows[i]:
            if j in column_count:
                column_count[j] += 1
    best = None
    for i in sorted(live):
        flags = _pivot_flags(numeric, i) if numeric is not None else None
        check()
        for j in sorted(rows[i]):
            if j not in remaining:
                continue
            usable, small = flags[j] if flags is not None else (True, False)
            if not usable:
                continue
            key = (not rhs[i].is_zero, small, (len(rows[i]) - 1) * (column_count[j] - 1), count_nodes(rows[i][j]), i, j)
            if best is None or key < best[0]:
                best = (key, i, j)
    return None if best is None else best[1:]


def _singular_reason(rows, rhs, live, remaining, numeric) -> str:
    for i in sorted(live):
        if set(rows[i]) & remaining:
            continue
        vanishes = rhs[i].is_zero if numeric is None else _zero(numeric.rhs[i], numeric.rhs_scales[i])
        if not vanishes:
            return f"inconsistent equations: eliminating the unknowns leaves {rhs[i]} = 0"
    names = ", ".join(sorted(remaining)[:8])
    return f"under-determined: dependent equations ({names} not fixed)"
