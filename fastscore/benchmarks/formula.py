"""Chemical formulas -> compositions: a small documented parser (no pymatgen).

Grammar: a formula is a sequence of groups; a group is an element symbol (one of
the 118, ``Fe``) or a parenthesised formula (``(SO4)``, ``[...]`` too), each
followed by an optional count (an integer or decimal, ``2``, ``0.5``; default 1).
Blanks are ignored; hydrate dots (``·``, ``*``) and charges are not accepted.
A malformed formula raises ``FormulaError`` with the reason.  ``reduced`` is the
composition's identity: each element's share of the atoms, so ``Fe2O3`` and
``Fe4O6`` are one reduced composition.  ``composition_of`` reads a composition given as
an element -> amount map (a Materials Project record's ``composition``) with the same
checks."""
from __future__ import annotations

import re

ELEMENTS = frozenset("""H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge
As Se Br Kr Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm
Yb Lu Hf Ta W Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg
Bh Hs Mt Ds Rg Cn Nh Fl Mc Lv Ts Og""".split())
MAX_LENGTH = 200
MAX_DEPTH = 8
_TOKEN = re.compile(r"([A-Z][a-z]?)|([(\[])|([)\]])|(\d+(?:\.\d+)?|\.\d+)|(\s+)")
_CLOSE = {"(": ")", "[": "]"}


class FormulaError(ValueError):
    """A formula that does not parse; the message says why."""


def parse_formula(text) -> dict[str, float]:
    """Element -> count (summed over groups); raises ``FormulaError``."""
    if not isinstance(text, str) or not text.strip():
        raise FormulaError("no formula")
    if len(text) > MAX_LENGTH:
        raise FormulaError(f"formula longer than {MAX_LENGTH} characters")
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise FormulaError(f"unexpected {text[position]!r} at {position + 1} in {text!r}")
        position = match.end()
        if match.group(5) is None:
            tokens.append((match.lastindex, match.group(match.lastindex)))
    stack: list[tuple[str, dict]] = [("", {})]
    last: dict | None = None  # the group a count applies to
    for kind, value in tokens:
        if kind == 1:
            if value not in ELEMENTS:
                raise FormulaError(f"{value!r} is not an element symbol in {text!r}")
            last = {value: 1.0}
            _merge(stack[-1][1], last)
        elif kind == 2:
            if len(stack) > MAX_DEPTH:
                raise FormulaError(f"parentheses nested deeper than {MAX_DEPTH} in {text!r}")
            stack.append((value, {}))
            last = None
        elif kind == 3:
            opened, group = stack.pop() if len(stack) > 1 else (None, None)
            if opened is None or _CLOSE[opened] != value:
                raise FormulaError(f"unbalanced {value!r} in {text!r}")
            if not group:
                raise FormulaError(f"empty parentheses in {text!r}")
            last = dict(group)
            _merge(stack[-1][1], last)
        else:
            count = float(value)
            if last is None:
                raise FormulaError(f"count {value} follows no element or group in {text!r}")
            if count <= 0:
                raise FormulaError(f"count {value} is not positive in {text!r}")
            _merge(stack[-1][1], {element: n * (count - 1) for element, n in last.items()})
            last = None
    if len(stack) > 1:
        raise FormulaError(f"unclosed {stack[-1][0]!r} in {text!r}")
    if not stack[0][1]:
        raise FormulaError(f"no element in {text!r}")
    return stack[0][1]


def _merge(into: dict, counts: dict) -> None:
    for element, n in counts.items():
        into[element] = into.get(element, 0.0) + n


def reduced(composition: dict[str, float]) -> tuple[tuple[str, float], ...]:
    """The reduced composition: (element, share of the atoms rounded to 1e-9), sorted."""
    total = sum(composition.values())
    return tuple(sorted((element, round(n / total, 9)) for element, n in composition.items()))


def composition_of(value) -> dict[str, float]:
    """A composition given as a formula text (``parse_formula``) or an element -> amount
    map (``{"Fe": 2, "O": 3}``: known symbols, finite amounts > 0, at most 118 entries);
    raises ``FormulaError``."""
    if isinstance(value, str):
        return parse_formula(value)
    if not isinstance(value, dict):
        raise FormulaError("no formula")
    if not value or len(value) > len(ELEMENTS):
        raise FormulaError(f"a composition map needs 1 to {len(ELEMENTS)} elements, got {len(value)}")
    out = {}
    for element, amount in value.items():
        if element not in ELEMENTS:
            raise FormulaError(f"{str(element)[:20]!r} is not an element symbol in the composition")
        if isinstance(amount, bool) or not isinstance(amount, (int, float)) or not amount > 0 \
                or amount == float("inf"):
            raise FormulaError(f"the amount of {element} is not a finite number > 0")
        out[element] = float(amount)
    return out
