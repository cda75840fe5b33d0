"""The AST score of two mechanisms: the similarity of their equations' formulas.

**AST score** (``ast_similarity``): each equation is a bag of subtree shapes: every
subtree of both sides with variable names and numeric values erased (a symbol is
``var``; a subtree free of symbols, ``pi`` and numeric literals included, is
``num``; the numeric factors of a product and terms of a sum merge into one ``num``;
the arguments of ``+`` and ``*`` are unordered, the two sides of ``=`` too). Two
equations score the Dice coefficient of their bags, ``2 |A ∩ B| / (|A| + |B|)``
(multisets). Equations are paired one to one by maximum total similarity (the
Hungarian method; ties go to pairs whose names agree under the graph map), and the
overall score is the sum over pairs divided by the larger number of equations, so a
missing or an extra equation costs its share.
"""
from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se
from scipy.optimize import linear_sum_assignment

from fastscore.support.caches import memoized

__all__ = ["AstMatch", "AstReference", "equation_shapes", "ast_similarity"]

_TIE = 1e-9  # weight of the name-agreement tie break in the pairing of equations
_VAR = zlib.crc32(b"var")
_NUM = zlib.crc32(b"num")
_EQUALS = zlib.crc32(b"=")
_COMMUTATIVE = ("Add", "Mul")


@memoized(1 << 12)
def _op(name: str) -> int:
    return zlib.crc32(name.encode())


def _shape(expr: se.Basic, bag: Counter) -> int:
    """The shape code of ``expr``; every subtree's shape is counted in ``bag``.  A subtree
    without free symbols is one number, counted once: its operands are all numbers
    (found bottom-up, each counted once, so their counts are taken back)."""
    args = expr.args
    if not args:
        code = _VAR if expr.is_Symbol else _NUM
    else:
        children = [_shape(arg, bag) for arg in args]
        if all(c == _NUM for c in children):
            bag[_NUM] += 1 - len(children)
            return _NUM
        kind = type(expr).__name__
        if kind in _COMMUTATIVE:
            numeric = [c for c in children if c == _NUM]
            children = sorted(c for c in children if c != _NUM)
            if numeric:  # the numeric factors (terms) merge into one number
                bag[_NUM] -= len(numeric) - 1
                children.insert(0, _NUM)
        code = hash((_op(kind), *children))
    bag[code] += 1
    return code


@memoized(1 << 12)
def equation_shapes(lhs: se.Basic, rhs: se.Basic) -> Counter:
    """The bag (multiset) of subtree shapes of ``lhs = rhs`` (module doc); memoised (a
    task's submissions share most of their equations), so not to be changed."""
    bag: Counter = Counter()
    sides = sorted((_shape(lhs, bag), _shape(rhs, bag)))
    bag[hash((_EQUALS, *sides))] += 1
    return bag


def _overlap(common: np.ndarray, total: np.ndarray) -> np.ndarray:
    """``common / total`` where ``total`` is positive, else 1."""
    return np.where(total > 0, common / np.maximum(total, 1), 1.0)


@dataclass(frozen=True)
class AstMatch:
    """Overall AST score and the pairs (reference index, submitted index, score)."""

    score: float
    pairs: tuple[tuple[int, int, float], ...]


class AstReference:
    """The reference side of `ast_similarity`, prepared once (a reference is compared with
    every submission): its bags as a count matrix over their shapes.  A submitted bag is
    read once into that matrix's columns (shapes the reference lacks only count in its
    size); bags are the memoised objects of `equation_shapes`, so a batch's mechanisms,
    which share most of their equations, share their rows."""

    def __init__(self, bags: Sequence[Counter], names: Sequence[Collection[str]] = ()):
        self.bags, self.names = tuple(bags), tuple(names)
        self._column: dict = {}
        for bag in self.bags:
            for key in bag:
                self._column.setdefault(key, len(self._column))
        self._matrix, self._totals = self._read(self.bags)
        self._rows: dict[int, tuple[Counter, np.ndarray, int]] = {}  # id(bag) -> (bag, row, size)

    def _read(self, bags: Sequence[Counter]) -> tuple[np.ndarray, np.ndarray]:
        column = self._column
        matrix = np.zeros((len(bags), len(column)), dtype=np.int64)
        totals = np.zeros(len(bags), dtype=np.int64)
        for i, bag in enumerate(bags):
            for key, count in bag.items():
                j = column.get(key)
                if j is not None:
                    matrix[i, j] = count
                totals[i] += count
        return matrix, totals

    def _submitted(self, bags: Sequence[Counter]) -> tuple[np.ndarray, np.ndarray]:
        rows, sizes = [], []
        for bag in bags:
            known = self._rows.get(id(bag))
            if known is None or known[0] is not bag:
                matrix, totals = self._read([bag])
                if len(self._rows) >= _MAX_ROWS:
                    self._rows.clear()
                known = self._rows[id(bag)] = (bag, matrix[0], int(totals[0]))  # the bag kept: its id stays its own
            rows.append(known[1])
            sizes.append(known[2])
        return np.array(rows).reshape(len(bags), len(self._column)), np.array(sizes, dtype=np.int64)

    def similarity(self, submitted: Sequence[Counter], submitted_names: Sequence[Collection[str]] = (), *,
                   mapping: Mapping[str, str] | None = None) -> AstMatch:
        """`ast_similarity` of the reference with ``submitted``."""
        if not self.bags or not submitted:
            return AstMatch(1.0 if len(self.bags) == len(submitted) else 0.0, ())
        a, (b, sizes) = self._matrix, self._submitted(submitted)
        scores = _overlap(2 * np.maximum(np.minimum(a[:, None, :], b[None, :, :]), 0).sum(axis=2),
                          np.add.outer(self._totals, sizes))  # Dice coefficients of the bags (multisets)
        weights = scores
        if self.names and submitted_names:
            mapping = mapping or {}
            ours = [frozenset(mapping.get(n, n) for n in names) for names in self.names]
            theirs = [frozenset(names) for names in submitted_names]
            common = np.array([[len(x & y) for y in theirs] for x in ours], dtype=np.int64)
            union = np.add.outer([len(x) for x in ours], [len(y) for y in theirs]) - common
            weights = scores + _TIE * _overlap(common, union)  # Jaccard similarity of the names
        rows, columns = linear_sum_assignment(weights, maximize=True)
        pairs = tuple((int(i), int(j), float(scores[i, j])) for i, j in zip(rows, columns))
        total = sum(s for _, _, s in pairs)
        return AstMatch(min(1.0, total / max(len(self.bags), len(submitted))), pairs)


_MAX_ROWS = 4096
"""Submitted bags an `AstReference` keeps read."""


def ast_similarity(reference: Sequence[Counter], submitted: Sequence[Counter], *,
                   reference_names: Sequence[Collection[str]] = (), submitted_names: Sequence[Collection[str]] = (),
                   mapping: Mapping[str, str] | None = None) -> AstMatch:
    """Pair the equations (bags from ``equation_shapes``) by maximum total similarity
    and score the pairing (module doc). With the names of each equation's quantities
    and a graph ``mapping`` (reference internal -> submitted), ties go to pairs whose
    names agree under the map.  A reference compared many times is prepared once:
    `AstReference`."""
    return AstReference(reference, reference_names).similarity(submitted, submitted_names, mapping=mapping)
