"""Bounds on what the solver builds from a submission: the parser bounds each literal
and each equation, these bound what substitution and elimination make of them.

SymEngine's C++ cannot be interrupted, so the solver's time budget is only checked
between its steps; what keeps each step short is that its inputs are bounded:

- a closed form (and a coefficient of a linear block) has at most
  ``Limits.max_solved_nodes`` distinct subexpressions (``distinct_nodes``): what SymEngine
  holds and what every pass of the scorer walks (the tapes, the bounds, the high
  precision, the search for roots and functions work over distinct subexpressions).  A
  chain ``a1 = sin(a0) + cos(a0); a2 = sin(a1) + cos(a1); ...`` doubles its *tree* at
  each step but adds two distinct nodes, and is solved; its text is not written out
  past ``Settings.max_text_nodes`` tree nodes (``fastscore.scoring.task``, the feedback answer);
- the exact numbers and numeric exponents in a closed form are bounded as a literal
  is (``fastscore.text.literals``): a constant built through unknowns (``a = r/r + M/M;
  b = a**1000; c = b**1000``) is rejected like the literal ``2**1000000``;
- a power about to be formed by substituting closed forms into an equation is
  measured first (``power_problem``): SymEngine computes ``(2**1000)**1000`` exactly and
  at once, so it is refused before it is built.

Each check returns the reason (one line) or None; the solver raises it as a
``SolveError``.
"""
from __future__ import annotations

from collections.abc import Callable

import symengine as se

from fastscore.algebra.sizes import count_nodes, subexpressions
from fastscore.support.caches import memoized
from fastscore.text.literals import FLOAT_DIGITS, MAX_RESULT_DIGITS, fraction, number_bounds, power_digits
from fastscore.text.tokens import Limits

__all__ = ["closed_form_problem", "power_problem", "size_problem"]


def size_problem(what: str, expr: se.Basic, limits: Limits) -> str | None:
    """Why ``expr`` is too large to go on with (past ``Limits.max_solved_nodes``
    distinct subexpressions), or None.  Its tree size bounds the distinct count, so a
    tree within the limit is not walked."""
    if count_nodes(expr) <= limits.max_solved_nodes:
        return None
    nodes = distinct_nodes(expr, limits.max_solved_nodes)
    if nodes > limits.max_solved_nodes:
        return (f"{what} grows to more than {limits.max_solved_nodes} distinct subexpressions: "
                "the mechanism's expressions grow too large to solve")
    return None


def distinct_nodes(expr: se.Basic, stop: int) -> int:
    """The number of distinct subexpressions of ``expr`` (each shared one once), counted
    up to ``stop + 1`` at the most."""
    seen, stack = set(), [expr]
    while stack and len(seen) <= stop:
        node = stack.pop()
        if node not in seen:
            seen.add(node)
            stack.extend(node.args)
    return len(seen)


def closed_form_problem(name: str, expr: se.Basic, limits: Limits) -> str | None:
    """Why the closed form ``expr`` of ``name`` is out of bounds (size, numbers,
    exponents, as for a literal), or None."""
    problem = size_problem(f"the closed form of {name}", expr, limits)
    if problem is not None:
        return problem
    digits, exponent = number_bounds(expr)
    if digits > MAX_RESULT_DIGITS or (expr.is_Rational and digits > FLOAT_DIGITS and not _finite(expr)):
        return (f"the closed form of {name} holds a number of about {digits:.0f} digits "
                f"(limit {MAX_RESULT_DIGITS}, beyond the float64 range for a constant), as a literal may not")
    if exponent > limits.max_exponent:
        return f"the closed form of {name} has an exponent of {exponent:.6g}, limit {limits.max_exponent:g}"
    return None


def _finite(number: se.Basic) -> bool:
    p, q = fraction(number)
    try:
        p / q
    except OverflowError:
        return False
    return True


@memoized(1 << 12)
def _powers(expr: se.Basic) -> tuple[se.Basic, ...]:
    """The distinct powers in ``expr`` (an equation side as parsed: bounded by the
    parser's ``Limits``)."""
    return tuple(sorted(subexpressions(expr, se.Pow), key=str))


def power_problem(side: se.Basic, replaced: Callable[[se.Basic], se.Basic], names: frozenset[str] | set[str],
                  names_of: Callable[[se.Basic], frozenset[str]], limits: Limits) -> str | None:
    """Why substituting closed forms (``replaced``, for the names ``names``) into the
    powers of ``side`` would build a number or an exponent past the literal bounds,
    or None: measured on the substituted base and exponent, before the power is formed."""
    for power in _powers(side):
        base, exponent = power.args
        if names_of(power).isdisjoint(names):
            continue
        new_exponent = replaced(exponent) if not names_of(exponent).isdisjoint(names) else exponent
        if not new_exponent.is_Rational:
            continue
        p, q = fraction(new_exponent)
        magnitude = abs(p) / q
        if base != se.E and magnitude > limits.max_exponent:
            return f"the exponent of {power} becomes {_short(new_exponent)}, limit {limits.max_exponent:g}"
        new_base = replaced(base) if not names_of(base).isdisjoint(names) else base
        digits = power_digits(new_base, magnitude)
        if digits > MAX_RESULT_DIGITS:
            return f"{power} becomes a number of about {digits:.0f} digits, limit {MAX_RESULT_DIGITS}"
    return None


def _short(number: se.Basic) -> str:
    text = str(number)
    return text if len(text) <= 24 else f"{text[:10]}...({len(text)} characters)"
