"""The problem library: the composed instances of MechBench-style families.

Every subset S of {1…5} of a family's mutations gives one instance (32 per family;
S = ∅ is the Original): its mechanism is the Original's with the mutations of S
merged in (the family files and the merge are ``fastscore.library.families``'), and its
phenomenal law and probe formulas are *derived* by solving that composed mechanism
(``fastscore.solve.mechanism``), never written by hand.  ``library_files`` gives every
generated file (``scripts/build_library.py`` writes them).
"""
from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import numpy as np
import yaml

from fastscore.library.families import (
    N_MUTATIONS,
    Family,
    FamilyError,
    Mechanism,
    apply_mutation,
    load_families,
    original_mechanism,
)
from fastscore.problems.model import Equation, Probe, Problem, Variable
from fastscore.problems.splits import sample_inputs
from fastscore.scoring.reference import solve_reference_mechanism
from fastscore.solve.mechanism import SolveError
from fastscore.support.collector import paused
from fastscore.text.parse import parse_equation, parse_expression
from fastscore.text.tokens import ParseError

__all__ = ["compose", "composed_mechanism", "core_set", "instance_task_id", "instances", "instance_yaml",
           "library_files"]

CORE_SET_FILE = "core-set.txt"
MAX_PROBES = 5
SOLVE_POINTS = 64  # domain points for the solver's branch choice and the validity check
SOLVE_SEED = 20240531
SOLVE_BUDGET = 20.0  # seconds per instance


# ------------------------------------------------------------------ composition


def composed_mechanism(family: Family, subset: Iterable[int]) -> Mechanism:
    """The mechanism of the instance with mutations ``subset``."""
    mechanism = original_mechanism(family)
    for index in sorted(set(subset)):
        mechanism = apply_mutation(mechanism, family.mutation(index))
    return mechanism


def instance_task_id(family: Family | str, subset: Iterable[int]) -> str:
    """``<family>/original`` or ``<family>/variant-1-2`` (sorted mutation indices)."""
    name = family if isinstance(family, str) else family.name
    indices = sorted(set(subset))
    return f"{name}/original" if not indices else f"{name}/variant-{'-'.join(map(str, indices))}"


def compose(family: Family, subset: frozenset[int]) -> Problem:
    """The problem of the instance with mutations ``subset``: composed mechanism, its
    derived law and probe formulas (raises ``FamilyError`` with the reason when the
    composed mechanism has no unique closed-form solution valid over the sampling domain)."""
    subset = frozenset(subset)
    if not subset <= set(range(1, N_MUTATIONS + 1)):
        raise FamilyError(f"{family.name}: mutation indices must lie in 1..{N_MUTATIONS}, got {sorted(subset)}")
    task_id = instance_task_id(family, subset)
    mechanism = composed_mechanism(family, subset)
    equations = tuple(Equation(text=r.text(), description=r.description) for r in mechanism)
    used: set[str] = set()
    for equation in equations:
        lhs, rhs = parse_equation(equation.text, names=family.names)
        used |= {s.name for s in (lhs.free_symbols | rhs.free_symbols)}
    if family.target.name not in used:
        raise FamilyError(f"{task_id}: the target {family.target.name} appears in no relation")
    probe_names = _probe_names(family, subset, mechanism)
    draft = Problem(
        task_id=task_id,
        name=f"{family.title} - {'Original' if not subset else 'Variant ' + '-'.join(map(str, sorted(subset)))}",
        description=family.description, target=family.target,
        inputs=tuple(v for v in family.inputs if v.name in used), auxiliary_inputs=(),
        intermediates=tuple(v for v in family.intermediates if v.name in used),
        constants=tuple(c for c in family.constants if c.name in used),
        law="", mechanism=equations, family=family.name, domain=family.domain,
        mutations=tuple(sorted(subset)), probes=(), source=family.source,
    )
    missing = [p for p in probe_names if p not in {v.name for v in draft.intermediates}]
    if missing:
        raise FamilyError(f"{task_id}: probe(s) {', '.join(missing)} not in the composed mechanism")
    law, probes = _derive(draft, probe_names)
    return replace(draft, law=f"{family.target.name} = {law}",
                   probes=tuple(Probe(name=name, description=_description(family, name),
                                      formula=f"{name} = {text}") for name, text in probes))


def _probe_names(family: Family, subset: frozenset[int], mechanism: Mechanism) -> tuple[str, ...]:
    if not subset:
        names = family.original_probes
    else:
        original = {r.id: r for r in family.relations}
        added = {r.id: r for r in mechanism}
        names = tuple(
            probe for index in sorted(subset) for edit in family.mutation(index).edits
            if (probe := (added if edit.kind == "add_relation" else original)[edit.target].probe) is not None
        )
    names = tuple(dict.fromkeys(names))
    if not 1 <= len(names) <= MAX_PROBES:
        raise FamilyError(f"{instance_task_id(family, subset)}: needs 1 to {MAX_PROBES} probes, has {len(names)}")
    return names


def _description(family: Family, name: str) -> str:
    return next(v.description for v in family.intermediates if v.name == name)


def _derive(problem: Problem, probe_names: tuple[str, ...]) -> tuple[str, list[tuple[str, str]]]:
    """Solve ``problem``'s mechanism: the law's text and each probe's text, checked to
    re-parse to the same expression and to be real and finite over the sampling domain."""
    constants = {c.name: c.value for c in problem.constants}
    drawn = sample_inputs(problem, region="domain", n=SOLVE_POINTS, rng=np.random.default_rng(SOLVE_SEED))
    points = {**drawn, **constants}
    try:
        solution = solve_reference_mechanism(problem, points, constants={}, budget=SOLVE_BUDGET)
    except (SolveError, ParseError) as error:
        raise FamilyError(f"{problem.task_id}: the composed mechanism does not solve: {error}") from None
    texts = []
    for name in (problem.target.name, *probe_names):
        expr = solution.expressions.get(name)
        if expr is None:
            raise FamilyError(f"{problem.task_id}: {name} has no closed form in the inputs")
        text = str(expr)
        try:
            again = parse_expression(text, names=problem.known_names)
        except ParseError as error:
            raise FamilyError(f"{problem.task_id}: the text of {name} does not re-parse: {error}") from None
        if again != expr and not (again - expr).expand().is_zero:
            raise FamilyError(f"{problem.task_id}: the text of {name} re-parses to a different expression")
        values = solution.values([name], points)[name]
        if not np.all(np.isfinite(values)):
            raise FamilyError(f"{problem.task_id}: {name} is not real and finite over the sampling domain")
        texts.append((name, text))
    return texts[0][1], texts[1:]


def instances(family: Family) -> list[Problem]:
    """All 32 instances of ``family``, the Original first, then by number of mutations."""
    subsets = sorted((frozenset(c) for k in range(N_MUTATIONS + 1)
                      for c in itertools.combinations(range(1, N_MUTATIONS + 1), k)),
                     key=lambda s: (len(s), sorted(s)))
    return [compose(family, subset) for subset in subsets]


def core_set(families: Iterable[Family]) -> list[str]:
    """Task ids of the Core-set instances of ``families`` (relative to the library directory)."""
    return [instance_task_id(f, subset) for f in families
            for subset in sorted(f.core_set, key=lambda s: (len(s), sorted(s)))]


# ------------------------------------------------------------------ writing


def _variable_data(variable: Variable) -> dict:
    data = {"name": variable.name, "description": variable.description, "unit": variable.unit}
    if variable.sampling is not None:
        s = variable.sampling
        data["sampling"] = {"min": s.min, "max": s.max, "ood_boundary": s.ood_boundary,
                            "distribution": s.distribution}
    return data


def instance_yaml(problem: Problem) -> str:
    """The problem file text of a composed instance (MDBench fields + fastscore's)."""
    data = {
        "problem_name": problem.name,
        "phenomenological_formula": problem.law,
        "problem_description": problem.description,
        "family": problem.family,
        "domain": problem.domain,
        "mutations": list(problem.mutations),
        "variable_description": {
            "target": _variable_data(problem.target),
            "inputs": [_variable_data(v) for v in problem.inputs],
            "intermediates": [_variable_data(v) for v in problem.intermediates],
            "auxiliary_inputs": [],
        },
        "constants": [{"name": c.name, "description": c.description, "value": c.value, "unit": c.unit}
                      for c in problem.constants],
        "mechanism": [{"formula": e.text, "formula_description": e.description} for e in problem.mechanism],
        "probes": [{"name": p.name, "description": p.description, "formula": p.formula} for p in problem.probes],
    }
    header = f"# Generated by scripts/build_library.py from {Path(problem.source).name}; do not edit.\n"
    return header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000)


def library_files(directory: str | Path) -> dict[str, str]:
    """Every generated file of the library in ``directory``: relative path -> text.

    ``<family>/<instance>.yaml`` for the 32 instances of each family and
    ``core-set.txt`` (one task id a line).  The instances are solved with the garbage
    collector paused (``fastscore.support.collector``)."""
    families = load_families(directory)
    with paused():
        files = {f"{problem.task_id}.yaml": instance_yaml(problem) for family in families
                 for problem in instances(family)}
    files[CORE_SET_FILE] = "".join(f"{task_id}\n" for task_id in core_set(families))
    return files
