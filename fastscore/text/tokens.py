"""Untrusted text -> tokens, and what every reader of submission text shares: the
``Limits`` on the work one submission can cause, the one-line ``ParseError`` and the
``#`` comments of MechBench's submission format (``comment_free_lines``,
``strip_comments``).

A token is its text; the END token is ``""``.  Whitespace separates tokens and is
skipped.  The tokens are operators (``^`` is power, like ``**``), names (ASCII
letters, digits and ``_`` plus Unicode letters, not starting with a digit), numbers,
and any other single character, which is an error.  Tokens are plain texts from one
regex pass; their columns are recomputed only for an error message (``columns``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    """Bounds on the work one submission can cause."""

    max_chars: int = 10_000  # characters per expression, and per side of an equation
    max_nodes: int = 1000  # AST nodes (numbers, names, operators, calls), likewise
    max_depth: int = 400  # nesting: parentheses, calls, unary signs, power exponents
    max_exponent: float = 1000  # |numeric exponent| allowed in a**b
    max_equations: int = 100  # equations per mechanism (and answers per probe set)
    max_solved_nodes: int = 200_000  # distinct subexpressions of a closed form the solver builds (or a linear block's coefficient)


DEFAULT_LIMITS = Limits()


class ParseError(ValueError):
    """Text that is not a valid expression; ``str(error)`` is one human-readable line.

    ``column`` is the 1-based column of the offending text, when meaningful.
    """

    def __init__(self, message: str, column: int | None = None):
        super().__init__(message)
        self.column = column


def comment_free_lines(text: str) -> list[str]:
    """The lines of ``text`` (``str.splitlines``: ``\\n``, ``\\r``, ``\\r\\n`` and the other
    Unicode line breaks) each cut at its first ``#``: a comment runs to the end of its
    line, wherever the ``#`` stands (no quoting: the grammar has no strings).  Lines are
    not stripped and empty ones are kept.  The one rule for MechBench's comments: every
    reader of a submission, a probe reply or a feedback request goes through it
    (``fastscore.text.answers``, ``fastscore.sweeps.mechbench_runs``,
    ``fastscore.service.feedback``)."""
    return [line.split("#", 1)[0] for line in text.splitlines()]


def strip_comments(text: str) -> str:
    """``text`` without its ``#`` comments: `comment_free_lines` joined by ``\\n`` (so every
    line break becomes ``\\n``, and a final line break is dropped)."""
    return "\n".join(comment_free_lines(text))


_NAME_PATTERN = r"[^\W\d]\w*"
_NUMBER_PATTERN = r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_TOKEN_RE = re.compile(rf"\*\*|==|[-+*/^(),=]|{_NAME_PATTERN}|{_NUMBER_PATTERN}|\S")
# The same tokens for ASCII text, faster: names are [A-Za-z_][A-Za-z0-9_]* there.
_ASCII_TOKEN_RE = re.compile(rf"\*\*|==|[-+*/^(),=]|[A-Za-z_][A-Za-z0-9_]*|{_NUMBER_PATTERN}|\S")
_NAME_RE = re.compile(_NAME_PATTERN)
OPERATORS = frozenset(("**", "==", "-", "+", "*", "/", "^", "(", ")", ",", "="))
# In ASCII text, the tokens that are errors: characters that no operator, name or
# number contains, and '.' on its own.
_STRAY_ASCII = frozenset(c for c in map(chr, range(128)) if not re.fullmatch(r"[\s\w*=+\-/^(),]", c))
END = ""
DIGITS = frozenset("0123456789.")  # first characters of numbers
_NAME_EXTRA = frozenset("0123456789_")
_NOT_NODES = frozenset("(),=")  # tokens that are no AST node


def _bad_name_char(name: str) -> int:
    """Index of the first character not allowed in a name, or -1."""
    if name.isascii():
        return -1
    for index, char in enumerate(name):
        if not (char.isalpha() or char in _NAME_EXTRA):
            return index
    return -1


def is_name(text: str) -> bool:
    """Whether ``text`` is a valid name (see the module doc)."""
    return _NAME_RE.fullmatch(text) is not None and _bad_name_char(text) < 0


def _check_characters(text: str) -> None:
    """Raise at the first character that is no part of a valid token."""
    for match in _TOKEN_RE.finditer(text):
        token, column = match.group(), match.start() + 1
        if token in OPERATORS or token[0] in DIGITS and token != ".":
            continue
        if _NAME_RE.fullmatch(token):
            bad_at = _bad_name_char(token)
            if bad_at < 0:
                continue
            token, column = token[bad_at], column + bad_at
        raise ParseError(f"unexpected character {token!r} at column {column}", column)


def columns(text: str) -> list[int]:
    """1-based column of each token of ``text``, then of its END (only for error messages)."""
    return [match.start() + 1 for match in _TOKEN_RE.finditer(text)] + [len(text) + 1]


def tokenize(text: object, limits: Limits, *, equation: bool = False) -> list[str]:
    """Token texts ending with END; enforces the character, text and node limits.

    For an ``equation`` the character and node limits hold for each side of its one
    ``=`` (as MechBench's harness checks each side), so a whole equation may be twice
    as large as one expression."""
    if not isinstance(text, str):
        raise ParseError(f"expected expression text, got {type(text).__name__}")
    if len(text) > 2 * (1 + equation) * limits.max_chars:  # before any work, whitespace and all
        raise ParseError(f"text is {len(text)} characters long, limit {limits.max_chars} a side")
    sides = text.split("=") if equation and text.count("=") == 1 else [text]
    for side in sides:
        if len(side.strip()) > limits.max_chars:
            what = "a side of the equation" if len(sides) > 1 else "expression"
            raise ParseError(f"{what} is {len(side.strip())} characters long, limit {limits.max_chars}")
    if text.isascii():
        tokens = _ASCII_TOKEN_RE.findall(text)
        valid = _STRAY_ASCII.isdisjoint(tokens)
    else:  # a non-ASCII token is a name or an error
        tokens = _TOKEN_RE.findall(text)
        valid = _STRAY_ASCII.isdisjoint(tokens) and all(is_name(token) for token in tokens if not token.isascii())
    if not valid:
        _check_characters(text)
    if not tokens:
        raise ParseError("empty expression")
    if len(tokens) > limits.max_nodes:
        at = tokens.index("=") if len(sides) > 1 and "=" in tokens else len(tokens)
        for part in (tokens[:at], tokens[at + 1 :]):
            # '(', ')', ',' and '=' occur only as tokens here, and are not AST nodes
            nodes = sum(1 for token in part if token not in _NOT_NODES)
            if nodes > limits.max_nodes:
                what = "a side of the equation" if len(sides) > 1 else "expression"
                raise ParseError(f"{what} has {nodes} nodes, limit {limits.max_nodes}")
    tokens.append(END)
    return tokens
