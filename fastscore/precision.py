"""High-precision re-evaluation of SymEngine expressions with mpmath.

Float64 can lose every digit through cancellation (``m*c**2*(1/sqrt(1-v**2/c**2)-1)``
at small ``v``) or overflow in an intermediate.  The equivalence check re-evaluates
the few points where float64 is unreliable with this evaluator.  Expressions are
walked node by node (they come from our own parser, never from text), so nothing
is compiled per formula.
"""
from __future__ import annotations

from typing import Callable, Mapping

import mpmath
import symengine as se

Evaluator = Callable[[Mapping[str, object]], object]

_UNARY = {
    "log": mpmath.log, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
    "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan,
    "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh,
    "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh,
    "Abs": abs, "sign": mpmath.sign,
}


class NotReal(ArithmeticError):
    """The expression has no finite real value at the point."""


def compile_mp(expr: se.Basic) -> Evaluator:
    """Turn ``expr`` into a function of ``{name: mpf}`` evaluated with mpmath."""
    kind = type(expr).__name__
    if kind == "Symbol":
        name = expr.name
        return lambda env: env[name]
    if kind in _ATOMS:
        text = str(expr)
        return lambda env: _ATOMS[kind](text)
    args = [compile_mp(a) for a in expr.args]
    if kind == "Add":
        return lambda env: mpmath.fsum(f(env) for f in args)
    if kind == "Mul":
        return lambda env: mpmath.fprod(f(env) for f in args)
    if kind == "Pow":
        base, exponent = args
        if type(expr.args[0]).__name__ == "Exp1":
            return lambda env: mpmath.exp(exponent(env))
        return lambda env: _power(base(env), exponent(env))
    if kind == "atan2":
        y, x = args
        return lambda env: mpmath.atan2(y(env), x(env))
    if kind in _UNARY and len(args) == 1:
        function, (inner,) = _UNARY[kind], args
        return lambda env: function(inner(env))
    raise NotImplementedError(f"no high-precision rule for {kind}")


def _rational(text: str):
    p, _, q = text.partition("/")
    return mpmath.mpf(int(p)) / int(q or 1)


# Atomic numbers, rebuilt at the working precision each time they are used.
_ATOMS = {
    "Integer": _rational, "Rational": _rational, "Half": _rational,
    "NegativeOne": _rational, "Zero": _rational, "One": _rational,
    "RealDouble": mpmath.mpf, "RealMPFR": mpmath.mpf,
    "Pi": lambda text: +mpmath.pi, "Exp1": lambda text: +mpmath.e,
}


def _power(base, exponent):
    if base == 0 and exponent < 0:
        raise NotReal("division by zero")
    if base < 0 and not mpmath.isint(exponent):
        raise NotReal("fractional power of a negative number")
    return mpmath.power(base, exponent)


def evaluate_mp(evaluator: Evaluator, point: Mapping[str, float], *, digits: int) -> float:
    """Value of a compiled expression at one point with ``digits`` significant digits,
    rounded to float; NaN where the value is not a finite real number."""
    with mpmath.workdps(digits):
        env = {name: mpmath.mpf(float(value)) for name, value in point.items()}
        try:
            value = evaluator(env)
        except (NotReal, ZeroDivisionError, ValueError, OverflowError):
            return float("nan")
        if isinstance(value, mpmath.mpc) or not mpmath.isfinite(value):
            return float("nan")
        return float(value)
