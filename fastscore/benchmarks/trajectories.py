"""DiscoverPhysics: held-out particle trajectories of a world.

A world (YAML, ``benchmark: discoverphysics``): ``name``, ``world`` (its kind; the
problem's ``family``), ``difficulty``, ``dim`` (1-3), ``variance`` (the reference
variance V_w), ``particles`` (``mass``, ``charge``: one number per particle),
``initial`` (``time``, ``positions``, ``velocities``), ``times`` (the held-out times,
increasing, after the initial time) and ``heldout`` (positions, shape particles x
times x dim).  A held-out position may be missing (``null`` or NaN in every coordinate):
that particle-time pair is not evaluated (a position missing in some coordinates only,
or no pair left to evaluate, is a load error).

A submission (an attempt) is one of
- predicted positions: JSON ``{"trajectories": [...]}`` (or under another of
  ``TRAJECTORY_KEYS``: ``positions``, ``predictions``, ...; or the bare nested list) of
  shape particles x times x dim, every value finite at the evaluated pairs (any value,
  ``null`` included, where the held-out position is missing);
- a law of motion: JSON ``{"acceleration": {"x": ..., "y": ...}, "pairwise": {...},
  "parameters": {name: number}}``, or text lines ``ax = ...``, ``pair_ax = ...``:
  formulas in fastscore's grammar (``fastscore.text.parse``) of the particle's ``x, y, z,
  vx, vy, vz, q, m, t`` and the parameters; a ``pairwise`` formula also of ``dx, dy,
  dz`` (the other particle's position minus this one's), ``r``, ``q_j``, ``m_j`` and is
  summed over the other particles.  It is integrated from the initial state with a
  fixed step (``dp_integrator``: RK4 or velocity Verlet; ``dp_substeps`` steps per
  interval; at most ``dp_max_work`` particle-steps, pairs counted, else ``eval_error``)
  by ``fastscore.kernels.motion``.
The explanation score is the sweep's numeric column ``explanation_score`` (null: no pass).

Per attempt: ``dp_error`` = mean over the evaluated particle-time pairs of the squared distance
between predicted and held-out positions, divided by V_w (inf when a prediction is not
finite); ``dp_pass``: ``dp_error < dp_error_threshold`` and explanation score >=
``dp_explanation_threshold``.  Per configuration: the geometric mean of ``dp_error``
over the worlds' scored attempts (rows without an error, bad input, are left out;
their failure counts in the pass rate; an error below ``ERROR_FLOOR`` counts as it),
the pass rate and its pass@k.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from fastscore.benchmarks.base import BadInput, Benchmark, base_fields, judged_rows, row_of, task_problem, yaml_format

NAME = "discoverphysics"
COLUMNS = {"dp_error": pl.Float64, "dp_pass": pl.Boolean, "dp_submission": pl.Utf8, "dp_steps": pl.Int64,
           "explanation_score": pl.Float64}
MINE = pl.col("domain") == NAME
_SCORED = MINE & pl.col("dp_error").is_not_null() & ~pl.col("dp_error").is_nan()
ERROR_FLOOR = 1e-12
"""``dp_gmean_error`` counts an error below this as this: a perfect prediction's 0 does
not make the geometric mean 0 (an infinite error makes it infinite)."""
RATES = [("dp_pass", "DP pass", pl.col("dp_pass").filter(MINE).fill_null(False).mean(), True),
         ("dp_gmean_error", "DP error (geo. mean)",
          pl.col("dp_error").filter(_SCORED).clip(lower_bound=ERROR_FLOOR).log().mean().exp(), False)]
OUTCOMES = [("dp_pass", "DiscoverPhysics pass", "dp_pass")]

_COMPONENTS = ("x", "y", "z")
_LINE = re.compile(r"^\s*(pair_)?a([xyz])\s*=\s*(.+)$", re.S)
MAX_TEXT = 1 << 22
TRAJECTORY_KEYS = ("trajectories", "positions", "predictions", "predicted", "trajectory")
"""The keys a JSON object of predicted positions may hold them under (the first given)."""


def _array(value, shape: tuple, what: str, evaluated: np.ndarray | None = None) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise BadInput(f"{what}: not an array of numbers of shape {shape}") from None
    if array.shape != shape:
        raise BadInput(f"{what}: shape {array.shape}, expected {shape} (particles, times, dim)"
                       if len(shape) == 3 else f"{what}: shape {array.shape}, expected {shape}")
    finite = np.isfinite(array)
    if not (finite.all() if evaluated is None else finite[evaluated].all()):
        raise BadInput(f"{what}: holds a value that is not finite" + ("" if evaluated is None else
                                                                          " at an evaluated particle-time pair"))
    return array


def normalised_error(predicted: np.ndarray, heldout: np.ndarray, variance: float,
                     evaluated: np.ndarray | None = None) -> float:
    """Mean over the particle-time pairs (those ``evaluated`` marks, when given) of the
    squared distance, over V_w (inf if not finite)."""
    distances = np.sum((predicted - heldout) ** 2, axis=-1)
    error = float(np.mean(distances if evaluated is None else distances[evaluated]) / variance)
    return error if math.isfinite(error) else math.inf


def _law(data: Mapping, dim: int) -> tuple[dict, dict]:
    """(component key -> formula text, parameters) of a law's JSON."""
    formulas = {}
    for part, prefix in (("acceleration", ""), ("pairwise", "pair_")):
        given = data.get(part) or {}
        if not isinstance(given, Mapping):
            raise BadInput(f"{part}: expected an object of components")
        for component, text in given.items():
            name = str(component).lower().removeprefix("a")
            if name not in _COMPONENTS[:dim]:
                raise BadInput(f"{part}: component {str(component)[:20]!r} is not one of {', '.join(_COMPONENTS[:dim])}")
            if not isinstance(text, str):
                raise BadInput(f"{part}.{component}: expected a formula text")
            formulas[prefix + name] = text
    parameters = data.get("parameters") or {}
    if not isinstance(parameters, Mapping):
        raise BadInput("parameters: expected an object of numbers")
    return formulas, parameters


def _law_lines(text: str, dim: int) -> dict:
    formulas = {}
    for i, line in enumerate(text_line for text_line in text.splitlines() if text_line.strip()):
        match = _LINE.match(line)
        if match is None or match.group(2) not in _COMPONENTS[:dim]:
            raise BadInput(f"line {i + 1}: expected 'ax = ...' or 'pair_ax = ...' (components "
                           f"{', '.join(_COMPONENTS[:dim])})")
        formulas[(match.group(1) or "") + match.group(2)] = match.group(3)
    return formulas


def compile_law(formulas: Mapping[str, str], parameters: Mapping, dim: int, limits):
    """Parse and compile a law: (ops, args, starts, depth, has, rows the pairwise tapes
    read, parameter values); raises BadInput."""
    from fastscore.kernels import opcodes
    from fastscore.kernels.motion import MOTION_VARIABLES
    from fastscore.kernels.tape import pack
    from fastscore.tapes.compile import UnsupportedExpression, compile_tape
    from fastscore.text.functions import CONSTANTS, FUNCTION_TABLE
    from fastscore.text.parse import parse_expression
    from fastscore.text.tokens import ParseError
    names = []
    for name, value in parameters.items():
        if not isinstance(name, str) or not name.isidentifier() or name in MOTION_VARIABLES \
                or name in FUNCTION_TABLE or name in CONSTANTS:
            raise BadInput(f"parameter {str(name)[:30]!r}: not a free name")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise BadInput(f"parameter {name}: {str(value)[:30]!r} is not a finite number")
        names.append(name)
    variables = (*MOTION_VARIABLES, *names)
    own = (*MOTION_VARIABLES[:9], *names)
    tapes, has = [], []
    for prefix in ("", "pair_"):
        for component in _COMPONENTS[:dim]:
            text = formulas.get(prefix + component)
            has.append(text is not None)
            try:
                expr = parse_expression(text or "0", names=variables if prefix else own, limits=limits)
                tapes.append(compile_tape(expr, variables))
            except (ParseError, UnsupportedExpression) as error:
                raise BadInput(f"{prefix}a{component}: {error}") from None
    batch = pack(tapes)
    reads = np.zeros(len(variables), dtype=np.bool_)  # the rows the pairwise tapes read
    for tape in tapes[dim:]:
        for code, arg in zip(tape.ops.tolist(), tape.args.tolist()):
            if code in opcodes.WITH_VARIABLE:
                reads[int(arg)] = True
    return (batch.ops.astype(np.int32), batch.args.astype(np.float64), batch.starts.astype(np.int64), batch.depth,
            np.array(has, dtype=np.bool_), reads, np.array([float(parameters[n]) for n in names]))


def simulate(task: Mapping, law, settings) -> tuple[np.ndarray, int]:
    """Positions at the held-out times under a compiled law, and the steps taken."""
    from fastscore.kernels.motion import integrate
    ops, args, starts, depth, has, reads, parameters = law
    n, n_times, dim = task["heldout"].shape
    steps = n_times * settings.dp_substeps
    work = steps * n * (max(n - 1, 1) if has[dim:].any() else 1)
    if work > settings.dp_max_work:
        raise OverflowError(f"{work:,} particle-steps exceed dp_max_work = {settings.dp_max_work:,}")
    out = np.empty((n, n_times, dim))
    integrate(ops, args, starts, depth, has, reads, dim, task["positions"], task["velocities"], task["charge"],
              task["mass"], parameters, task["t0"], task["times"], settings.dp_substeps, settings.dp_integrator, out)
    return out, steps


def score_attempt(task: Mapping, text: str, settings) -> dict:
    """The columns of one attempt (without the pass, which needs the explanation score);
    raises BadInput, or OverflowError past the work bound."""
    if len(text) > MAX_TEXT:
        raise BadInput(f"submission longer than {MAX_TEXT} characters")
    shape, dim = task["heldout"].shape, task["heldout"].shape[2]
    if text.lstrip()[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise BadInput(f"not JSON: {str(error)[:80]}") from None
        key = next((k for k in TRAJECTORY_KEYS if k in data), None) if isinstance(data, Mapping) else None
        if isinstance(data, list) or key is not None:
            predicted = _array(data if isinstance(data, list) else data[key], shape, key or "trajectories",
                               task["evaluated"])
            return {"dp_error": normalised_error(predicted, task["heldout"], task["variance"], task["evaluated"]),
                    "dp_submission": "trajectories", "dp_steps": None}
        if not isinstance(data, Mapping):
            raise BadInput("expected trajectories or a law of motion")
        if data and not any(k in data for k in ("acceleration", "pairwise")):
            raise BadInput('expected predicted positions ({"trajectories": [...]}) or a law of motion '
                           f'({{"acceleration": ..., "pairwise": ...}}); got the keys {", ".join(map(str, data))[:80]}')
        formulas, parameters = _law(data, dim)
    else:
        formulas, parameters = _law_lines(text, dim), {}
    if not formulas:
        raise BadInput("the law of motion gives no acceleration")
    law = compile_law(formulas, parameters, dim, settings.limits)
    predicted, steps = simulate(task, law, settings)
    return {"dp_error": normalised_error(predicted, task["heldout"], task["variance"], task["evaluated"]),
            "dp_submission": "law", "dp_steps": steps}


def _read_task(path: Path, root: Path, data: Mapping):
    dim = data.get("dim")
    if dim not in (1, 2, 3):
        raise ValueError("dim: expected 1, 2 or 3")
    times = np.asarray(data.get("times"), dtype=np.float64)
    try:
        heldout = np.asarray(data.get("heldout"), dtype=np.float64)
    except (TypeError, ValueError):
        heldout = np.empty(0)
    if heldout.ndim != 3 or heldout.shape[1:] != (times.size, dim):
        raise ValueError(f"heldout: expected positions of shape (particles, {times.size}, {dim})")
    finite = np.isfinite(heldout)
    evaluated = finite.all(axis=-1)
    if (finite.any(axis=-1) & ~evaluated).any() or np.isinf(heldout).any():
        raise ValueError("heldout: a position is finite in some coordinates and missing or infinite in others "
                         "(a missing position is null or NaN in every coordinate)")
    if not evaluated.any():
        raise ValueError("heldout: no held-out position to evaluate")
    n = heldout.shape[0]
    particles, initial = data.get("particles") or {}, data.get("initial") or {}
    variance = float(data.get("variance"))
    if not (math.isfinite(variance) and variance > 0):
        raise ValueError("variance: expected a positive number")
    t0 = float(initial.get("time", 0.0))
    if times.size == 0 or not np.all(np.diff(np.concatenate([[t0], times])) > 0):
        raise ValueError("times: expected increasing times after the initial time")
    task = {"heldout": heldout, "times": times, "t0": t0, "variance": variance,
            "evaluated": None if evaluated.all() else evaluated,
            "positions": np.asarray(initial.get("positions"), dtype=np.float64).reshape(n, dim).copy(),
            "velocities": np.asarray(initial.get("velocities"), dtype=np.float64).reshape(n, dim).copy(),
            "mass": np.asarray(particles.get("mass"), dtype=np.float64).reshape(n).copy(),
            "charge": np.asarray(particles.get("charge", [0.0] * n), dtype=np.float64).reshape(n).copy(),
            "difficulty": None if data.get("difficulty") is None else str(data["difficulty"])}
    return task_problem(path, root, benchmark=NAME, task=task, name=str(data.get("name") or path.stem),
                        description=str(data.get("description") or ""), family=data.get("world"))


def score_task(problem, rows: Sequence[Mapping], settings) -> list[dict]:
    """The score rows of a batch of attempts at one world (repeats scored once)."""
    task = problem.task
    base = base_fields(problem, difficulty=task["difficulty"])
    out = []
    for row, status, error, fields in judged_rows(rows, lambda text: (None, score_attempt(task, text, settings))):
        explanation = row.get("explanation_score")
        explanation = float(explanation) if isinstance(explanation, (int, float)) and \
            not isinstance(explanation, bool) else None
        passed = None if status != "ok" else bool(
            fields["dp_error"] < settings.dp_error_threshold and explanation is not None
            and explanation >= settings.dp_explanation_threshold)
        out.append(row_of(row, base, status, error, {**fields, "dp_pass": passed, "explanation_score": explanation}))
    return out


BENCHMARK = Benchmark(NAME, yaml_format("discoverphysics", NAME, _read_task), score_task, COLUMNS)
