"""The one agreement rule, and the screen kernel's copy of it."""
from __future__ import annotations

import numpy as np
import pytest

from fastscore.algebra.agreement import agree, agrees
from fastscore.kernels import classify


def _pairs(seed: int = 5, n: int = 4000):
    rng = np.random.default_rng(seed)
    a = rng.choice([-1.0, 1.0], n) * 10.0 ** rng.uniform(-300, 300, n)
    b = a * (1 + rng.choice([0.0, 3e-7, -9e-7, 1.1e-6, -2e-6, 0.5], n))
    b[::97], a[::89] = 0.0, 0.0
    b[::101] = np.nan
    return a, b


def test_the_rule_is_relative_and_symmetric():
    a, b = _pairs()
    np.testing.assert_array_equal(agree(a, b, rtol=1e-6), agree(b, a, rtol=1e-6))
    assert agrees(1e-300, 1.0000005e-300, rtol=1e-6) and not agrees(1e-300, 2e-300, rtol=1e-6)
    assert [agrees(x, y, rtol=1e-6) for x, y in zip(a[:50], b[:50])] == agree(a[:50], b[:50], rtol=1e-6).tolist()


@pytest.mark.slow
def test_the_screen_kernel_trusts_exactly_the_points_the_rule_accepts():
    a, b = _pairs()
    unreliable, invalid = classify(a, b, rtol=1e-6)
    finite = np.isfinite(a) & np.isfinite(b)
    trusted = finite & agree(a, b, rtol=1e-6) & ~((a == 0) & (b == 0))
    flagged = np.zeros(a.size, dtype=bool)
    flagged[unreliable] = True
    flagged[invalid] = True
    np.testing.assert_array_equal(~flagged, trusted)
