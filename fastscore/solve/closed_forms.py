"""Closed forms of one unknown from one equation, and the expression utilities they rest on.

``closed_forms(lhs, rhs, x)`` gives the candidate closed forms of ``x`` from
``lhs = rhs``: ``x = expr`` read off directly; polynomials of degree one or two in ``x``
or in a rational power of ``x`` (after clearing denominators); and single-occurrence
inversions through ``+``, ``*``, powers and the functions of ``_INVERSES``.  Several
candidates are several branches: the solver (``fastscore.solve.mechanism``) tells them apart over
its sample points.  Unknowns are found in an expression's free names (``names_of``,
cached), never by walking its tree, and expansions are guarded (``expand``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import symengine as se

from fastscore.algebra.sizes import guarded_expand
from fastscore.support.caches import memoized

__all__ = ["add_args", "closed_forms", "even_root_of", "expand", "has", "names_of"]


@memoized(1 << 16)
def names_of(expr: se.Basic) -> frozenset[str]:
    """Names of the free symbols of ``expr`` (cached)."""
    return frozenset(s.name for s in expr.free_symbols)


def has(expr: se.Basic, x: se.Symbol) -> bool:
    """Whether the symbol ``x`` occurs in ``expr`` (through its free names: no walk of
    the tree, whose shared subexpressions may repeat exponentially often)."""
    return x.name in names_of(expr)


def add_args(expr: se.Basic) -> tuple[se.Basic, ...]:
    """The terms of ``expr`` (itself when it is not a sum)."""
    return expr.args if expr.is_Add else (expr,)


def _mul_args(expr: se.Basic) -> tuple[se.Basic, ...]:
    return expr.args if expr.is_Mul else (expr,)


def _rational(expr: se.Basic) -> Fraction | None:
    if expr.is_Rational:
        p, q = expr.get_num_den()
        return Fraction(int(p), int(q))
    return None


_MAX_EXPANDED_TERMS = 2000


def expand(expr: se.Basic) -> se.Basic:
    """``se.expand(expr)`` unless the expansion would blow up."""
    return guarded_expand(expr, limit=_MAX_EXPANDED_TERMS)


def _numerator(lhs: se.Basic, rhs: se.Basic) -> se.Basic:
    """The expanded numerator of ``lhs - rhs`` (denominators cleared)."""
    return expand((lhs - rhs).as_numer_denom()[0])


def _coefficients(expr: se.Basic, x: se.Symbol) -> tuple[dict[int, se.Basic], int] | None:
    """``expr`` (expanded) as a polynomial in ``t = x**(1/root)``: ({degree: coeff}, root).

    ``None`` when ``x`` occurs other than through rational powers."""
    terms = []
    root = 1
    for term in add_args(expr):
        exponent = Fraction(0)
        rest = []
        for factor in _mul_args(term):
            if factor == x:
                exponent += 1
            elif factor.is_Pow and factor.args[0] == x and (e := _rational(factor.args[1])) is not None:
                exponent += e
            elif has(factor, x):
                return None
            else:
                rest.append(factor)
        if exponent < 0:
            return None
        root = math.lcm(root, exponent.denominator)
        terms.append((exponent, se.Mul(*rest)))
    coeffs: dict[int, se.Basic] = {}
    for exponent, c in terms:
        d = int(exponent * root)
        coeffs[d] = coeffs.get(d, se.Integer(0)) + c
    coeffs = {d: c for d, c in coeffs.items() if not expand(c).is_zero}  # guarded: a huge c is non-zero
    return coeffs, root


def _polynomial_roots(coeffs: dict[int, se.Basic], root: int) -> list[se.Basic] | None:
    """Closed-form roots ``x`` of sum c_d * t**d = 0 with ``t = x**(1/root)``.

    Handles degree one and two in ``s = t**g`` (``g`` = gcd of the degrees); the
    root ``t = 0`` (from cleared denominators) is dropped."""
    low = min(coeffs)
    coeffs = {d - low: c for d, c in coeffs.items()}
    degrees = [d for d in coeffs if d]
    if not degrees:
        return None
    g = math.gcd(*degrees)
    reduced = {d // g: c for d, c in coeffs.items()}
    zero = se.Integer(0)
    if max(reduced) == 1:
        s_values = [-reduced.get(0, zero) / reduced[1]]
    elif max(reduced) == 2:
        a, b, c = reduced[2], reduced.get(1, zero), reduced.get(0, zero)
        if 1 not in reduced:
            r = se.sqrt(-c / a)
            s_values = [r, -r]
        else:
            disc = se.sqrt(b**2 - 4 * a * c)
            s_values = [(-b + disc) / (2 * a), (-b - disc) / (2 * a)]
    else:
        return None
    # s = x**e with e = g / root
    e = Fraction(g, root)
    inverse = se.Rational(e.denominator, e.numerator)
    out = []
    for s in s_values:
        out.append(s**inverse if inverse != 1 else s)
        if e.numerator % 2 == 0:
            out.append(-(s**inverse))
        elif e.numerator > 1 and e.denominator == 1:
            out.append(-((-s) ** inverse))  # real odd root of a negative s
    return out


_INVERSES = {
    "log": lambda r: [se.exp(r)],
    "sin": lambda r: [se.asin(r)],
    "cos": lambda r: [se.acos(r)],
    "tan": lambda r: [se.atan(r)],
    "sinh": lambda r: [se.asinh(r)],
    "cosh": lambda r: [se.acosh(r)],
    "tanh": lambda r: [se.atanh(r)],
    "asin": lambda r: [se.sin(r)],
    "acos": lambda r: [se.cos(r)],
    "atan": lambda r: [se.tan(r)],
    "Abs": lambda r: [r, -r],
}


def _invert(expr: se.Basic, value: se.Basic, x: se.Symbol) -> list[se.Basic] | None:
    """Solve ``expr = value`` for ``x`` when ``x`` sits in one branch at every level."""
    while expr != x:
        if expr.is_Add or expr.is_Mul:
            inside = [a for a in expr.args if has(a, x)]
            if len(inside) != 1:
                return None
            outside = [a for a in expr.args if not has(a, x)]
            if expr.is_Add:
                value = value - se.Add(*outside)
            else:
                value = value / se.Mul(*outside)
            expr = inside[0]
        elif expr.is_Pow:
            base, exponent = expr.args
            if has(exponent, x) and has(base, x):
                return None
            if has(exponent, x):  # base**f(x) = value, exp included (base E)
                expr, value = exponent, se.log(value) / se.log(base)
                continue
            e = _rational(exponent)
            inverse = value ** (1 / exponent)
            if e is not None and e.numerator % 2 == 0:
                return _invert_all(base, [inverse, -inverse], x)
            expr, value = base, inverse
        else:
            name = type(expr).__name__
            if name not in _INVERSES or len(expr.args) != 1:
                return None
            return _invert_all(expr.args[0], _INVERSES[name](value), x)
    return [value]


def _invert_all(expr: se.Basic, values: list[se.Basic], x: se.Symbol) -> list[se.Basic] | None:
    out = []
    for v in values:
        got = _invert(expr, v, x)
        if got is None:
            return None
        out += got
    return out


def even_root_of(expr: se.Basic, x: se.Symbol) -> bool:
    """Whether ``x`` sits under an even root (``sqrt``...): squaring it away may
    bring roots that do not satisfy ``expr = 0``.  Each distinct subexpression is
    visited once (a solved chain shares its subexpressions many times over)."""
    seen, stack = set(), [expr]
    while stack:
        node = stack.pop()
        if node in seen or not has(node, x):
            continue
        seen.add(node)
        if node.is_Pow and (e := _rational(node.args[1])) is not None and e.denominator % 2 == 0:
            return True
        stack.extend(node.args)
    return False


def closed_forms(lhs: se.Basic, rhs: se.Basic, x: se.Symbol) -> list[se.Basic] | None:
    """Candidate closed forms of ``x`` from ``lhs = rhs`` (free of ``x``), or None."""
    if lhs == x and not has(rhs, x):
        return [rhs]
    if rhs == x and not has(lhs, x):
        return [lhs]
    numerator = _numerator(lhs, rhs)
    poly = _coefficients(numerator, x)
    if poly is not None and poly[0]:
        roots = _polynomial_roots(*poly)
        if roots is not None:
            return roots
    for expr in (lhs - rhs, numerator):
        got = _invert(expr, se.Integer(0), x)
        if got is not None:
            return got
    return None
