"""The float64 screen of the equivalence check: one pass over two rows of values.

``screen(a, b, rtol=...)`` sorts every point into one of three groups:

- *trusted*: both finite, ``|a - b| <= rtol * max(|a|, |b|)``, and not both exactly 0
  (two zeros may both be cancellation);
- *unreliable*: finite on one side only, or both finite and not trusted;
- *invalid*: not finite on either side.

``worst(a, b, points, k)`` picks the ``k`` points of ``points`` with the largest
relative disagreement, largest first (a point that is NaN on one side counts as infinitely
far), so that a real difference is looked at first; ``apart(a, b, k)`` picks the
``k`` finite points that differ most (where an exact equality is most likely to fail).
"""
from __future__ import annotations

import math

import numpy as np

from .jit import kernel

TINY = 1e-300
"""Floor of ``|b|`` in the relative disagreement of ``worst``."""


def screen(a: np.ndarray, b: np.ndarray, *, rtol: float) -> tuple[int, np.ndarray, np.ndarray]:
    """(number of trusted points, indices of unreliable points, indices of invalid points)."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    b = np.ascontiguousarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"value rows of shapes {a.shape} and {b.shape} cannot be compared")
    return _screen(a, b, rtol)


def worst(a: np.ndarray, b: np.ndarray, points: np.ndarray, k: int) -> np.ndarray:
    """The (at most) ``k`` points of ``points`` where ``a`` and ``b`` disagree most,
    largest disagreement first."""
    points = np.ascontiguousarray(points, dtype=np.int64)
    return points[_order(np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64),
                         points, min(k, points.size))]


def apart(a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """The (at most) ``k`` points where ``a`` and ``b`` are both finite and differ most
    (relative to the larger), largest difference first; points where they are equal
    are never chosen."""
    return _apart(np.ascontiguousarray(a, dtype=np.float64), np.ascontiguousarray(b, dtype=np.float64), k)


@kernel
def _screen(a, b, rtol):
    unreliable = np.empty(a.size, dtype=np.int64)
    invalid = np.empty(a.size, dtype=np.int64)
    n_trusted = 0
    n_unreliable = 0
    n_invalid = 0
    for i in range(a.size):
        x, y = a[i], b[i]
        finite_x, finite_y = math.isfinite(x), math.isfinite(y)
        if finite_x and finite_y:
            if abs(x - y) <= rtol * max(abs(x), abs(y)) and not (x == 0.0 and y == 0.0):
                n_trusted += 1
            else:
                unreliable[n_unreliable] = i
                n_unreliable += 1
        elif finite_x or finite_y:
            unreliable[n_unreliable] = i
            n_unreliable += 1
        else:
            invalid[n_invalid] = i
            n_invalid += 1
    return n_trusted, unreliable[:n_unreliable], invalid[:n_invalid]


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
        n = _keep(chosen, score, n, j, _severity(a[points[j]], b[points[j]]))
    return chosen[:n]


@kernel
def _apart(a, b, k):
    chosen = np.empty(k, dtype=np.int64)
    score = np.empty(k)
    n = 0
    for i in range(a.size):
        x, y = a[i], b[i]
        if math.isfinite(x) and math.isfinite(y) and x != y:
            n = _keep(chosen, score, n, i, abs(x - y) / max(abs(x), abs(y)))
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
