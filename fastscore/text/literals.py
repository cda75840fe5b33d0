"""Numeric literals and the finiteness accounting of the parser's constants.

``literal`` reads a number token as the exact Integer or Rational of its decimal text
(``0.1`` is 1/10) within the ``MAX_*`` limits; the other functions measure exact
numbers (their digits, the digits a power of them would have) and decide whether a
constant, or the constant parts SymEngine merged into an expression, is a finite real
float64.  How the parser uses these bounds is described in ``fastscore.text.parse``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import symengine as se

from fastscore.support.caches import memoized

MAX_SIGNIFICANT_DIGITS = 60  # per numeric literal
MAX_DECIMAL_EXPONENT = 400  # |decimal exponent| of a numeric literal
MAX_RESULT_DIGITS = 4000  # decimal digits of a number raised to a number
FLOAT_DIGITS = 308  # an exact number of at most this many digits is finite in float64


@memoized(4096)
def literal(text: str) -> tuple[se.Basic, bool, int, int]:
    """The parsed value ``(number, const, bound, digits)`` of a numeric literal (see
    ``fastscore.text.parse``): its exact Integer or Rational, and a bound on its digits.
    Raises ``ValueError`` past the ``MAX_*`` limits or the float64 range.  Cached; the
    parser reads long texts through ``literal.__wrapped__``."""
    if text.isdigit() and len(text) <= 18:
        return se.Integer(int(text)), True, 1, len(text)
    mantissa, _, exponent_text = text.lower().partition("e")
    if len(exponent_text.lstrip("+-").lstrip("0")) > 6:
        raise ValueError(f"decimal exponent beyond ±{MAX_DECIMAL_EXPONENT}")
    exponent = int(exponent_text) if exponent_text else 0
    whole, _, decimals = mantissa.partition(".")
    digits = (whole + decimals).lstrip("0")
    if not digits:
        return se.Integer(0), True, 1, 1
    if len(digits.rstrip("0")) > MAX_SIGNIFICANT_DIGITS:
        raise ValueError(f"more than {MAX_SIGNIFICANT_DIGITS} significant digits")
    # decimal exponent of the leading digit: digits has len(whole+decimals) - len(digits) leading zeros
    leading = len(whole) - 1 - (len(whole) + len(decimals) - len(digits)) + exponent
    if abs(leading) > MAX_DECIMAL_EXPONENT:
        raise ValueError(f"decimal exponent beyond ±{MAX_DECIMAL_EXPONENT}")
    if leading >= FLOAT_DIGITS and not _float_range(int(digits) * 10 ** (leading + 1 - len(digits))):
        raise ValueError("beyond the float64 range (about 1.8e308)")
    scale = exponent - len(decimals)
    if scale >= 0:
        return se.Integer(int(digits) * 10**scale), True, 1, len(digits) + scale
    return se.Rational(int(digits), 10**-scale), True, 1, max(len(digits), 1 - scale)


def _float_range(p: int, q: int = 1) -> bool:
    """Whether ``p/q`` rounds to a finite float64."""
    try:
        p / q
    except OverflowError:
        return False
    return True


@memoized(1024)
def fraction(number: se.Basic) -> tuple[int, int]:
    """Numerator and denominator of an exact Integer/Rational (cached: exponents recur)."""
    if isinstance(number, se.Integer):
        return int(number), 1
    return int(number.p), int(number.q)


def exceeds(p: int, q: int, limit: float) -> bool:
    """|p/q| > limit, exactly and without float overflow."""
    if q == 1:
        return abs(p) > limit
    if float(limit).is_integer():  # exact in integers (q > 0)
        return abs(p) > int(limit) * q
    return Fraction(abs(p), q) > limit


def _digits(number: se.Basic) -> float:
    """Size of a Rational in decimal digits: log10 of the larger of |numerator| and denominator."""
    if number.is_zero:
        return 0.0
    p, q = fraction(number)
    return max(math.log10(abs(p)), math.log10(q))


def power_digits(expr: se.Basic, magnitude: float) -> float:
    """Digits of the exact numbers SymEngine computes when raising ``expr`` to ``magnitude``.

    SymEngine raises a number, a product's numeric factors and a power of a number
    exactly: ``(1e400*x)**1000`` holds 10**400000.
    """
    digits = 0.0
    for factor in expr.args if expr.is_Mul else (expr,):
        scale = magnitude
        if factor.is_Pow:
            factor, exponent = factor.args
            if not exponent.is_Rational:
                continue
            p, q = fraction(exponent)
            scale *= abs(p) / q
        if factor.is_Rational:
            digits += _digits(factor) * scale
    return digits


def max_digits(expr: se.Basic) -> float:
    """Digits of the largest exact number anywhere in ``expr``."""
    largest = 0.0
    stack = [expr]
    while stack:
        node = stack.pop()
        if node.is_Rational:
            largest = max(largest, _digits(node))
        else:
            stack.extend(node.args)
    return largest


@memoized(4096)
def finite_real(expr: se.Basic) -> bool:
    """Whether a constant expression evaluates to a finite real float64 (cached: the
    same constants, ``2*pi``, recur).

    Evaluation is in double precision only: arbitrary precision could be made to
    work for minutes (``sin(exp(exp(exp(3))))``), and scoring is in float64 anyway.
    """
    if expr.is_Rational:
        return _float_range(*fraction(expr))
    try:
        return math.isfinite(float(expr.n(53, real=True)))
    except (RuntimeError, ValueError, TypeError, OverflowError):  # e.g. I, zoo, nan: "Not Implemented"
        return False


@memoized(4096)
def log_magnitude(expr: se.Basic) -> float:
    """``|log10 |value||`` of a finite, real, non-rational constant (inf for 0.0)."""
    value = abs(float(expr.n(53, real=True)))
    return abs(math.log10(value)) if value else math.inf


def finite_parts(expr: se.Basic) -> bool:
    """Whether the constants SymEngine merged into ``expr`` are finite in float64: the
    constant factors of a product (of each term of a sum) and the constant terms."""
    constant_terms = []
    for term in expr.args if expr.is_Add else (expr,):
        factors = term.args if term.is_Mul else (term,)
        constants = [f for f in factors if f.is_Number or not (f.is_Symbol or f.free_symbols)]
        if len(constants) == len(factors):
            constant_terms.append(term)
        elif constants and not finite_real(se.Mul(*constants)):
            return False
    return not constant_terms or finite_real(se.Add(*constant_terms))



@memoized(1 << 15)
def number_bounds(expr: se.Basic) -> tuple[float, float]:
    """(digits of the largest exact number, largest |numeric exponent| of a power other
    than ``exp``) anywhere in ``expr``: the quantities the parser bounds in a literal
    (``MAX_RESULT_DIGITS``, ``Limits.max_exponent``), for an expression the solver built.
    Memoised per subexpression, so the work is linear in the distinct ones (a shared
    subexpression is not walked again); a tree nested too deep for that is walked over
    its distinct subexpressions at once."""
    if expr.is_Rational:
        return _digits(expr), 0.0
    args = expr.args
    if not args:
        return 0.0, 0.0
    try:
        bounds = [number_bounds(a) for a in args]
    except RecursionError:
        return _bounds_of_distinct(expr)
    digits = max(b[0] for b in bounds)
    exponent = max(b[1] for b in bounds)
    if expr.is_Pow and args[1].is_Rational and args[0] != se.E:
        p, q = fraction(args[1])
        exponent = max(exponent, abs(p) / q)
    return digits, exponent


def _bounds_of_distinct(expr: se.Basic) -> tuple[float, float]:
    digits = exponent = 0.0
    seen, stack = set(), [expr]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.is_Rational:
            digits = max(digits, _digits(node))
        elif node.is_Pow and node.args[1].is_Rational and node.args[0] != se.E:
            p, q = fraction(node.args[1])
            exponent = max(exponent, abs(p) / q)
        stack.extend(node.args)
    return digits, exponent
