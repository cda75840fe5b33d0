"""The float64 screen of the equivalence check: one pass over two rows of values.

``screen(a, b, rtol=..., k=...)`` sorts every point into one of three groups:

- *trusted*: both finite, ``|a - b| <= rtol * max(|a|, |b|)``, and not both exactly 0
  (two zeros may both be cancellation);
- *unreliable*: finite on one side only, or both finite and not trusted;
- *invalid*: not finite on either side;

and picks, in the same pass, the ``k`` *worst* unreliable points (largest relative
disagreement first; NaN on one side counts as infinitely far), where a real difference
shows first, and the ``k`` finite points *apart* the most (relative to the larger
value; equal points never), where an exact equality is most likely to fail.
``worst(a, b, points, k)`` picks the worst among given points.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .jit import kernel

TINY = 1e-300
"""Floor of ``|b|`` in the relative disagreement of the worst points."""


class Screen(NamedTuple):
    """Outcome of ``screen``: point indices into the value rows."""

    n_trusted: int
    unreliable: np.ndarray
    invalid: np.ndarray
    worst: np.ndarray
    apart: np.ndarray


def screen(a: np.ndarray, b: np.ndarray, *, rtol: float, k: int = 8) -> Screen:
    """Classify the points of two value rows (see module doc)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"value rows of shapes {a.shape} and {b.shape} cannot be compared")
    return Screen(*_screen(a, b, rtol, k))


def worst(a: np.ndarray, b: np.ndarray, points: np.ndarray, k: int) -> np.ndarray:
    """The (at most) ``k`` points of ``points`` where ``a`` and ``b`` disagree most,
    largest disagreement first."""
    points = np.ascontiguousarray(points, dtype=np.int64)
    return points[_order(np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64),
                         points, min(k, points.size))]


@kernel
def _screen(a, b, rtol, k):
    unreliable = np.empty(a.size, dtype=np.int64)
    invalid = np.empty(a.size, dtype=np.int64)
    worst_points, worst_scores = np.empty(k, dtype=np.int64), np.empty(k)
    apart_points, apart_scores = np.empty(k, dtype=np.int64), np.empty(k)
    n_trusted = n_unreliable = n_invalid = n_worst = n_apart = 0
    for i in range(a.size):  # no division unless a point enters a top list (divisions are slow)
        x, y = a[i], b[i]
        finite_x, finite_y = math.isfinite(x), math.isfinite(y)
        if finite_x and finite_y:
            d, m = abs(x - y), max(abs(x), abs(y))
            if x != y and (n_apart < k or d > apart_scores[k - 1] * m):
                n_apart = _keep(apart_points, apart_scores, n_apart, i, d / m)
            if d <= rtol * m and not (x == 0.0 and y == 0.0):
                n_trusted += 1
                continue
            floor = max(abs(y), TINY)
            if n_worst < k or d > worst_scores[k - 1] * floor:
                n_worst = _keep(worst_points, worst_scores, n_worst, i, d / floor)
        elif finite_x or finite_y:
            if n_worst < k or worst_scores[k - 1] < math.inf:
                n_worst = _keep(worst_points, worst_scores, n_worst, i, math.inf)
        else:
            invalid[n_invalid] = i
            n_invalid += 1
            continue
        unreliable[n_unreliable] = i
        n_unreliable += 1
    return (n_trusted, unreliable[:n_unreliable], invalid[:n_invalid], worst_points[:n_worst],
            apart_points[:n_apart])


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
