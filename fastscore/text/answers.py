"""Answer texts -> their parts: a mechanism's equation texts, a probe set's answers, a
MechBench probe reply's one equation, a law's ``target = expr`` or bare ``expr``.

Each format is checked against the ``Limits`` of ``fastscore.text.tokens`` and every error is
a one-line ``ParseError``; the parts are then parsed by ``fastscore.text.parse``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping

import symengine as se

from fastscore.text.functions import CONSTANTS
from fastscore.text.parse import parse_equation, parse_expression, short, symbol
from fastscore.text.tokens import DEFAULT_LIMITS, Limits, ParseError, comment_free_lines, is_name, strip_comments

__all__ = [
    "defined_constants",
    "parse_probe_answers",
    "read_expression",
    "reply_equation",
    "split_equations",
]

_SEPARATORS = re.compile(r"[;\r\n]")


def split_equations(text: str, *, limits: Limits = DEFAULT_LIMITS) -> list[str]:
    """Split a mechanism into equation texts on newlines and ';' (stripped, empties
    dropped); ``#`` starts a comment that runs to the end of its line (MechBench's
    submission format, ``fastscore.text.tokens.strip_comments``).  Only a text that holds
    a ``#`` goes through the stripper, which splits it at every line break
    (``str.splitlines``); a text without one is split at ``\\n``, ``\\r`` and ``;`` only,
    so a rarer line break (``\\u2028``, ``\\x0b``, ...) stays inside its equation."""
    if not isinstance(text, str):
        raise ParseError(f"expected mechanism text, got {type(text).__name__}")
    if len(text) > limits.max_chars * limits.max_equations:
        raise ParseError(f"mechanism is {len(text)} characters long, limit {limits.max_chars * limits.max_equations}")
    if "#" in text:
        text = strip_comments(text)
    parts = [part.strip() for part in _SEPARATORS.split(text)]
    parts = [part for part in parts if part]
    if len(parts) > limits.max_equations:
        raise ParseError(f"{len(parts)} equations, limit {limits.max_equations}")
    return parts


def defined_constants(texts: Iterable[str]) -> tuple[str, ...]:
    """The names of constants (``pi``, ``π``) that a mechanism defines: the whole left
    side of one of its equation ``texts`` (``pi = 3.141592653589793``).  Its equations
    are parsed with these names declared, so that each means the quantity it defines
    (the number written, exact), as a declared name does (``fastscore.text.parse``), and not
    the constant: the law of ``pi = 3.141592653589793; T = 2*pi*r/v`` holds that decimal,
    as MechBench's harness reads it."""
    found = {text.partition("=")[0].strip() for text in texts}
    return tuple(name for name in CONSTANTS if name in found)


def _answer_text(name: object, answer: object) -> tuple[str, str]:
    """Validate one probe answer; numbers (from JSON) become their decimal text."""
    if not isinstance(name, str) or not is_name(name.strip()):
        raise ParseError(f"probe name {name!r} is not a valid name")
    if isinstance(answer, (int, float)) and not isinstance(answer, bool) and math.isfinite(answer):
        answer = repr(answer)
    if not isinstance(answer, str):
        raise _AnswerError(name.strip(), f"answer must be an expression text, got {type(answer).__name__}")
    if not answer.strip():
        raise _AnswerError(name.strip(), "empty answer")
    return name.strip(), answer.strip()


class _AnswerError(ParseError):
    """One probe's answer is unusable (the name is valid)."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"probe '{name}': {reason}")
        self.name = name


def parse_probe_answers(
    value: str | Mapping[str, str] | None, *, limits: Limits = DEFAULT_LIMITS,
    errors: dict[str, str] | None = None,
) -> dict[str, str]:
    """Probe answers -> ``{probe name: expression text}``.

    ``value`` is a mapping, a JSON object text ``{"z": "x**2"}``, or lines
    ``name = expr`` (also ';'-separated).  ``None`` or blank text means no answers.
    Expressions are returned as raw text, to be parsed with ``parse_expression``.
    With ``errors``, an answer that is unusable on its own (empty, not text) is put
    there as ``{name: reason}`` and the other answers stand, as MechBench judges each
    probe on its own; without, it raises like a malformed whole.
    """
    if value is None:
        return {}
    if isinstance(value, str):
        if len(value) > limits.max_chars * limits.max_equations:
            raise ParseError(f"probe answers are {len(value)} characters long, limit {limits.max_chars * limits.max_equations}")
        text = value.strip()
        if not text:
            return {}
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except (json.JSONDecodeError, RecursionError) as error:
                message = error.msg if isinstance(error, json.JSONDecodeError) else "nested too deeply"
                raise ParseError(f"malformed probe answers JSON: {message}") from None
            items = list(value.items())
        else:
            items = []
            for line in split_equations(text, limits=limits):
                name, equals, answer = line.partition("=")
                if not equals:
                    raise ParseError(f"probe answer {short(line)!r} is not of the form 'name = expression'")
                if answer.lstrip().startswith("="):
                    raise ParseError(f"probe answer {short(line)!r}: '==' is not allowed, use a single '='")
                items.append((name, answer))
    elif isinstance(value, Mapping):
        items = list(value.items())
    else:
        raise ParseError(f"probe answers must be text or a mapping, got {type(value).__name__}")
    if len(items) > limits.max_equations:
        raise ParseError(f"{len(items)} probe answers, limit {limits.max_equations}")
    answers: dict[str, str] = {}
    seen: set[str] = set()
    for name, answer in items:
        target = answers
        try:
            name, answer = _answer_text(name, answer)
        except _AnswerError as failure:
            if errors is None:
                raise
            name, answer, target = failure.name, str(failure), errors
        if name in seen:
            raise ParseError(f"probe '{name}' is answered more than once")
        seen.add(name)
        target[name] = answer
    return answers


def reply_equation(text: str, name: str, *, limits: Limits = DEFAULT_LIMITS) -> str:
    """The one equation of a MechBench probe reply (``#`` comments dropped, lines and ``;``
    separate equations), which must be ``name = expression``; anything else raises
    ``ParseError`` (no equation, several, or not an equation)."""
    if not isinstance(text, str):
        raise ParseError(f"expected reply text, got {type(text).__name__}")
    if len(text) > limits.max_chars * limits.max_equations:
        raise ParseError(f"the reply is {len(text)} characters long, limit {limits.max_chars * limits.max_equations}")
    parts = [part.strip() for line in comment_free_lines(text) for part in line.split(";")]
    parts = [part for part in parts if part]
    if not parts:
        raise ParseError(f"the reply holds no equation; expected exactly one '{name} = expression'")
    if len(parts) > 1:
        raise ParseError(f"the reply holds {len(parts)} equations; expected exactly one '{name} = expression'")
    if "=" not in parts[0]:
        raise ParseError(f"the reply {short(parts[0])!r} is not an equation '{name} = expression'")
    return parts[0]


def read_expression(text: str, *, target: str, names, allow_new_names: bool = False,
                    limits: Limits = DEFAULT_LIMITS) -> se.Basic:
    """Parse ``target = expr`` or a bare ``expr``; the left side, if any, must be the target."""
    if "=" in text:
        lhs, rhs = parse_equation(text, names=(*names, target), allow_new_names=allow_new_names, limits=limits)
        if lhs != symbol(target):
            raise ValueError(f"left-hand side must be {target!r}, got {str(lhs)!r}")
        return rhs
    return parse_expression(text, names=names, allow_new_names=allow_new_names, limits=limits)
