"""Per-split regression metrics of predictions against a reference target.

Definitions (``e = pred - y`` over the n points of a split):

- ``max_rel_err`` = max |e| / max(|y|, 1e-300): the tiny floor keeps a point with
  ``y == 0`` meaningful (an exact 0 prediction scores 0, anything else is huge);
- ``r2`` = 1 - sum(e²) / sum((y - mean y)²), NaN when y is constant;
- ``rmse`` = sqrt(mean e²); ``mae`` = mean |e|;
- ``smape`` = mean 2|e| / (|pred| + |y|) as a fraction in [0, 2] (a point where both
  are 0 contributes 0);
- ``pearson_r`` = correlation of pred and y, NaN when either side is constant.

A row with any non-finite prediction fails the split: ``max_rel_err = inf`` and every
other metric is NaN.  ``y`` must be finite (it is the reference).
"""

from __future__ import annotations

import numpy as np

from .jit import kernel

METRICS = ("max_rel_err", "r2", "rmse", "mae", "smape", "pearson_r")

TINY = 1e-300
"""Floor of ``|y|`` in a relative error (here and in the screen's worst points)."""


def split_metrics(pred: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    """Metrics of each row of ``pred`` (``(n_tapes, n_points)`` or ``(n_points,)``)
    against ``y`` (``(n_points,)``); values have shape ``pred.shape[:-1]``."""
    pred = np.asarray(pred, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.ndim != 1 or pred.ndim not in (1, 2) or pred.shape[-1] != y.shape[0]:
        raise ValueError(f"pred {pred.shape} and y {y.shape} do not match")
    if y.size == 0:
        raise ValueError("a split needs at least one point")
    if not np.isfinite(y).all():
        raise ValueError("the reference y holds non-finite values")
    rows = pred if pred.ndim == 2 else pred[None, :]  # a column slice of a bigger matrix is not copied
    out = np.empty((len(METRICS), rows.shape[0]))
    _metrics(rows, y, out)
    return {name: out[i].reshape(pred.shape[:-1]) for i, name in enumerate(METRICS)}


def accuracy(max_rel_err: np.ndarray, *, tol: float = 0.1) -> np.ndarray:
    """``max_rel_err <= tol`` (NaN counts as failed)."""
    return np.asarray(max_rel_err) <= tol


@kernel
def _metrics(rows, y, out):
    n = y.size
    y_mean = 0.0
    y_constant = True
    for i in range(n):
        y_mean += y[i]
        y_constant = y_constant and y[i] == y[0]
    y_mean /= n
    ss_tot = 0.0
    if not y_constant:  # exact test: a rounded mean would leave a spurious spread
        for i in range(n):
            ss_tot += (y[i] - y_mean) ** 2
    for t in range(rows.shape[0]):
        p = rows[t]
        finite = True
        p_constant = True
        p_mean = 0.0
        for i in range(n):
            if not np.isfinite(p[i]):
                finite = False
                break
            p_mean += p[i]
            p_constant = p_constant and p[i] == p[0]
        if not finite:
            out[0, t] = np.inf
            for m in range(1, out.shape[0]):
                out[m, t] = np.nan
            continue
        p_mean /= n
        max_rel = 0.0
        ss_res = 0.0
        abs_sum = 0.0
        smape_sum = 0.0
        ss_p = 0.0
        cross = 0.0
        for i in range(n):
            e = p[i] - y[i]
            ae = abs(e)
            max_rel = max(max_rel, ae / max(abs(y[i]), TINY))
            ss_res += e * e
            abs_sum += ae
            scale = abs(p[i]) + abs(y[i])
            if scale > 0.0:
                smape_sum += 2.0 * ae / scale
            dp = p[i] - p_mean
            ss_p += dp * dp
            cross += dp * (y[i] - y_mean)
        out[0, t] = max_rel
        out[1, t] = 1.0 - ss_res / ss_tot if ss_tot > 0.0 else np.nan
        out[2, t] = np.sqrt(ss_res / n)
        out[3, t] = abs_sum / n
        out[4, t] = smape_sum / n
        constant = p_constant or y_constant
        out[5, t] = np.nan if constant else cross / np.sqrt(ss_p * ss_tot)
