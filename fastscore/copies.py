"""Mechanisms that are copies of one another: the same equations up to their order, the
side each is written on and the names of their internal quantities.

A study's submissions repeat one mechanism under other names and in other orders (runs
of one agent, agents that find the reference's mechanism).  ``fastscore.score`` solves
the first of them and gives each copy that solution renamed (``Solution.renamed``):

* `copy_key` is a cheap key, equal for copies (every internal name written alike);
* `renaming` finds which internal name of one mechanism is which of the other's, by
  colour refinement of the names over the equations they occur in, and then checks it
  exactly: renamed, the equations are the other mechanism's, the same expressions (as
  SymEngine compares them), one for one, either side left.  A mechanism whose names
  colour refinement cannot tell apart (a symmetric one) gets None and is solved itself.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence

import symengine as se

from fastscore.closed_forms import names_of

__all__ = ["Copies"]

_ANY = se.Symbol("#")  # an internal name, in a shape
_THIS = se.Symbol("#1")  # the one name placed (`_place`)

Equations = Sequence[tuple[se.Basic, se.Basic]]


class Copies:
    """The mechanisms met so far, each with a value (its solution): `find` gives the value
    of one that a mechanism is a copy of, with the renaming (module doc).  ``fixed``: the
    names that keep theirs (the knowns and the target)."""

    def __init__(self, fixed: Collection[str]):
        self.fixed = frozenset(fixed)
        self._met: dict[tuple[int, ...], list[_Met]] = {}
        self.blocks: dict = {}
        """The blocks solved so far (``solve_mechanism``'s ``solved_blocks``): mechanisms that are
        not copies share some of theirs."""

    def find(self, equations: Equations) -> tuple[object, dict[str, str]] | None:
        """(value, map of its mechanism's internal names to those of ``equations``, only the
        names that differ) for the first mechanism met that ``equations`` copies, or None."""
        met = self._met.get(self._key(equations))
        if not met:
            return None
        same = _equations(equations)
        for entry in met:
            if entry.equations == same:  # the same equations in another order, sides swapped
                return entry.value, {}
        colours = _unique(_colours(equations, self.fixed))
        if colours is None:
            return None
        for entry in met:
            mapping = entry.renaming(colours, same, self.fixed)
            if mapping is not None:
                return entry.value, mapping
        return None

    def add(self, equations: Equations, value) -> None:
        """Record a mechanism and its value."""
        self._met.setdefault(self._key(equations), []).append(_Met(equations, _equations(equations), value))

    def _key(self, equations: Equations) -> tuple:
        """Equal for copies (and for some others): each equation's fixed names and its count
        of internal ones (`_outline`), sorted."""
        return tuple(sorted(_outline(lhs, rhs, self.fixed) for lhs, rhs in equations))


class _Met:
    """A mechanism met, with its value; its colours are found when first needed."""

    def __init__(self, equations: Equations, counted: Counter, value):
        self.source, self.equations, self.value = equations, counted, value
        self._colours: dict[int, str] | None | bool = False

    def renaming(self, colours: dict[int, str], counted: Counter, fixed: frozenset[str]) -> dict[str, str] | None:
        """The map of this mechanism's internal names (that differ) to those of the one
        coloured ``colours`` (colour -> name) with equations ``counted``, or None."""
        if self._colours is False:
            self._colours = _unique(_colours(self.source, fixed))
        if self._colours is None or self._colours.keys() != colours.keys():
            return None
        mapping = {name: colours[c] for c, name in self._colours.items() if colours[c] != name}
        moved = se.DictBasic({se.Symbol(a): se.Symbol(b) for a, b in mapping.items()})  # converted once
        renamed = Counter(frozenset((lhs.xreplace(moved), rhs.xreplace(moved))) for lhs, rhs in self.source)
        return mapping if renamed == counted else None


def _equations(equations: Equations) -> Counter:
    """The equations as a multiset, either side first."""
    return Counter(frozenset(e) for e in equations)


def _unique(colours: dict[str, int]) -> dict[int, str] | None:
    """colour -> name, when every name has its own colour; else None."""
    inverse = {c: name for name, c in colours.items()}
    return inverse if len(inverse) == len(colours) else None


def _outline(lhs: se.Basic, rhs: se.Basic, fixed: frozenset[str]) -> tuple[tuple[str, ...], int]:
    """The fixed names of ``lhs = rhs`` (sorted) and how many internal names it has."""
    names = names_of(lhs) | names_of(rhs)
    return tuple(sorted(names & fixed)), len(names - fixed)


def _role(name: str, lhs: se.Basic, rhs: se.Basic) -> tuple[int, int]:
    """Where ``name`` is in ``lhs = rhs``, whichever side is written first: for each side,
    2 when it is the side, 1 when it is in it, else 0 (sorted)."""
    return tuple(sorted(2 if side.is_Symbol and side.name == name else int(name in names_of(side))
                        for side in (lhs, rhs)))


def _place(name: str, lhs: se.Basic, rhs: se.Basic, fixed: frozenset[str]) -> int:
    """The equation with ``name`` written apart from the other internal names (a hash):
    where exactly it is, for names `_role` leaves alike."""
    alike = {se.Symbol(n): _THIS if n == name else _ANY for n in (names_of(lhs) | names_of(rhs)) - fixed}
    return hash(frozenset((lhs.xreplace(alike), rhs.xreplace(alike))))


def _colours(equations: Equations, fixed: frozenset[str]) -> dict[str, int]:
    """Colour refinement of the internal names: a name starts from its roles (the shape of
    each equation it is in, its internal names written alike, and where in it: `_role`,
    or `_place` when `_role` leaves names alike), and is refined by the colours of its equations' other names until the
    partition is stable.  Names that correspond under a renaming get the same colours
    (valid within a process)."""
    names_in = [sorted((names_of(lhs) | names_of(rhs)) - fixed) for lhs, rhs in equations]
    equations_of: dict[str, list[int]] = {}
    for i, names in enumerate(names_in):
        for name in names:
            equations_of.setdefault(name, []).append(i)
    alike = se.DictBasic({se.Symbol(name): _ANY for name in equations_of})  # converted once, for every equation
    shape = [hash(frozenset((lhs.xreplace(alike), rhs.xreplace(alike)))) for lhs, rhs in equations]
    role = {(name, i): hash((shape[i], _role(name, *equations[i]))) for name, found in equations_of.items()
            for i in found}
    colour = _refined(role, names_in, equations_of)
    if len(set(colour.values())) < len(colour):
        role = {(name, i): _place(name, *equations[i], fixed) for name, i in role}
        colour = _refined(role, names_in, equations_of)
    return colour


def _refined(role: dict[tuple[str, int], int], names_in: list[list[str]],
             equations_of: dict[str, list[int]]) -> dict[str, int]:
    colour = {name: hash(tuple(sorted(role[name, i] for i in found))) for name, found in equations_of.items()}
    for _ in range(len(colour)):
        if len(set(colour.values())) == len(colour):
            break
        equation = [hash(tuple(sorted((role[n, i], colour[n]) for n in names))) for i, names in enumerate(names_in)]
        refined = {name: hash((colour[name], tuple(sorted((role[name, i], equation[i]) for i in found))))
                   for name, found in equations_of.items()}
        stable = len(set(refined.values())) == len(set(colour.values()))
        colour = refined
        if stable:
            break
    return colour
