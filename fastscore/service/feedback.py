"""Feedback on one submitted mechanism, from a public MechBench task alone.

The answer is the one MechBench's feedback service gives (protocol
``mdbench-proposal-v1``), computed with fastscore's own parser, solver and kernels:

- ``{"ok": true, "solution": {name: text}, "train": {...}}``: ``solution`` holds the
  closed form (``str`` of the SymEngine expression, in the inputs and auxiliaries)
  of every quantity the mechanism defines that has one; ``train`` holds the fit of
  the target on the public training data (``train_metrics``);
- ``{"ok": false, "error": "...", "error_type": "..."}`` for a submission that does
  not parse, does not solve, or cannot be evaluated.

fastscore adds, under the key ``"fastscore"``, the node count of each equation,
which unknowns have closed forms and which were solved numerically at each
sample, and warnings (``fastscore.service.protocol.protocol_answer`` drops that key).

The task is a validated public task (``fastscore.service.public``: problem.json and
train.npy, nothing private).  The submission text is untrusted: it is parsed by
``fastscore.text.parse`` only.
"""
from __future__ import annotations

import math

import numpy as np
import symengine as se

from fastscore.algebra.sizes import count_nodes
from fastscore.kernels import evaluate
from fastscore.service.protocol import DEFAULT_BUDGET, EXTRAS
from fastscore.service.public import PublicTask, excerpt, one_line
from fastscore.solve.mechanism import SolveError, solve_mechanism
from fastscore.tapes.compile import UnsupportedExpression, compile_tape
from fastscore.text.answers import defined_constants, split_equations
from fastscore.text.parse import parse_equation
from fastscore.text.tokens import DEFAULT_LIMITS, ParseError, strip_comments

__all__ = ["METRIC_KEYS", "RTOL", "feedback", "train_metrics"]

RTOL = 1e-6
"""``numerically_equivalent``: ``np.allclose(pred, y, rtol=RTOL, atol=0)``."""
METRIC_KEYS = ("mae", "mse", "rmse", "mape", "r2", "nrmse", "max_absolute_error")

_MAX_TEXT = DEFAULT_LIMITS.max_chars * DEFAULT_LIMITS.max_equations
_EPS = float(np.finfo(float).eps)


# ------------------------------------------------------------------- the answer


def train_metrics(predicted: np.ndarray, truth: np.ndarray) -> dict:
    """The harness's fit metrics of predictions against finite truth.

    With ``e = pred - y`` over the ``n`` samples: ``mae = mean|e|``, ``mse =
    mean(e**2)``, ``rmse = sqrt(mse)``, ``mape = mean(|e| / max(|y|, eps))`` (eps the
    float64 machine epsilon), ``r2 = 1 - mse / var(y)`` (population variance; when
    ``var(y) = 0``: 1 if ``mse = 0`` else 0), ``nrmse = rmse / max(sqrt(mean(y**2)),
    eps)``, ``max_absolute_error = max|e|``; ``numerically_equivalent``: ``|e| <=
    RTOL * |y|`` at every sample.  Any non-finite prediction voids every metric (all
    ``None``, ``numerically_equivalent`` false): no prediction is silently dropped;
    ``finite_fraction`` tells how many were finite.  A metric that is itself not
    finite (overflow) is ``None``."""
    predicted = np.asarray(predicted, dtype=np.float64)
    truth = np.asarray(truth, dtype=np.float64)
    finite = np.isfinite(predicted)
    report = {"n_samples": int(truth.size), "finite_fraction": float(finite.mean()), "numerically_equivalent": False}
    if not finite.all():
        return report | dict.fromkeys(METRIC_KEYS)
    with np.errstate(all="ignore"):
        error = predicted - truth
        absolute = np.abs(error)
        mse = float(np.mean(error * error))
        rmse = math.sqrt(mse) if math.isfinite(mse) else math.inf
        variance = float(np.var(truth))
        if variance > 0:
            r2 = 1.0 - mse / variance
        else:
            r2 = 1.0 if mse == 0 else 0.0
        scores = {
            "mae": float(np.mean(absolute)),
            "mse": mse,
            "rmse": rmse,
            "mape": float(np.mean(absolute / np.maximum(np.abs(truth), _EPS))),
            "r2": r2,
            "nrmse": rmse / max(float(np.sqrt(np.mean(truth * truth))), _EPS),
            "max_absolute_error": float(np.max(absolute)),
        }
    report["numerically_equivalent"] = bool(np.allclose(predicted, truth, rtol=RTOL, atol=0))
    return report | {key: value if math.isfinite(value) else None for key, value in scores.items()}


def feedback(task: PublicTask, submission: str | bytes, *, budget: float = DEFAULT_BUDGET) -> dict:
    """The answer for one submission (text or UTF-8 bytes) on ``task``, with the
    fastscore extras; the solver gets half of ``budget`` seconds.  Never raises for
    a bad submission: it is an ``ok: false`` answer."""
    warnings: list[str] = []
    extras = {"nodes": [], "closed_form": [], "numeric": [], "warnings": warnings}
    try:
        equations = _equations(task, submission)
        extras["nodes"] = [count_nodes(lhs) + count_nodes(rhs) for lhs, rhs in equations]
        points = {name: task.row(name) for name in task.sources}
        solution = solve_mechanism(equations, knowns=task.sources, target=task.target, points=points,
                                   budget=budget / 2)
        if solution.law is not None:
            predicted = evaluate(compile_tape(solution.law, task.columns), task.data)
        else:
            predicted = solution.values([task.target], points)[task.target]
            warnings.append(f"the target {task.target} has no closed form: it was solved numerically at each sample")
    except (ParseError, SolveError, UnsupportedExpression) as error:
        kind = "EvaluationError" if isinstance(error, UnsupportedExpression) else type(error).__name__
        return {"ok": False, "error": one_line(error), "error_type": kind, EXTRAS: extras}
    if any(e.has(se.pi) for side in equations for e in side):
        warnings.append("an undeclared pi (or π) is read as the constant π")
    train = train_metrics(predicted, task.row(task.target))
    if train["finite_fraction"] < 1:
        bad = task.n_samples - round(train["finite_fraction"] * task.n_samples)
        warnings.append(f"{bad} of {task.n_samples} predictions are not finite: the metrics are void")
    extras["closed_form"] = list(solution.expressions)
    extras["numeric"] = list(solution.numeric)
    return {"ok": True, "solution": {name: _text(expr) for name, expr in solution.expressions.items()},
            "train": train, EXTRAS: extras}


MAX_TEXT_NODES = 20_000
"""Above this many tree nodes a closed form's text is not written into the answer (an
agent reads it; a score row's text has ``Settings.max_text_nodes``): a chain of 22
substitutions shares its subexpressions (a few dozen distinct nodes), but written out
it is 160 MB."""


def _text(expr: se.Basic) -> str:
    nodes = count_nodes(expr)
    return str(expr) if nodes <= MAX_TEXT_NODES else f"(not written: {nodes} tree nodes)"


def _equations(task: PublicTask, submission: str | bytes) -> list[tuple[se.Basic, se.Basic]]:
    """The submission's equations: one a line, ``#`` starts a comment, ``;`` also
    separates; every name that is not a source is an unknown."""
    if isinstance(submission, bytes):
        try:
            submission = submission.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ParseError(f"submission is not UTF-8 text (byte {error.start}: {error.reason})") from None
    submission = submission.removeprefix("\ufeff")
    if len(submission) > _MAX_TEXT:
        raise ParseError(f"submission is {len(submission)} characters long, limit {_MAX_TEXT}")
    text = strip_comments(submission)  # always: every line break splits (``split_equations`` then sees no '#')
    texts = split_equations(text)
    if not texts:
        raise ParseError("empty submission: no equation")
    equations, names = [], (*task.columns, *defined_constants(texts))
    for number, equation in enumerate(texts, 1):
        try:
            equations.append(parse_equation(equation, names=names, allow_new_names=True))
        except ParseError as error:
            raise ParseError(f"equation {number} ({excerpt(equation)}): {error}") from None
    return equations
