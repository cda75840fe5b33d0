"""The float64 values that tapes push for constants (``fastscore.tapes.compile``).

Every subexpression without free symbols is folded to one float64 constant, evaluated
by SymEngine at 80 bits, so ``log(2)``, ``pi**2`` or ``sqrt(3)/2`` cost nothing at run
time (``atan2``, which SymEngine cannot evaluate in multi-precision, in double); a
constant that is not real (e.g. ``asin(3)``) becomes NaN.  Exact integers and rationals
are correctly rounded from their Python integers (and kept as float64 numerator and
denominator where a coefficient is emitted as ``p * ... / q``).  Values recur across
tapes and are memoised.  ``UnsupportedExpression`` is the compiler's error, raised here
first for a constant SymEngine cannot evaluate (``oo``, ``zoo``, ``nan``).
"""

from __future__ import annotations

import symengine as se

from fastscore.support.caches import memoized

__all__ = ["UnsupportedExpression", "constant_value"]

_CONSTANT_BITS = 80
_THIRD = se.Rational(1, 3)
_THIRD_VALUE = 1 / 3


class UnsupportedExpression(ValueError):
    """The expression holds a node (or a free symbol) that tapes cannot evaluate."""


def constant_value(expr: se.Basic) -> float:
    """Float64 value of an expression without free symbols, as a tape pushes it (NaN
    when not real; raises UnsupportedExpression for ``oo``, ``zoo``, ``nan``)."""
    return _constant_value(expr)


def _constant_value(expr: se.Basic) -> float:
    """Float64 value of an expression without free symbols (NaN when not real)."""
    value = _KIND_VALUES.get(type(expr))
    if value is not None:
        return value
    if expr.is_Rational:
        return _rational_value(expr)
    return _evaluated(expr, str(expr))


@memoized(8192)
def _evaluated(expr: se.Basic, text: str) -> float:
    """``_constant_value`` of a non-rational constant (cached: ``pi``, ``sqrt(2)`` or
    ``(1/4)*4**(3/4)`` recur).  ``text`` is ``str(expr)``: it keeps apart expressions
    SymEngine deems equal but which differ in a signed zero, like ``atan2(0.0, -1)``
    and ``atan2(-0.0, -1)``."""
    try:
        value = complex(expr.n(_CONSTANT_BITS))
    except RuntimeError:  # no multi-precision evaluation (atan2): plain double
        try:
            return float(expr)
        except RuntimeError as error:  # oo, zoo, nan: SymEngine cannot evaluate them
            raise UnsupportedExpression(
                f"cannot evaluate constant {type(expr).__name__} {expr}"
            ) from error
    return value.real if value.imag == 0.0 else float("nan")


@memoized(8192)
def _rational_value(number: se.Basic) -> float:
    """Float64 value of an exact Integer or Rational (cached: exact numbers recur)."""
    return _ratio(*number.get_num_den())


def _rational_parts(number: se.Basic) -> tuple[float, float]:
    """Float64 numerator and denominator of an exact Integer or Rational."""
    if type(number) in _INTEGER_KINDS:
        return _constant_value(number), 1.0
    return _fraction_parts(number)


@memoized(8192)
def _fraction_parts(number: se.Basic) -> tuple[float, float]:
    """``_rational_parts`` of a Rational (cached: coefficients recur)."""
    num, den = number.get_num_den()
    return _ratio(num), _ratio(den)


def _ratio(num: int, den: int = 1) -> float:
    """Correctly rounded ``num / den`` of Python integers; ±inf when out of range."""
    try:
        return int(num) / int(den)
    except OverflowError:
        return float("inf") if (num > 0) == (den > 0) else float("-inf")


def _is_negative(number: se.Basic) -> bool:
    """``_constant_value(number) < 0`` for a number, without evaluating an Integer
    (exact sign) nor a non-negative Rational (a negative one may round to -0.0)."""
    kind = type(number)
    if kind in _INTEGER_KINDS:
        return number.is_negative
    if kind in _RATIONAL_KINDS and not number.is_negative:
        return False
    return _constant_value(number) < 0


def _is_third(exponent: se.Basic, value: float) -> bool:
    """Whether the exponent (of float64 value ``value``) is exactly ``±1/3``."""
    return abs(value) == _THIRD_VALUE and (exponent == _THIRD or exponent == -_THIRD)


_INTEGER_KINDS = frozenset(type(se.Integer(n)) for n in (2, 1, 0, -1))
_RATIONAL_KINDS = frozenset(type(number) for number in (se.Rational(1, 3), se.Rational(1, 2)))
_KIND_VALUES = {
    type(number): _rational_value(number) if number.is_Rational else _evaluated(number, str(number))
    for number in (se.Integer(0), se.Integer(1), se.Integer(-1), se.Rational(1, 2), se.pi, se.E)
}
"""Float64 value of each SymEngine class that has a single instance (``One``, ``Pi`` ...)."""
