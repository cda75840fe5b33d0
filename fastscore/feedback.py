"""Feedback on one submitted mechanism, from a public MechBench task alone (MECHBENCH.md §5).

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
sample, and warnings.  ``protocol_answer`` drops that key.

Only public artifacts are read: ``problem.json`` (``data_layout``
``variables_by_samples``, ``variables`` with roles input/target/auxiliary,
``data_columns``) and ``train.npy`` (shape ``(len(data_columns), n)``), validated
as the harness validates them.  The submission text is untrusted: it is parsed by
``fastscore.parse`` only.
"""
from __future__ import annotations

import io
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import symengine as se
from numpy.lib import format as npy_format

from fastscore.canonical import count_nodes
from fastscore.kernels import UnsupportedExpression, compile_tape, evaluate
from fastscore.parse import DEFAULT_LIMITS, ParseError, parse_equation, split_equations
from fastscore.protocol import DEFAULT_BUDGET
from fastscore.solve import SolveError, solve_mechanism

__all__ = [
    "EXTRAS",
    "METRIC_KEYS",
    "PublicTask",
    "TaskError",
    "feedback",
    "load_task",
    "protocol_answer",
    "public_task",
    "read_problem",
    "read_train",
    "train_metrics",
]

EXTRAS = "fastscore"
"""Key of fastscore's additions to an answer."""
RTOL = 1e-6
"""``numerically_equivalent``: ``np.allclose(pred, y, rtol=RTOL, atol=0)``."""
METRIC_KEYS = ("mae", "mse", "rmse", "mape", "r2", "nrmse", "max_absolute_error")

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VARIABLE_FIELDS = {"name", "description", "unit", "role"}
_ROLES = ("input", "target", "auxiliary")
_MAX_TEXT = DEFAULT_LIMITS.max_chars * DEFAULT_LIMITS.max_equations
_EPS = float(np.finfo(float).eps)


class TaskError(ValueError):
    """A public task that is not in MechBench's public layout; one line."""


@dataclass(frozen=True, eq=False)
class PublicTask:
    """A validated public task: column names in row order, the target, the sources
    (inputs and auxiliaries, in row order) and the training data (float64)."""

    columns: tuple[str, ...]
    target: str
    sources: tuple[str, ...]
    data: np.ndarray
    description: str | None = None

    @property
    def n_samples(self) -> int:
        return self.data.shape[1]

    def row(self, name: str) -> np.ndarray:
        """The training values of one column."""
        return self.data[self.columns.index(name)]


# ----------------------------------------------------------------------- the task


def read_problem(data: bytes | str) -> object:
    """``problem.json`` bytes -> the decoded JSON value (``TaskError`` if not JSON)."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error) or "nested too deeply"
        raise TaskError(f"problem is not JSON: {reason}") from None


def read_train(data: bytes) -> np.ndarray:
    """NPY bytes -> array, without pickles; the header is checked against the byte
    count before any allocation (``TaskError`` for anything but one NPY array)."""
    stream = io.BytesIO(data)
    try:
        version = npy_format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = npy_format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = npy_format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unsupported NPY version {version[0]}.{version[1]}")
        if dtype.hasobject:
            raise ValueError("object arrays are not accepted")
        expected = math.prod(shape) * dtype.itemsize
        if len(data) - stream.tell() != expected:
            raise ValueError(f"header announces {expected} data bytes, {len(data) - stream.tell()} present")
        stream.seek(0)
        array = np.load(stream, allow_pickle=False)
    except (ValueError, EOFError, OSError, SyntaxError, TypeError) as error:
        raise TaskError(f"train_data is not an NPY array: {_one_line(error)}") from None
    return array


def public_task(problem: object, train: object) -> PublicTask:
    """Validate a public ``problem.json`` value and its training array, the
    harness's way: the public layout, observed variables only (exactly four fields
    each, roles input/target/auxiliary), exactly one target, ``data_columns`` equal
    to the variable names in order and unique, and a finite real 2-D array with one
    row per column and at least one sample."""
    if not isinstance(problem, dict) or problem.get("data_layout") != "variables_by_samples":
        raise TaskError("problem is not a public problem.json: expected data_layout 'variables_by_samples'")
    variables = problem.get("variables")
    if not isinstance(variables, list):
        raise TaskError("problem: variables must be a list")
    names, roles = [], []
    for index, item in enumerate(variables):
        if not isinstance(item, dict) or set(item) != _VARIABLE_FIELDS:
            raise TaskError(f"problem: variable {index} must have exactly the fields name, description, unit, role")
        name, role = item["name"], item["role"]
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise TaskError(f"problem: variable {index} has an invalid name {_short(name)}")
        if role not in _ROLES:
            raise TaskError(f"problem: variable {name} has role {_short(role)}; public roles are input, target, auxiliary")
        names.append(name)
        roles.append(role)
    columns = problem.get("data_columns")
    if columns != names or len(set(names)) != len(names):
        raise TaskError("problem: data_columns must equal the unique variable names, in order")
    targets = [n for n, r in zip(names, roles) if r == "target"]
    if len(targets) != 1:
        raise TaskError(f"problem: exactly one target is required, found {len(targets)}")
    if (not isinstance(train, np.ndarray) or train.ndim != 2 or train.shape[0] != len(names)
            or train.shape[1] == 0 or train.dtype.kind not in "fiu"):
        shape = getattr(train, "shape", None)
        raise TaskError(f"train_data must be a real array of shape ({len(names)}, n_samples) in data_columns "
                        f"order, got {'shape ' + str(shape) if shape is not None else type(train).__name__}"
                        + (f" of {train.dtype}" if isinstance(train, np.ndarray) else ""))
    data = np.ascontiguousarray(train, dtype=np.float64)
    if not np.isfinite(data).all():
        raise TaskError("train_data holds non-finite values")
    description = problem.get("task_description")
    return PublicTask(columns=tuple(names), target=targets[0],
                      sources=tuple(n for n, r in zip(names, roles) if r != "target"), data=data,
                      description=description if isinstance(description, str) else None)


def load_task(directory: str | Path) -> PublicTask:
    """A public task folder: ``problem.json`` + ``train.npy`` in ``directory`` (or in
    its ``agent/`` folder, MechBench's export layout)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no task folder {directory}")
    if not (directory / "problem.json").is_file() and (directory / "agent" / "problem.json").is_file():
        directory = directory / "agent"
    files = [directory / "problem.json", directory / "train.npy"]
    for path in files:
        if not path.is_file():
            raise FileNotFoundError(f"{directory} has no {path.name}")
    return public_task(read_problem(files[0].read_bytes()), read_train(files[1].read_bytes()))


# ------------------------------------------------------------------- the answer


def train_metrics(predicted: np.ndarray, truth: np.ndarray) -> dict:
    """The harness's fit metrics of predictions against finite truth.

    With ``e = pred - y`` over the ``n`` samples: ``mae = mean|e|``, ``mse =
    mean(e**2)``, ``rmse = sqrt(mse)``, ``mape = mean(|e| / max(|y|, eps))`` (eps the
    float64 machine epsilon), ``r2 = 1 - mse / var(y)`` (population variance; when
    ``var(y) = 0``: 1 if ``mse = 0`` else 0), ``nrmse = rmse / max(sqrt(mean(y**2)),
    eps)``, ``max_absolute_error = max|e|``; ``numerically_equivalent``: ``|e| <=
    1e-6 * |y|`` at every sample.  Any non-finite prediction voids every metric (all
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
        return {"ok": False, "error": _one_line(error), "error_type": kind, EXTRAS: extras}
    if any(e.has(se.pi) for side in equations for e in side):
        warnings.append("an undeclared pi (or π) is read as the constant π")
    train = train_metrics(predicted, task.row(task.target))
    if train["finite_fraction"] < 1:
        bad = task.n_samples - round(train["finite_fraction"] * task.n_samples)
        warnings.append(f"{bad} of {task.n_samples} predictions are not finite: the metrics are void")
    extras["closed_form"] = list(solution.expressions)
    extras["numeric"] = list(solution.numeric)
    return {"ok": True, "solution": {name: str(expr) for name, expr in solution.expressions.items()},
            "train": train, EXTRAS: extras}


def protocol_answer(answer: Mapping) -> dict:
    """The answer as ``mdbench-proposal-v1`` has it (without fastscore's extras)."""
    return {key: value for key, value in answer.items() if key != EXTRAS}


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
    text = "\n".join(line.partition("#")[0] for line in submission.splitlines())
    texts = split_equations(text)
    if not texts:
        raise ParseError("empty submission: no equation")
    equations = []
    for number, equation in enumerate(texts, 1):
        try:
            equations.append(parse_equation(equation, names=task.columns, allow_new_names=True))
        except ParseError as error:
            raise ParseError(f"equation {number} ({_short(equation)}): {error}") from None
    return equations


def _short(value: object, width: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 4] + "...'"


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
