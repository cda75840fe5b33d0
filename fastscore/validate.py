"""``fastscore validate``: every problem's mechanism derives its stated law, and every
probe is a genuine internal quantity of that mechanism.

Checks per problem:
- ``reference``: the law and probe formulas parse; the splits can be drawn;
- ``mechanism``: the mechanism solves for the target (``fastscore.solve``);
- ``law``: the derived law is equivalent to the stated ``phenomenological_formula``;
- per probe: ``probe:NAME`` — the probe is an unknown of the mechanism, its stated
  formula (if any) is equivalent to the mechanism's value for it, it varies over the
  domain (a constant is no probe of the mechanism), it is not the target law, and, with
  two or more inputs, it is not a function of the law alone: its gradient in the inputs must not be parallel to the law's everywhere
  (every 2x2 minor ``dz/dxi*dy/dxj - dz/dxj*dy/dxi`` vanishing would mean ``z = g(y)``,
  which the law alone fixes).  Needs closed forms; numeric-only probes skip this part.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np
import symengine as se

from fastscore.equivalence import Quantity, agree, judge
from fastscore.kernels import compile_tape, evaluate
from fastscore.parse import symbol
from fastscore.problems import Problem
from fastscore.reference import Reference, build_reference
from fastscore.settings import DEFAULT_SETTINGS, Settings


@dataclass(frozen=True)
class Finding:
    """The outcome of one check on one problem."""

    task: str
    check: str
    ok: bool
    detail: str = ""


def validate_problems(problems: Iterable[Problem], *, settings: Settings = DEFAULT_SETTINGS) -> Iterator[Finding]:
    """Findings for every check of every problem, problem by problem."""
    for problem in problems:
        yield from validate_problem(problem, settings=settings)


def validate_problem(problem: Problem, *, settings: Settings = DEFAULT_SETTINGS) -> list[Finding]:
    """Findings for one problem (see module doc)."""
    task = problem.task_id
    try:
        reference = build_reference(problem, settings=settings)
    except ValueError as error:
        return [Finding(task, "reference", False, str(error))]
    solution = reference.mechanism
    if solution is None:
        return [Finding(task, "mechanism", False, reference.mechanism_error)]
    findings = [Finding(task, "mechanism", True, "closed form" if solution.law is not None else
                        f"numeric root finding for {', '.join(solution.numeric)}")]
    derived = _values(reference, problem.target.name)
    verdict = judge(Quantity(solution.law, derived), reference.law, domain=reference.domain, settings=settings)
    findings.append(Finding(task, "law", verdict.equivalent, f"{verdict.provenance}: {verdict.reason}"))
    for name, expected in reference.probes.items():
        findings.append(_check_probe(reference, name, expected, settings))
    return findings


def _values(reference: Reference, name: str) -> np.ndarray:
    points = {n: reference.domain.points[i] for i, n in enumerate(reference.domain.names)}
    return reference.mechanism.values([name], points)[name]


def _check_probe(reference: Reference, name: str, expected, settings: Settings) -> Finding:
    task, check = reference.problem.task_id, f"probe:{name}"
    solution = reference.mechanism
    if name not in solution.expressions and name not in solution.numeric:
        return Finding(task, check, False, "not an internal quantity of the mechanism")
    mechanism_values = _values(reference, name)
    verdict = judge(Quantity(solution.expressions.get(name), mechanism_values), expected,
                    domain=reference.domain, settings=settings)
    if not verdict.equivalent:
        return Finding(task, check, False, f"formula disagrees with the mechanism: {verdict.provenance}: "
                                           f"{verdict.reason}")
    same_as_law = judge(expected, reference.law, domain=reference.domain, settings=settings)
    if same_as_law.equivalent:
        return Finding(task, check, False, "the probe is the target law itself")
    finite = expected.values[np.isfinite(expected.values)]
    if finite.size == 0 or np.ptp(finite) <= settings.rtol * np.max(np.abs(finite)):
        return Finding(task, check, False, "the probe is constant over the domain")
    if _function_of_law(reference, expected.expr, settings):
        return Finding(task, check, False, "the probe is a function of the law alone (its gradient is "
                                           "parallel to the law's everywhere)")
    return Finding(task, check, True, verdict.provenance)


def _function_of_law(reference: Reference, probe: se.Basic, settings: Settings) -> bool:
    """True when every 2x2 minor of the Jacobian of (probe, law) in the inputs vanishes
    at every domain point (relative to the size of its two products).  With fewer than
    two inputs every probe is locally some function of the law, so nothing is flagged."""
    inputs = [name for name in reference.domain.sampled if symbol(name) in reference.law.expr.free_symbols
              or symbol(name) in probe.free_symbols]
    if len(inputs) < 2:
        return False
    names, points = reference.domain.names, reference.domain.points
    columns = reference.columns("domain")
    gradients = {}
    for name in inputs:
        tapes = [compile_tape(se.diff(e, symbol(name)), names) for e in (probe, reference.law.expr)]
        gradients[name] = evaluate(tapes, points[:, columns])
    for i, first in enumerate(inputs):
        for second in inputs[i + 1:]:
            left = gradients[first][0] * gradients[second][1]
            right = gradients[second][0] * gradients[first][1]
            usable = np.isfinite(left) & np.isfinite(right)
            if usable.any() and not agree(left[usable], right[usable], settings).all():
                return False
    return True
