"""``fastscore validate``: every problem's mechanism derives its stated law, and every
probe is a genuine internal quantity of that mechanism.

Checks per problem (a failed check makes the problem invalid):
- ``reference``: the law and probe formulas parse; the splits can be drawn;
- ``mechanism``: the mechanism solves for the target (``fastscore.solve.mechanism``);
- ``law``: the derived law is equivalent to the stated law;
- per probe: ``probe:NAME`` — the probe is a quantity of the mechanism and its stated
  formula (if any) is equivalent to the mechanism's value for it.

A problem whose checks raise an unexpected error (a bug in fastscore) fails one check,
``internal``, with the error's type and message: the other problems are validated
all the same.

Warnings (reported, the problem stays valid): a probe the law alone may give away
(``fastscore.scoring.reference.probe_warning``: constant, the law itself, or a function of the
law).  MechBench's rule is that a probe cannot be *inferred* from the law and the
task's context, which needs the mechanism, not mathematics alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

import numpy as np

from fastscore.algebra.equivalence import Quantity, judge
from fastscore.problems.model import Problem
from fastscore.scoring.reference import Reference, build_reference
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.support.collector import paused


@dataclass(frozen=True)
class Finding:
    """The outcome of one check on one problem."""

    task: str
    check: str
    ok: bool
    detail: str = ""
    warning: bool = False


def validate_problems(problems: Iterable[Problem], *, settings: Settings = DEFAULT_SETTINGS) -> Iterator[Finding]:
    """Findings for every check of every problem, problem by problem (the garbage
    collector paused for each, ``fastscore.support.collector``); a non-law benchmark's task has no checks."""
    from fastscore.benchmarks import law_problems
    for problem in law_problems(problems):
        with paused():
            findings = validate_problem(problem, settings=settings)
        yield from findings


def validate_problem(problem: Problem, *, settings: Settings = DEFAULT_SETTINGS) -> list[Finding]:
    """Findings for one problem (see module doc); an unexpected error is its ``internal``
    finding, never the end of the run."""
    try:
        return _validate_problem(problem, settings)
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as error:  # noqa: BLE001 - one task's bug must not stop the others
        message = str(error).splitlines()[0] if str(error) else ""
        return [Finding(problem.task_id, "internal", False,
                        f"internal error: {type(error).__name__}{': ' + message if message else ''}")]


def _validate_problem(problem: Problem, settings: Settings) -> list[Finding]:
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
    findings += [Finding(task, check, True, message, warning=True) for check, message in reference.warnings]
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
    return Finding(task, check, True, verdict.provenance)
