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
from fastscore.equivalence import Domain, Quantity
from fastscore.kernels import compile_tape, evaluate
from fastscore.parse import parse_equation, parse_expression, symbol
from fastscore.problems import Problem
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.solve import Solution, SolveError, solve_mechanism

SEGMENTS = ("domain", "train", "id_test", "ood_test")


class ProblemFormulaError(ValueError):
    """The problem's own formulas cannot be used (a problem-file error, not a submission's)."""


@dataclass(frozen=True)
class Reference:
    """Everything needed to score submissions to one problem."""

    problem: Problem
    knowns: tuple[str, ...]
    constants: Mapping[se.Basic, se.Basic]
    law: Quantity
    probes: Mapping[str, Quantity]
    mechanism: Solution | None
    mechanism_error: str | None
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


def reference_equations(problem: Problem, constants: Mapping[se.Basic, se.Basic]) -> list[tuple[se.Basic, se.Basic]]:
    """The problem's own mechanism equations, parsed, with ``constants`` substituted."""
    names = (*problem.known_names, problem.target.name, *(v.name for v in problem.intermediates))
    equations = []
    for equation in problem.mechanism:
        lhs, rhs = parse_equation(equation.text, names=names)
        equations.append((lhs.subs(constants), rhs.subs(constants)))
    return equations


def solve_reference_mechanism(problem: Problem, points: Mapping[str, np.ndarray], *,
                              constants: Mapping[se.Basic, se.Basic], budget: float) -> Solution:
    """Solve the problem's own mechanism for its target (raises ``SolveError``)."""
    return solve_mechanism(reference_equations(problem, constants), knowns=problem.known_names,
                           target=problem.target.name, points=points, budget=budget)


def build_reference(problem: Problem, *, settings: Settings = DEFAULT_SETTINGS,
                    splits: Splits | None = None) -> Reference:
    """Prepare a problem's reference: parse its law and probes, solve its mechanism,
    make (or take) its splits, draw the equivalence points and evaluate the reference
    quantities on all of them."""
    knowns = tuple(problem.known_names)
    constants = constant_substitutions(problem)
    try:
        law = read_expression(problem.law, target=problem.target.name, names=knowns).subs(constants)
    except ValueError as error:
        raise ProblemFormulaError(f"{problem.task_id}: phenomenological_formula: {error}") from None
    sampled = tuple(v.name for v in problem.observed)
    constant_values = {c.name: c.value for c in problem.constants}
    names = (*sampled, *constant_values)
    drawn = sample_inputs(problem, region="domain", n=settings.n_points,
                          rng=problem_rng(problem, settings.point_seed, _POINT_STREAM))
    mechanism, mechanism_error = _solve_or_none(problem, {**drawn, **constant_values}, constants, settings)
    if splits is None:
        splits = make_splits(problem, _target_function(problem, law, names, constant_values, mechanism),
                             n=settings.n_samples, seed=settings.data_seed)
    blocks, segments, start = [], {}, 0
    for segment in SEGMENTS:
        rows = drawn if segment == "domain" else splits.columns(segment)
        n = len(next(iter(rows.values())))
        blocks.append(_matrix(rows, sampled, constant_values, n))
        segments[segment] = slice(start, start + n)
        start += n
    points = np.ascontiguousarray(np.concatenate(blocks, axis=1))
    positive = frozenset(v.name for v in problem.observed if v.sampling.min > 0)
    positive |= frozenset(name for name, value in constant_values.items() if value > 0)
    domain = Domain(names=names, points=points, sampled=sampled, positive=positive)

    probes = {probe.name: Quantity.bounded(_probe_expression(problem, probe, knowns, constants, mechanism), domain)
              for probe in problem.probes}
    return Reference(problem=problem, knowns=knowns, constants=constants, law=Quantity.bounded(law, domain),
                     probes=probes, mechanism=mechanism, mechanism_error=mechanism_error, domain=domain, segments=segments, splits=splits)


_POINT_STREAM = 1


def _solve_or_none(problem: Problem, points, constants, settings: Settings) -> tuple[Solution | None, str | None]:
    """The solved reference mechanism, or None and the reason."""
    if not problem.mechanism:
        return None, "the problem has no mechanism"
    try:
        return solve_reference_mechanism(problem, points, constants=constants, budget=settings.solve_budget), None
    except (SolveError, ValueError) as error:
        return None, str(error)


def _target_function(problem: Problem, law: se.Basic, names, constant_values, mechanism: Solution | None):
    """The split generator's target: the law's value, NaN where the law or any derived
    quantity of the reference mechanism is not a finite real number."""
    tape = compile_tape(law, names)
    internal = [] if mechanism is None else [
        v.name for v in problem.intermediates if v.name in mechanism.expressions or v.name in mechanism.numeric]

    def target(points: Mapping[str, np.ndarray]) -> np.ndarray:
        n = len(next(iter(points.values())))
        y = evaluate(tape, _matrix(points, names[:len(names) - len(constant_values)], constant_values, n))
        if internal:
            derived = mechanism.values(internal, {**points, **constant_values})
            y = np.where(np.all([np.isfinite(v) for v in derived.values()], axis=0), y, np.nan)
        return y
    return target


def _probe_expression(problem: Problem, probe, knowns, constants, mechanism: Solution | None) -> se.Basic:
    """A probe's reference expression: its ``formula``, else its closed form in the
    problem's own mechanism."""
    if probe.formula is not None:
        try:
            return read_expression(probe.formula, target=probe.name, names=knowns).subs(constants)
        except ValueError as error:
            raise ProblemFormulaError(f"{problem.task_id}: probe {probe.name}: {error}") from None
    if mechanism is None or probe.name not in mechanism.expressions:
        raise ProblemFormulaError(f"{problem.task_id}: probe {probe.name}: no formula given and the "
                                  "mechanism gives it no closed form")
    return mechanism.expressions[probe.name]


def _matrix(points: Mapping[str, np.ndarray], sampled, constants: Mapping[str, float], n: int) -> np.ndarray:
    rows = [np.asarray(points[name], dtype=float) for name in sampled]
    rows += [np.full(n, value) for value in constants.values()]
    return np.ascontiguousarray(np.vstack(rows)) if rows else np.zeros((0, n))
