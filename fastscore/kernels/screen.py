"""The float64 screen of the equivalence check: one pass over two rows of values.

Every point is one of three kinds:

- *trusted*: both finite, ``|a - b| <= rtol * max(|a|, |b|)``, and not both exactly 0
  (two zeros may both be cancellation);
- *unreliable*: finite on one side only, or both finite and not trusted;
- *invalid*: not finite on either side.

``screen(a, b, rtol=..., k=...)`` counts the kinds and picks, in the same pass, the
``k`` *worst* unreliable points (largest relative disagreement first; NaN on one side
counts as infinitely far), where a real difference shows first, and the ``k`` trusted
points most *apart* (relative to the larger value; equal points never), where an exact
equality is most likely to fail.  It stores no index lists: ``classify`` gives the
unreliable and invalid points when they are needed (a pair whose worst point is a
proven difference never needs them).  ``worst(a, b, points, k=...)`` picks the worst among
given points.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .jit import kernel
from .metrics import TINY  # the floor of |b| in a relative disagreement, as in max_rel_err

TRUSTED, UNRELIABLE, INVALID = 0, 1, 2


class Screen(NamedTuple):
    """Outcome of ``screen``: counts of each kind, and point indices into the rows."""

    n_trusted: int
    n_unreliable: int
    n_invalid: int
    worst: np.ndarray
    apart: np.ndarray


def screen(a: np.ndarray, b: np.ndarray, *, rtol: float, k: int = 8) -> Screen:
    """Count the kinds of points of two value rows, pick the worst and most apart."""
    return Screen(*_screen(*_rows(a, b), rtol, k))


def classify(a: np.ndarray, b: np.ndarray, *, rtol: float) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the unreliable points and of the invalid points."""
    return _classify(*_rows(a, b), rtol)


def worst(a: np.ndarray, b: np.ndarray, points: np.ndarray, *, k: int) -> np.ndarray:
    """The (at most) ``k`` points of ``points`` where ``a`` and ``b`` disagree most,
    largest disagreement first."""
    points = np.ascontiguousarray(points, dtype=np.int64)
    return points[_order(*_rows(a, b), points, min(k, points.size))]


def _rows(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"value rows of shapes {a.shape} and {b.shape} cannot be compared")
    return a, b


@kernel
def _kind(x, y, rtol):
    if math.isfinite(x) and math.isfinite(y):
        if abs(x - y) <= rtol * max(abs(x), abs(y)) and not (x == 0.0 and y == 0.0):
            return TRUSTED
        return UNRELIABLE
    if math.isfinite(x) or math.isfinite(y):
        return UNRELIABLE
    return INVALID


@kernel
def _screen(a, b, rtol, k):
    worst_points, worst_scores = np.empty(k, dtype=np.int64), np.empty(k)
    apart_points, apart_scores = np.empty(k, dtype=np.int64), np.empty(k)
    n_trusted = n_unreliable = n_invalid = n_worst = n_apart = 0
    for i in range(a.size):  # no division unless a point enters a top list (divisions are slow)
        x, y = a[i], b[i]
        kind = _kind(x, y, rtol)
        if kind == TRUSTED:
            n_trusted += 1
            d, m = abs(x - y), max(abs(x), abs(y))
            if x != y and (n_apart < k or d > apart_scores[k - 1] * m):
                n_apart = _keep(apart_points, apart_scores, n_apart, i, d / m)
        elif kind == UNRELIABLE:
            n_unreliable += 1
            # d > score * floor without dividing; a NaN d (one side not finite) always passes
            if n_worst < k or not abs(x - y) <= worst_scores[k - 1] * max(abs(y), TINY):
                n_worst = _keep(worst_points, worst_scores, n_worst, i, _severity(x, y))
        else:
            n_invalid += 1
    return n_trusted, n_unreliable, n_invalid, worst_points[:n_worst], apart_points[:n_apart]


@kernel
def _classify(a, b, rtol):
    unreliable = np.empty(a.size, dtype=np.int64)
    invalid = np.empty(a.size, dtype=np.int64)
    n_unreliable = n_invalid = 0
    for i in range(a.size):
        kind = _kind(a[i], b[i], rtol)
        if kind == UNRELIABLE:
            unreliable[n_unreliable] = i
            n_unreliable += 1
        elif kind == INVALID:
            invalid[n_invalid] = i
            n_invalid += 1
    return unreliable[:n_unreliable], invalid[:n_invalid]


@kernel
def _severity(x, y):
    s = abs(x - y) / max(abs(y), TINY)
    return math.inf if math.isnan(s) else s


@kernel
def _order(a, b, points, k):
    """Positions in ``points`` of its ``k`` most severe points, most severe first."""
    chosen = np.empty(k, dtype=np.int64)
    score = np.empty(k)
    n = 0
    for j in range(points.size):
        severity = _severity(a[points[j]], b[points[j]])
        if n < k or severity > score[k - 1]:
            n = _keep(chosen, score, n, j, severity)
    return chosen[:n]


@kernel
def _keep(chosen, score, n, j, s):
    """Insert ``j`` with score ``s`` into the first ``n`` entries of ``chosen``/``score``
    (largest score first, ties keep the earlier entry first; at most ``chosen.size``
    entries are kept); returns the new ``n``."""
    if n < chosen.size:
        n += 1
    elif s <= score[n - 1]:
        return n
    i = n - 1
    while i > 0 and score[i - 1] < s:
        chosen[i] = chosen[i - 1]
        score[i] = score[i - 1]
        i -= 1
    chosen[i] = j
    score[i] = s
    return n
