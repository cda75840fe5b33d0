"""The one agreement rule: two values agree when ``|a - b| <= rtol * max(|a|, |b|)``.

Purely relative, so a quantity of 1e-10 is judged as strictly as one of 1e+10; ``rtol``
comes from ``Settings.rtol`` wherever a verdict depends on it.  The screen kernel
(``kernels/screen.py``) has its own Numba copy of the rule, tested equal to this one.

Three checks use the same ``rtol`` on purpose with another scale, and say so where they
stand: the certified disagreement of ``equivalence._separated`` (the rule widened by
each side's error bound), the solver's ``_Solver.satisfies`` (equation sides on the
scale of their largest term, so sides that cancel to zero are judged fairly), and the
reference's test that a probe is constant (its spread against its largest value).
"""
from __future__ import annotations

import numpy as np

__all__ = ["agree", "agrees"]


def agree(a: np.ndarray, b: np.ndarray, *, rtol: float) -> np.ndarray:
    """Elementwise: ``|a - b| <= rtol * max(|a|, |b|)`` (False where either is NaN).

    >>> agree(np.array([1.0, 1.0]), np.array([1.0 + 1e-9, 1.1]), rtol=1e-6).tolist()
    [True, False]
    """
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))


def agrees(a: float, b: float, *, rtol: float) -> bool:
    """The rule for two floats.

    >>> agrees(1e-10, 1.0000001e-10, rtol=1e-6), agrees(1e-10, 2e-10, rtol=1e-6)
    (True, False)
    """
    return abs(a - b) <= rtol * max(abs(a), abs(b))
