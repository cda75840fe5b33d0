"""The reference side of one problem, prepared once per worker and reused for every
submission: parsed law and probes, data splits, equivalence points and the reference
values on them."""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Mapping

import numpy as np
import symengine as se

from fastscore.algebra.agreement import agree
from fastscore.algebra.equivalence import Domain, Quantity, judge
from fastscore.algebra.sizes import count_nodes
from fastscore.kernels import evaluate
from fastscore.problems.model import Problem
from fastscore.problems.splits import SPLITS, Split, Splits, make_splits, problem_rng, sample_inputs
from fastscore.scoring.written import written_values
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.solve.mechanism import SolveError, solve_mechanism
from fastscore.solve.solution import Solution
from fastscore.tapes.compile import UnsupportedExpression, compile_tape
from fastscore.text.answers import read_expression
from fastscore.text.parse import parse_equation, parse_expression, symbol

SEGMENTS = ("domain", *SPLITS)


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
    warnings: tuple[tuple[str, str], ...] = ()
    """(check, message) pairs: probes the law or the task's context may give away."""

    def target_values(self, split: Split) -> np.ndarray:
        """The target values of a split."""
        return getattr(self.splits, split)[0]

    def segment_slice(self, segment: str) -> slice:
        """The slice of ``domain.points``' columns that holds a segment's points."""
        return self.segments[segment]

    @cached_property
    def points(self) -> dict[str, np.ndarray]:
        """Values of every known at the reference's points (domain sample and splits): the
        points a submission's mechanism is solved and evaluated on."""
        return {name: self.domain.points[i] for i, name in enumerate(self.domain.names)}

    def own_blocks(self, settings: Settings) -> dict:
        """The blocks of the problem's own mechanism solved in closed form over ``points``
        with ``settings`` (``solve_mechanism``'s ``solved_blocks``; computed once per
        reference and rtol): a batch's solves start from a copy, so a submission that
        shares a block with the reference mechanism (its steady-state balance, say)
        takes its closed forms, as it would take those of another submission solved before."""
        cache = self._own_blocks
        key = (settings.rtol, settings.solve_budget)
        if key not in cache:
            blocks: dict = {}
            if self.problem.mechanism:
                try:
                    solve_mechanism(reference_equations(self.problem, self.constants), knowns=self.knowns,
                                    target=self.problem.target.name, points=self.points,
                                    budget=settings.solve_budget, rtol=settings.rtol, solved_blocks=blocks)
                except (SolveError, ValueError):
                    pass  # the blocks solved before the failure are kept: each is right on its own
            cache[key] = blocks
        return cache[key]

    @cached_property
    def _own_blocks(self) -> dict:
        return {}  # (rtol, budget) -> `own_blocks`

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("points", "_own_blocks")}  # rebuilt on use


def constant_substitutions(problem: Problem) -> dict[se.Basic, se.Basic]:
    """Declared constants whose value is pi become ``se.pi`` (e.g. MDBench's ``π``)."""
    return {symbol(c.name): se.pi for c in problem.constants if math.isclose(c.value, math.pi, rel_tol=1e-15)}


def coefficient_substitutions(problem: Problem) -> dict[se.Basic, se.Basic]:
    """The problem's private fixed coefficients (MechBench ``k = 1.4``) as exact numbers,
    for its own formulas only (a submission's ``k`` is its own quantity)."""
    return {symbol(c.name): parse_expression(c.formula) for c in problem.coefficients}


def _formula_names(problem: Problem) -> tuple[str, ...]:
    """Names the problem's own formulas may use: knowns, target, internal quantities, coefficients."""
    return (*problem.known_names, problem.target.name, *(v.name for v in problem.intermediates),
            *(c.name for c in problem.coefficients))


def _own_substitutions(problem: Problem) -> dict[se.Basic, se.Basic]:
    return {**constant_substitutions(problem), **coefficient_substitutions(problem)}


def reference_equations(problem: Problem, constants: Mapping[se.Basic, se.Basic]) -> list[tuple[se.Basic, se.Basic]]:
    """The problem's own mechanism equations, parsed, with ``constants`` and its fixed
    coefficients substituted."""
    names = _formula_names(problem)
    substitutions = {**constants, **coefficient_substitutions(problem)}
    equations = []
    for equation in problem.mechanism:
        lhs, rhs = parse_equation(equation.text, names=names)
        equations.append((lhs.subs(substitutions), rhs.subs(substitutions)))
    return equations


def solve_reference_mechanism(problem: Problem, points: Mapping[str, np.ndarray], *,
                              constants: Mapping[se.Basic, se.Basic], budget: float,
                              rtol: float = DEFAULT_SETTINGS.rtol) -> Solution:
    """Solve the problem's own mechanism for its target (raises ``SolveError``)."""
    return solve_mechanism(reference_equations(problem, constants), knowns=problem.known_names,
                           target=problem.target.name, points=points, budget=budget, rtol=rtol)


def _own_formula(problem: Problem, text: str, *, target: str, what: str, mechanism: Solution | None,
                 mechanism_error: str | None) -> se.Basic:
    """One of the problem's own formulas (law, probe answer) in the knowns: internal
    quantities in it are expanded through the reference mechanism's solution, as
    MechBench's harness does (``answer: e`` is the mechanism's value of ``e``)."""
    knowns = set(problem.known_names)
    try:
        expr = read_expression(text, target=target, names=_formula_names(problem)).subs(_own_substitutions(problem))
    except ValueError as error:
        raise ProblemFormulaError(f"{problem.task_id}: {what}: {error}") from None
    internal = {s for s in expr.free_symbols if s.name not in knowns}
    if not internal:
        return expr
    closed = {} if mechanism is None else mechanism.expressions
    missing = sorted(s.name for s in internal if s.name not in closed)
    if missing:
        why = mechanism_error if mechanism is None else "it has no closed form for them"
        raise ProblemFormulaError(f"{problem.task_id}: {what}: uses {', '.join(missing)}, which the reference "
                                  f"mechanism does not give ({why})")
    return expr.xreplace({s: closed[s.name] for s in internal})


def build_reference(problem: Problem, *, settings: Settings = DEFAULT_SETTINGS,
                    splits: Splits | None = None) -> Reference:
    """Prepare a problem's reference: solve its mechanism, parse its law and probes
    (expanded through the mechanism where they name internal quantities), make (or take:
    ``splits``, else the problem's own) its splits, draw the equivalence points and
    evaluate the reference quantities on all of them."""
    knowns = tuple(problem.known_names)
    constants = constant_substitutions(problem)
    sampled = tuple(v.name for v in problem.observed)
    constant_values = {c.name: c.value for c in problem.constants}
    names = (*sampled, *constant_values)
    drawn = sample_inputs(problem, region="domain", n=settings.n_points,
                          rng=problem_rng(problem, settings.point_seed, _POINT_STREAM))
    mechanism, mechanism_error = _solve_or_none(problem, {**drawn, **constant_values}, constants, settings)
    law = _own_formula(problem, problem.law, target=problem.target.name, what="phenomenological_formula",
                       mechanism=mechanism, mechanism_error=mechanism_error)
    if splits is None:
        splits = problem.splits
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

    probes = {probe.name: Quantity.bounded(_probe_expression(problem, probe, mechanism, mechanism_error), domain)
              for probe in problem.probes}
    law_quantity = Quantity.bounded(law, domain)
    warnings = tuple((f"probe:{name}", message) for name, quantity in probes.items()
                     if (message := probe_warning(quantity, law_quantity, domain, segments["domain"], settings)))
    return Reference(problem=problem, knowns=knowns, constants=constants, law=law_quantity,
                     probes=probes, mechanism=mechanism, mechanism_error=mechanism_error, domain=domain,
                     segments=segments, splits=splits, warnings=warnings)


def probe_warning(probe: Quantity, law: Quantity, domain: Domain, columns: slice, settings: Settings) -> str | None:
    """Why a probe may be inferred from the law alone, or None.  MechBench's rule is that
    a probe cannot be *inferred* from the law and the task's context; these are the
    mathematical hints (a warning, not a failure): the probe is constant over the domain,
    is the law itself, or is a function of the law alone (one input; or its gradient in
    the inputs is parallel to the law's everywhere: every 2x2 minor
    ``dz/dxi*dy/dxj - dz/dxj*dy/dxi`` vanishes, so ``z = g(y)``)."""
    finite = probe.values[np.isfinite(probe.values)]
    if finite.size == 0 or np.ptp(finite) <= settings.rtol * np.max(np.abs(finite)):
        return "the probe is constant over the domain"
    if judge(probe, law, domain=domain, settings=settings).equivalent:
        return "the probe is the target law itself"
    inputs = [name for name in domain.sampled if symbol(name) in law.expr.free_symbols
              or symbol(name) in probe.expr.free_symbols]
    if len(inputs) < 2:
        return "the probe is a function of the law alone (one input)"
    if _parallel_gradients(probe, law, inputs, domain, columns, settings):
        return "the probe is a function of the law alone (its gradient is parallel to the law's everywhere)"
    return None


SYMBOLIC_GRADIENT_NODES = 300
"""Formulas up to this size are differentiated symbolically; larger ones (a solved
coupled block) by central differences of their tapes, judged with ``FD_RTOL``."""
FD_RTOL = 1e-3


def _parallel_gradients(probe: Quantity, law: Quantity, inputs, domain: Domain, columns: slice,
                        settings: Settings) -> bool:
    """True when every 2x2 minor of the Jacobian of (probe, law) in ``inputs`` vanishes at
    every domain point (relative to the size of its two products)."""
    points = domain.points[:, columns]
    symbolic = max(count_nodes(probe.expr), count_nodes(law.expr)) <= SYMBOLIC_GRADIENT_NODES
    gradients = {}
    for name in inputs:
        try:
            if not symbolic:
                raise UnsupportedExpression("large formula")
            tapes = [compile_tape(se.diff(e, symbol(name)), domain.names) for e in (probe.expr, law.expr)]
            gradients[name] = evaluate(tapes, points)
        except UnsupportedExpression:
            symbolic = False
            gradients[name] = _central_difference((probe, law), domain, points, name)
    tolerance = settings.rtol if symbolic else max(settings.rtol, FD_RTOL)
    for i, first in enumerate(inputs):
        for second in inputs[i + 1:]:
            left = gradients[first][0] * gradients[second][1]
            right = gradients[second][0] * gradients[first][1]
            usable = np.isfinite(left) & np.isfinite(right)
            if usable.any() and not agree(left[usable], right[usable], rtol=tolerance).all():
                return False
    return True


def _central_difference(quantities, domain: Domain, points: np.ndarray, name: str) -> np.ndarray:
    """d/d(name) of each quantity at the points, by a central difference of its tape."""
    tapes = [q.tape or compile_tape(q.expr, domain.names) for q in quantities]
    row = domain.names.index(name)
    step = 1e-5 * np.maximum(np.abs(points[row]), 1e-300)
    up, down = points.copy(), points.copy()
    up[row] += step
    down[row] -= step
    with np.errstate(all="ignore"):
        return (evaluate(tapes, up) - evaluate(tapes, down)) / (2 * step)


_POINT_STREAM = 1


def _solve_or_none(problem: Problem, points, constants, settings: Settings) -> tuple[Solution | None, str | None]:
    """The solved reference mechanism, or None and the reason."""
    if not problem.mechanism:
        return None, "the problem has no mechanism"
    try:
        return solve_reference_mechanism(problem, points, constants=constants, budget=settings.solve_budget,
                                         rtol=settings.rtol), None
    except (SolveError, ValueError) as error:
        return None, str(error)


def _target_function(problem: Problem, law: se.Basic, names, constant_values, mechanism: Solution | None):
    """The split generator's target: the law's value (its text evaluated in written order,
    as MDBench does, ``fastscore.scoring.written``, where it can be), NaN where the law or any
    derived quantity of the reference mechanism is not a finite real number."""
    tape = compile_tape(law, names)
    internal = [] if mechanism is None else [
        v.name for v in problem.intermediates if v.name in mechanism.expressions or v.name in mechanism.numeric]

    def target(points: Mapping[str, np.ndarray]) -> np.ndarray:
        n = len(next(iter(points.values())))
        y = written_values(problem.law, {**points, **constant_values})  # MDBench's values, bit for bit
        if y is None:
            y = evaluate(tape, _matrix(points, names[:len(names) - len(constant_values)], constant_values, n))
        if internal:
            derived = mechanism.values(internal, {**points, **constant_values})
            y = np.where(np.all([np.isfinite(v) for v in derived.values()], axis=0), y, np.nan)
        return y
    return target


def _probe_expression(problem: Problem, probe, mechanism: Solution | None, mechanism_error: str | None) -> se.Basic:
    """A probe's reference expression: its ``formula`` (expanded through the mechanism),
    else its closed form in the problem's own mechanism."""
    if probe.formula is not None:
        return _own_formula(problem, probe.formula, target=probe.name, what=f"probe {probe.name}",
                            mechanism=mechanism, mechanism_error=mechanism_error)
    if mechanism is None or probe.name not in mechanism.expressions:
        raise ProblemFormulaError(f"{problem.task_id}: probe {probe.name}: no formula given and the "
                                  "mechanism gives it no closed form")
    return mechanism.expressions[probe.name]


def _matrix(points: Mapping[str, np.ndarray], sampled, constants: Mapping[str, float], n: int) -> np.ndarray:
    rows = [np.asarray(points[name], dtype=float) for name in sampled]
    rows += [np.full(n, value) for value in constants.values()]
    return np.ascontiguousarray(np.vstack(rows)) if rows else np.zeros((0, n))
