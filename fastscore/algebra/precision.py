"""High-precision re-evaluation of SymEngine expressions.

Float64 can lose every digit through cancellation (``m*c**2*(1/sqrt(1-v**2/c**2)-1)``
at small ``v``) or overflow in an intermediate.  The equivalence check re-evaluates
the points where float64 is unreliable here.  The point's exact float64 values are
substituted as MPFR numbers and SymEngine evaluates the expression in C++ at the
requested precision (its cost: ``bench/results/notes.md``); the rare expression SymEngine cannot reduce to
a number (``atan2``) is walked node by node with mpmath instead.  Expressions come
from our own parser, never from text, and nothing is compiled per formula.
A solved mechanism can share one subexpression in many places (a tree far larger
than its distinct nodes); SymEngine's evaluation walks the tree, so an expression of
more than ``MAX_TREE_NODES`` tree nodes is always walked with mpmath, over its
distinct subexpressions, each once.
A value that is not a finite real number (a complex principal root, a logarithm of a
negative, a division by zero) is NaN, as in the float64 kernels.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Callable, Mapping

import mpmath
import symengine as se

from fastscore.algebra.sizes import count_nodes
from fastscore.support.caches import memoized

MAX_TREE_NODES = 20_000
"""Largest tree evaluated by SymEngine (larger ones: mpmath over distinct nodes)."""
Evaluator = Callable[[Mapping[str, object]], object]
_REAL_NUMBERS = ("RealMPFR", "RealDouble", "Integer", "Rational", "Half", "Zero", "One", "NegativeOne")

_UNARY = {
    "log": mpmath.log, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
    "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan,
    "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh,
    "asinh": mpmath.asinh, "acosh": mpmath.acosh, "atanh": mpmath.atanh,
    "Abs": abs, "sign": mpmath.sign,
}


class NotReal(ArithmeticError):
    """The expression has no finite real value at the point."""


class Precise:
    """An expression ready for high-precision evaluation (see module doc)."""

    def __init__(self, expr: se.Basic):
        self.expr = expr
        self.symbols = {s.name: s for s in expr.free_symbols}
        self._walker: Evaluator | None = None
        self._large = count_nodes(expr) > MAX_TREE_NODES

    def value(self, point: Mapping[str, float], *, digits: int) -> float:
        """The value at ``point``, rounded to float; NaN unless finite and real."""
        result = self.number(point, digits=digits)
        if result is None:
            return self._walk(point, digits)
        value = float(result)
        return value if value == value and abs(value) != float("inf") else float("nan")

    def number(self, point: Mapping[str, float], *, digits: int) -> se.Basic | None:
        """The value at ``point`` as a SymEngine number of ``digits`` digits (not
        rounded to float), or None when SymEngine cannot reduce it to a real number
        (or the tree is too large for SymEngine's evaluation)."""
        if self._large:
            return None
        bits = int(digits * 3.33) + 8
        exact = {symbol: _exact(float(point[name]), bits) for name, symbol in self.symbols.items()}
        try:
            result = self.expr.xreplace(exact)
            if type(result).__name__ not in _REAL_NUMBERS:
                result = result.n(bits, real=True)
        except (RuntimeError, ValueError, TypeError, ArithmeticError):
            return None
        return result if type(result).__name__ in _REAL_NUMBERS else None

    def _walk(self, point: Mapping[str, float], digits: int) -> float:
        if self._walker is None:
            try:
                self._walker = compile_mp_tree(self.expr)
            except NotImplementedError:
                return float("nan")
        with mpmath.workdps(digits):
            env = {name: mpmath.mpf(float(value)) for name, value in point.items()}
            try:
                value = self._walker(env)
            except (NotReal, ZeroDivisionError, ValueError, OverflowError):
                return float("nan")
            if isinstance(value, mpmath.mpc) or not mpmath.isfinite(value):
                return float("nan")
            return float(value)


@memoized(1 << 14)
def _exact(value: float, bits: int) -> se.RealMPFR:
    """The float64 ``value`` exactly, as an MPFR number of ``bits`` bits (cached: the
    same domain points are re-checked for many submissions)."""
    return se.RealMPFR(str(Decimal(value)), bits)


def compile_mp_tree(expr: se.Basic) -> Evaluator:
    """Turn ``expr`` into a function of ``{name: mpf}`` evaluated with mpmath: a
    program over the distinct subexpressions in post-order, each evaluated once."""
    program: list[tuple[Callable, tuple[int, ...]]] = []  # (step, operand positions)
    position: dict[se.Basic, int] = {}
    stack = [(expr, False)]
    while stack:
        node, done = stack.pop()
        if not done:
            if node not in position:
                position[node] = -1  # in progress: every operand is placed before the node
                stack.append((node, True))
                stack.extend((a, False) for a in node.args)
            continue
        args = node.args
        program.append((_step(node, args), tuple(position[a] for a in args)))
        position[node] = len(program) - 1

    def evaluate(env: Mapping[str, object]):
        values = []
        for step, operands in program:
            values.append(step(env, [values[i] for i in operands]))
        return values[-1]
    return evaluate


def _step(node: se.Basic, args: tuple[se.Basic, ...]) -> Callable:
    """The mpmath step of one node: a function of (env, operand values)."""
    kind = type(node).__name__
    if kind == "Symbol":
        name = node.name
        return lambda env, _: env[name]
    if kind in _ATOMS:
        text = str(node)
        return lambda env, _: _ATOMS[kind](text)
    if kind == "Add":
        return lambda env, values: mpmath.fsum(values)
    if kind == "Mul":
        return lambda env, values: mpmath.fprod(values)
    if kind == "Pow":
        if type(args[0]).__name__ == "Exp1":
            return lambda env, values: mpmath.exp(values[1])
        return lambda env, values: _power(*values)
    if kind == "atan2":
        return lambda env, values: mpmath.atan2(*values)
    if kind in _UNARY and len(args) == 1:
        function = _UNARY[kind]
        return lambda env, values: function(values[0])
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
