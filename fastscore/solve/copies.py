"""Mechanisms that are copies of one another: the same equations up to their order, the
side each is written on and the names of their internal quantities.

A study's submissions repeat one mechanism under other names and in other orders (runs
of one agent, agents that find the reference's mechanism).  ``fastscore.scoring.task`` solves
the first of them and gives each copy that solution renamed (``Solution.renamed``).
Before a mechanism is parsed, `Copies.written` looks for one met before whose texts are
its texts token for token but for internal names (none of them declared, a constant or a
function): its equations are then that one's renamed, not parsed again, since the parser
reads every other name alike.  Once parsed, `Copies.find` looks for one that it copies:

1. the same equations (as SymEngine compares them), in another order or with sides
   swapped: no renaming;
2. the same equations once every internal name is written alike (their *shapes*), and
   then colour refinement of the names over the equations they are in, which gives the
   renaming when it tells every name apart (a symmetric mechanism is left unmatched,
   and is solved itself); the renaming is checked exactly: renamed, the equations are
   the other mechanism's, one for one, either side left.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from functools import cached_property

import symengine as se

from fastscore.solve.closed_forms import names_of
from fastscore.support.caches import memoized
from fastscore.text.functions import CONSTANTS, FUNCTION_TABLE
from fastscore.text.tokens import Limits, ParseError, is_name, tokenize

__all__ = ["Copies", "renamed"]

_ANY = se.Symbol("#")  # an internal name, in a shape
_THIS = se.Symbol("#1")  # the one name placed (`_place`)
_LIMITS = Limits()

Equations = Sequence[tuple[se.Basic, se.Basic]]


class Copies:
    """The mechanisms met so far, each with a value (its solution): `find` gives the value
    of one that a mechanism is a copy of, with the renaming (module doc).  ``fixed``: the
    names that keep theirs (the knowns and the target)."""

    def __init__(self, fixed: Collection[str]):
        self.fixed = frozenset(fixed)
        self._met: dict[tuple, list[_Met]] = {}
        self._written: dict[tuple[int, ...], list[_Met]] = {}  # by the token count of each text
        self._lengths: set[int] = set()  # their numbers of texts
        self._reserved = self.fixed | CONSTANTS.keys() | FUNCTION_TABLE.keys()  # names never renamed
        self.blocks: dict = {}
        """The blocks solved so far (``solve_mechanism``'s ``solved_blocks``): mechanisms
        that are not copies share some of theirs."""

    def find(self, equations: Equations, sizes: Sequence[int] = ()) -> tuple[object, dict[str, str]] | None:
        """(value, map of its mechanism's internal names to those of ``equations``, only the
        names that differ) for the first mechanism met that ``equations`` (of tree sizes
        ``sizes``, when given) copies, or None."""
        met = self._met.get(self._key(equations, sizes))
        if not met:
            return None
        mechanism = _Met(equations, (), sizes, self.fixed, None)
        for entry in met:
            if entry.equations == mechanism.equations:
                return entry.value, {}
        for entry in met:
            mapping = entry.renaming(mechanism)
            if mapping is not None:
                return entry.value, mapping
        return None

    def add(self, equations: Equations, value, texts: Sequence[str] = (), sizes: Sequence[int] = ()) -> None:
        """Record a mechanism (written as ``texts``, of tree sizes ``sizes``, when given) and
        its value (`find` must be given ``sizes`` alike)."""
        met = _Met(equations, texts, sizes, self.fixed, value)
        self._met.setdefault(self._key(equations, sizes), []).append(met)
        if met.counts is not None:
            self._written.setdefault(met.counts, []).append(met)
            self._lengths.add(len(met.counts))

    def written(self, texts: Sequence[str], limits: Limits) -> tuple[object, dict[str, str], Equations, tuple] | None:
        """(value, renaming, equations, sizes) of the first mechanism met whose texts are
        ``texts`` token for token but for internal names (module doc): ``texts`` are its
        equations under the renaming (`renamed`), of its sizes; None when there is none (or
        a text does not tokenize within ``limits``)."""
        if len(texts) not in self._lengths:
            return None  # no mechanism of as many equations was met
        try:
            lists = [_tokens(text, limits) for text in texts]
        except ParseError:
            return None
        tokens = [t for part in lists for t in part]
        for entry in self._written.get(tuple(map(len, lists)), ()):
            mapping = _aligned(entry.tokens, tokens, self._reserved)
            if mapping is not None:
                return entry.value, mapping, entry.source, entry.sizes
        return None

    def _key(self, equations: Equations, sizes: Sequence[int]) -> tuple:
        """Equal for copies (and for some others): each equation's fixed names, its count of
        internal ones (`_outline`) and its tree size (renaming keeps it), sorted."""
        return tuple(sorted((*_outline(lhs, rhs, self.fixed), size)
                            for (lhs, rhs), size in zip(equations, sizes or (0,) * len(equations))))


class _Met:
    """A mechanism (met before, with its ``value``, or looked up): its equations as a
    multiset, their tree sizes, and its tokens, shapes and colours when first needed."""

    def __init__(self, source: Equations, texts: Sequence[str], sizes: Sequence[int], fixed: frozenset[str], value):
        self.source, self.texts, self.sizes, self.fixed, self.value = source, tuple(texts), tuple(sizes), fixed, value
        self.equations = _equations(source)
        self._lists: list[list[str]] | None | bool = False
        self._shapes: list[int] | None = None
        self._colours: dict[int, str] | None | bool = False

    @property
    def lists(self) -> list[list[str]] | None:
        """The tokens of each of its texts (None without texts)."""
        if self._lists is False:
            try:
                self._lists = [_tokens(text, _LIMITS) for text in self.texts] if self.texts else None
            except ParseError:
                self._lists = None
        return self._lists

    @cached_property
    def tokens(self) -> list[str] | None:
        """The tokens of its texts, one after another (None without texts)."""
        lists = self.lists
        return None if lists is None else [t for part in lists for t in part]

    @property
    def counts(self) -> tuple[int, ...] | None:
        """How many tokens each of its texts has (None without texts)."""
        lists = self.lists
        return None if lists is None else tuple(map(len, lists))

    @property
    def shapes(self) -> list[int]:
        """The shape of each equation (its internal names written alike: a hash)."""
        if self._shapes is None:
            internal = set().union(*((names_of(lhs) | names_of(rhs)) - self.fixed for lhs, rhs in self.source))
            alike = se.DictBasic({se.Symbol(name): _ANY for name in internal})  # converted once
            self._shapes = [hash(frozenset((lhs.xreplace(alike), rhs.xreplace(alike)))) for lhs, rhs in self.source]
        return self._shapes

    @property
    def colours(self) -> dict[int, str] | None:
        """colour -> internal name (`_colours`), or None when two names share a colour."""
        if self._colours is False:
            self._colours = _unique(_colours(self.source, self.shapes, self.fixed))
        return self._colours

    def renaming(self, other: _Met) -> dict[str, str] | None:
        """The map of this mechanism's internal names (those that differ) to ``other``'s
        under which the two are the same equations, found by colour refinement and
        checked; None when none is found."""
        if sorted(self.shapes) != sorted(other.shapes) or self.colours is None or other.colours is None or \
                self.colours.keys() != other.colours.keys():
            return None
        mapping = {name: other.colours[c] for c, name in self.colours.items() if other.colours[c] != name}
        if not mapping:
            return None
        moved = se.DictBasic({se.Symbol(a): se.Symbol(b) for a, b in mapping.items()})  # converted once
        renamed = Counter(frozenset((lhs.xreplace(moved), rhs.xreplace(moved))) for lhs, rhs in self.source)
        return mapping if renamed == other.equations else None


@memoized(1 << 12)
def _tokens(text: str, limits: Limits) -> list[str]:
    """The tokens of an equation's text (memoised: a batch's mechanisms share most of their
    texts; not to be changed)."""
    return tokenize(text, limits)


def _aligned(tokens: list[str] | None, others: list[str] | None, reserved: frozenset[str]) -> dict[str, str] | None:
    """The renaming of names (none of them ``reserved``) that turns ``tokens`` into
    ``others``, token for token (only the names that differ), or None when there is none."""
    if tokens is None or others is None or len(tokens) != len(others):
        return None
    pairs = {(a, b) for a, b in zip(tokens, others) if a != b}
    mapping = dict(pairs)
    if len(mapping) != len(pairs) or len(set(mapping.values())) != len(mapping):
        return None  # a name renamed two ways, or two names onto one
    kept = {a for a, b in zip(tokens, others) if a == b}
    if not kept.isdisjoint(mapping) or not kept.isdisjoint(mapping.values()):
        return None  # a name renamed in one place and kept in another
    if not reserved.isdisjoint(mapping) or not reserved.isdisjoint(mapping.values()) or \
            not all(is_name(a) and is_name(b) for a, b in mapping.items()):
        return None
    return mapping


def renamed(equations: Equations, mapping: dict[str, str]) -> list[tuple[se.Basic, se.Basic]]:
    """``equations`` with their names renamed by ``mapping`` (old -> new)."""
    if not mapping:
        return list(equations)
    moved = se.DictBasic({se.Symbol(a): se.Symbol(b) for a, b in mapping.items()})  # converted once
    return [(lhs.xreplace(moved), rhs.xreplace(moved)) for lhs, rhs in equations]


def _equations(equations: Equations) -> Counter:
    """The equations as a multiset, either side first."""
    return Counter(frozenset(e) for e in equations)


def _unique(colours: dict[str, int]) -> dict[int, str] | None:
    """colour -> name, when every name has its own colour; else None."""
    inverse = {c: name for name, c in colours.items()}
    return inverse if len(inverse) == len(colours) else None


@memoized(1 << 12)
def _outline(lhs: se.Basic, rhs: se.Basic, fixed: frozenset[str]) -> tuple[tuple[str, ...], int]:
    """The fixed names of ``lhs = rhs`` (sorted) and how many internal names it has
    (memoised: a batch's mechanisms share most of their equations)."""
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


def _colours(equations: Equations, shape: list[int], fixed: frozenset[str]) -> dict[str, int]:
    """Colour refinement of the internal names: a name starts from its roles (the ``shape``
    of each equation it is in, and where in it: `_role`, or `_place` when `_role` leaves
    names alike), and is refined by the colours of its equations' other names until the
    partition is stable.  Names that correspond under a renaming get the same colours
    (valid within a process)."""
    names_in = [sorted((names_of(lhs) | names_of(rhs)) - fixed) for lhs, rhs in equations]
    equations_of: dict[str, list[int]] = {}
    for i, names in enumerate(names_in):
        for name in names:
            equations_of.setdefault(name, []).append(i)
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
