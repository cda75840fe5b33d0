"""A problem's own formula evaluated in written order, the way MDBench evaluates it.

MDBench 0.7 computes the target of its synthetic data by evaluating the law's text as a
Python expression over NumPy arrays: operators in Python's precedence and associativity
(``a*b*c`` is ``(a*b)*c``; ``-x**2`` is ``-(x**2)``), arithmetic among literal numbers
done first in Python (``2*3*x`` is ``6*x``), ``x**2``, ``x**3``, ``x**0.5`` and
``x**-1`` as ``x**2``, ``x**3``, ``sqrt(x)`` and ``1/x``, and each function as its NumPy
ufunc.  fastscore's parser builds canonical SymEngine expressions, whose evaluation can
differ from that order in the last bit; this module evaluates the text itself, so the
data splits hold MDBench's target values bit for bit (``fastscore.scoring.reference``).

Only for problem files (trusted text, already checked by ``fastscore.text.parse``): the
grammar is that of ``fastscore.text.parse``; a formula using anything else (a name outside
the given values, a function without a NumPy counterpart here) gives ``None``, and the
caller falls back to its own evaluation.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from fastscore.text.tokens import DEFAULT_LIMITS, DIGITS, END, ParseError, is_name, tokenize

__all__ = ["written_values"]

_FUNCTIONS = {
    "sqrt": np.sqrt, "exp": np.exp, "log": np.log, "sin": np.sin, "cos": np.cos, "tan": np.tan,
    "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan, "sinh": np.sinh, "cosh": np.cosh,
    "tanh": np.tanh, "abs": np.abs,
}


class _Unsupported(Exception):
    pass


def _literal(value) -> bool:
    """A Python number (a literal, or arithmetic among literals); anything else,
    a NumPy scalar included, is evaluated by NumPy, as MDBench's symbol tree is."""
    return type(value) in (int, float)


class _Evaluator:
    """Recursive descent over the tokens; Python numbers stay Python numbers until they
    meet an array (as literals do in a Python expression), then become 0-d arrays."""

    def __init__(self, tokens: list[str], values: Mapping[str, object]):
        self.tokens, self.values, self.at = tokens, values, 0

    def peek(self) -> str:
        return self.tokens[self.at]

    def take(self) -> str:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expect(self, token: str) -> None:
        if self.take() != token:
            raise _Unsupported

    def sum(self):
        value = self.product()
        while self.peek() in ("+", "-"):
            operator, right = self.take(), self.product()
            value = _binary(operator, value, right)
        return value

    def product(self):
        value = self.unary()
        while self.peek() in ("*", "/"):
            operator, right = self.take(), self.unary()
            value = _binary(operator, value, right)
        return value

    def unary(self):
        if self.peek() in ("+", "-"):
            operator, value = self.take(), self.unary()
            return value if operator == "+" else -value
        value = self.atom()
        if self.peek() in ("**", "^"):
            self.take()
            value = _power(value, self.unary())
        return value

    def atom(self):
        token = self.take()
        if token == "(":
            value = self.sum()
            self.expect(")")
            return value
        if token[:1] in DIGITS and token != ".":
            return int(token) if token.isdigit() else float(token)
        if not is_name(token):
            raise _Unsupported
        if self.peek() == "(":
            self.take()
            if token not in _FUNCTIONS:
                raise _Unsupported
            argument = self.sum()
            self.expect(")")
            return _FUNCTIONS[token](np.asarray(argument))
        if token not in self.values:
            raise _Unsupported
        return np.asarray(self.values[token])


def _binary(operator: str, left, right):
    if _literal(left) and _literal(right):  # folded by Python
        return {"+": left + right, "-": left - right, "*": left * right, "/": left / right}[operator]
    left, right = np.asarray(left), np.asarray(right)
    if operator == "+":
        return left + right
    if operator == "-":
        return left - right
    if operator == "*":
        return left * right
    return left / (right + 0.0 * (right == 0))  # MDBench's division (its epsilon is 0)


def _power(base, exponent):
    if _literal(base) and _literal(exponent):
        return base ** exponent
    if _literal(exponent):
        if exponent == 2.0:
            return base ** 2
        if exponent == 3.0:
            return base ** 3
        if exponent == 0.5:
            return np.sqrt(base)
        if exponent == -1.0:
            return 1 / (base + 0.0 * (base == 0))
    return np.asarray(base) ** np.asarray(exponent)


def written_values(text: str, values: Mapping[str, object]) -> np.ndarray | None:
    """The value of ``text`` (an expression, or ``name = expression``: the right side)
    over ``values`` in MDBench's written order, or None when the text uses a name
    not in ``values`` or a function this module does not evaluate."""
    _, equals, right = text.partition("=")
    try:
        tokens = tokenize(right if equals else text, DEFAULT_LIMITS)
        evaluator = _Evaluator(tokens, values)
        with np.errstate(all="ignore"):
            result = evaluator.sum()
        if evaluator.peek() != END:
            return None
    except (_Unsupported, ParseError, ZeroDivisionError, OverflowError, RecursionError):
        return None
    return np.asarray(result, dtype=np.float64) if not np.iscomplexobj(result) else None
