"""The parser's checks and its error messages (``fastscore.text.parse``).

``_Checks`` is the part of the parser that rejects: every ``ParseError`` it builds is
one human-readable line with the 1-based column of the offending token (columns are
computed only here, for an error), and its checks keep non-finite and oversized
constants out of the result (``_check_merged``, ``_measured_digits``) and powers past
the exponent limit once SymEngine has folded them (``_audit_exponents``).  It is a base
class without state of its own: the parser's slots (``text``, ``tokens``, ``offset``,
``limits``, ``magnitude``) are what it reads, and the grammar in ``fastscore.text.parse``
calls it only on error paths or when a bound says a check is due, never per token.
``_make_room`` lets Python recurse as deep as the nesting limit needs.
"""

from __future__ import annotations

import sys

import symengine as se

from fastscore.text.literals import (
    FLOAT_DIGITS,
    MAX_RESULT_DIGITS,
    exceeds,
    finite_parts,
    finite_real,
    fraction,
    max_digits,
)
from fastscore.text.tokens import END, OPERATORS, ParseError, columns

__all__ = ["short"]


def short(expr: se.Basic, width: int = 40) -> str:
    """``str(expr)`` cut to ``width`` characters (for error messages)."""
    text = str(expr)
    return text if len(text) <= width else text[: width - 3] + "..."


class _Checks:
    """The error messages and checks of ``_Parser`` (module doc)."""

    __slots__ = ()

    def _column(self, at: int) -> int:
        """1-based column of token ``at``."""
        return columns(self.text)[self.offset + at]

    def _too_deep(self, at: int) -> ParseError:
        column = self._column(at)
        return ParseError(f"nesting deeper than {self.limits.max_depth} at column {column}", column)

    def _unexpected(self, at: int) -> ParseError:
        token, column = self.tokens[at], self._column(at)
        if token == END:
            return ParseError(f"expression ends unexpectedly at column {column}", column)
        if token not in OPERATORS:
            return ParseError(f"missing operator before '{token}' at column {column}", column)
        if token == "==":
            return ParseError(f"'==' is not allowed (column {column}); an equation uses a single '='", column)
        if token == "=":
            return ParseError(f"'=' is not allowed in an expression (column {column})", column)
        if token == ")":
            return ParseError(f"unmatched ')' at column {column}", column)
        if token == ",":
            return ParseError(f"unexpected ',' at column {column} (commas only separate function arguments)", column)
        return ParseError(f"unexpected '{token}' at column {column}", column)

    def _unclosed(self, opening: int) -> ParseError:
        """The error when a parenthesised part is followed by something other than ')'."""
        if self.tokens[self.pos] == END:
            column = self._column(opening)
            return ParseError(f"missing ')' for '(' at column {column}", column)
        return self._unexpected(self.pos)

    def _bad_number(self, token: str, at: int, error: ValueError) -> ParseError:
        shown = token if len(token) <= 30 else token[:27] + "..."
        column = self._column(at)
        return ParseError(f"number '{shown}' at column {column}: {error}", column)

    def _not_real(self, what: str, at: int) -> ParseError:
        column = self._column(at)
        return ParseError(f"{what} at column {column} is not a finite real number (in float64)", column)

    def _check_merged(self, expr: se.Basic, const: bool, bound: float, digits: float, at: int) -> None:
        """Reject a constant result, or constant parts merged into a result with free
        symbols, that are not finite in float64 (see ``fastscore.text.parse``).  Called only for a
        constant result, or when a constant call or power was built (``magnitude``) or
        an exact number may exceed float64."""
        if const:
            if not finite_real(expr):
                raise self._not_real(f"constant {short(expr, 30)}", at)
        elif (self.magnitude * bound > FLOAT_DIGITS or digits > FLOAT_DIGITS) and not finite_parts(expr):
            raise self._not_real(f"a constant part of {short(expr, 30)}", at)

    def _measured_digits(self, expr: se.Basic, at: int) -> float:
        """Digits of ``expr``'s largest exact number, when its bound exceeded the limit."""
        digits = max_digits(expr)
        if digits > MAX_RESULT_DIGITS:
            column = self._column(at)
            raise ParseError(
                f"number at column {column} has about {digits:.0f} digits, limit {MAX_RESULT_DIGITS}", column
            )
        return digits

    def _audit_exponents(self, expr: se.Basic) -> None:
        """Reject any power whose numeric exponent exceeds the limit after folding."""
        limit = self.limits.max_exponent
        stack = [expr]
        while stack:
            node = stack.pop()
            if node.is_Pow:
                base, exponent = node.args
                if exponent.is_Rational and base != se.E and exceeds(*fraction(exponent), limit):
                    raise ParseError(f"exponent {short(exponent, 20)} in {short(node)} exceeds limit {limit:g}")
            stack.extend(node.args)


MAX_RECURSION = 4000
"""The most Python frames ``_make_room`` allows (deeper text is a ParseError)."""


def _make_room(depth: int) -> None:
    """Let Python recurse deep enough for ``depth`` nesting levels (a call takes four
    frames of this parser a level; the compiler and the proofs walk the tree too)."""
    need = min(6 * depth + 1000, MAX_RECURSION)
    if sys.getrecursionlimit() < need:
        sys.setrecursionlimit(need)
