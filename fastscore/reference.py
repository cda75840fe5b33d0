"""The reference side of one problem, prepared once per worker and reused for every
submission: parsed law and probes, data splits, equivalence points and the reference
values on them."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

import numpy as np
import symengine as se

from fastscore.data import Splits, make_splits, problem_rng, sample_inputs
from fastscore.equivalence import Domain
from fastscore.kernels import compile_tape, evaluate
from fastscore.parse import parse_equation, parse_expression, symbol
from fastscore.precision import Evaluator, compile_mp
from fastscore.problems import Problem
from fastscore.settings import DEFAULT_SETTINGS, Settings

SEGMENTS = ("domain", "train", "id_test", "ood_test")


class ProblemFormulaError(ValueError):
    """The problem's own formulas cannot be used (a problem-file error, not a submission's)."""


@dataclass(frozen=True)
class Expected:
    """One reference quantity: expression, its high-precision evaluator and its values
    at every point of the domain."""

    expr: se.Basic
    mp: Evaluator
    values: np.ndarray


@dataclass(frozen=True)
class Reference:
    """Everything needed to score submissions to one problem."""

    problem: Problem
    knowns: tuple[str, ...]
    constants: Mapping[se.Basic, se.Basic]
    law: Expected
    probes: Mapping[str, Expected]
    domain: Domain
    segments: Mapping[str, slice]
    splits: Splits

    def observed(self, split: str) -> np.ndarray:
        """The target values of a split."""
        return getattr(self.splits, split)[0]

    def columns(self, segment: str) -> slice:
        """Columns of ``domain.points`` that hold a segment's points."""
        return self.segments[segment]


def read_expression(text: str, *, target: str, names, allow_new_names: bool = False) -> se.Basic:
    """Parse ``target = expr`` or a bare ``expr``; the left side, if any, must be the target."""
    if "=" in text:
        lhs, rhs = parse_equation(text, names=(*names, target), allow_new_names=allow_new_names)
        if lhs != symbol(target):
            raise ValueError(f"left-hand side must be {target!r}, got {str(lhs)!r}")
        return rhs
    return parse_expression(text, names=names, allow_new_names=allow_new_names)


def constant_substitutions(problem: Problem) -> dict[se.Basic, se.Basic]:
    """Declared constants whose value is pi become ``se.pi`` (e.g. MDBench's ``π``)."""
    return {symbol(c.name): se.pi for c in problem.constants if math.isclose(c.value, math.pi, rel_tol=1e-15)}


def build_reference(problem: Problem, *, settings: Settings = DEFAULT_SETTINGS,
                    splits: Splits | None = None) -> Reference:
    """Prepare a problem's reference: parse its law and probes, make (or take) its
    splits, draw the equivalence points and evaluate the reference on them."""
    knowns = tuple(problem.known_names)
    constants = constant_substitutions(problem)
    try:
        law = read_expression(problem.law, target=problem.target.name, names=knowns).subs(constants)
    except ValueError as error:
        raise ProblemFormulaError(f"{problem.task_id}: phenomenological_formula: {error}") from None
    sampled = tuple(v.name for v in (*problem.inputs, *problem.auxiliary_inputs))
    constant_rows = {c.name: c.value for c in problem.constants}
    names = (*sampled, *constant_rows)
    law_tape = compile_tape(law, names)

    def target(points: Mapping[str, np.ndarray]) -> np.ndarray:
        n = len(next(iter(points.values())))
        return evaluate(law_tape, _matrix(points, sampled, constant_rows, n))

    if splits is None:
        splits = make_splits(problem, target, n=settings.n_samples, seed=settings.data_seed)
    rng = problem_rng(problem, settings.point_seed)
    drawn = sample_inputs(problem, region="domain", n=settings.n_points, rng=rng)
    blocks = [_matrix(drawn, sampled, constant_rows, settings.n_points)]
    segments, start = {"domain": slice(0, settings.n_points)}, settings.n_points
    for split in ("train", "id_test", "ood_test"):
        rows = splits.columns(split)
        n = len(rows[problem.target.name])
        blocks.append(_matrix(rows, sampled, constant_rows, n))
        segments[split] = slice(start, start + n)
        start += n
    points = np.ascontiguousarray(np.concatenate(blocks, axis=1))
    positive = frozenset(v.name for v in (*problem.inputs, *problem.auxiliary_inputs)
                         if v.sampling is not None and v.sampling.min > 0)
    positive |= frozenset(name for name, value in constant_rows.items() if value > 0)
    domain = Domain(names=names, points=points, sampled=sampled, positive=positive)

    def expected(expr: se.Basic) -> Expected:
        return Expected(expr, compile_mp(expr), evaluate(compile_tape(expr, names), points))

    probes = {}
    for probe in problem.probes:
        if probe.formula is None:
            continue
        try:
            expr = read_expression(probe.formula, target=probe.name, names=knowns).subs(constants)
        except ValueError as error:
            raise ProblemFormulaError(f"{problem.task_id}: probe {probe.name}: {error}") from None
        probes[probe.name] = expected(expr)
    return Reference(problem=problem, knowns=knowns, constants=constants, law=expected(law),
                     probes=probes, domain=domain, segments=segments, splits=splits)


def _matrix(points: Mapping[str, np.ndarray], sampled, constants: Mapping[str, float], n: int) -> np.ndarray:
    rows = [np.asarray(points[name], dtype=float) for name in sampled]
    rows += [np.full(n, value) for value in constants.values()]
    return np.ascontiguousarray(np.vstack(rows)) if rows else np.zeros((0, n))
