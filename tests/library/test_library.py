"""The problem library: family sources, composition, derived laws, generated files."""
from __future__ import annotations

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import symengine as se
from scipy.optimize import least_squares

from fastscore.library.compose import CORE_SET_FILE, compose, core_set, instance_task_id, library_files
from fastscore.library.families import FamilyError, apply_mutation, load_families, load_family, original_mechanism
from fastscore.problems.formats import load_problems
from fastscore.problems.splits import sample_inputs
from fastscore.text.parse import parse_equation, parse_expression, symbol

pytestmark = pytest.mark.slow

LIBRARY = Path(__file__).resolve().parents[2] / "problems" / "mechbench"


@pytest.fixture(scope="module")
def families():
    return load_families(LIBRARY)


@pytest.fixture(scope="module")
def problems():
    return {p.task_id: p for p in load_problems(LIBRARY)}


# ------------------------------------------------------------------ generated files


def test_committed_files_are_what_the_builder_writes():
    expected = library_files(LIBRARY)
    on_disk = {p.relative_to(LIBRARY).as_posix() for p in LIBRARY.glob("*/*.yaml")} | {CORE_SET_FILE}
    assert set(expected) == on_disk
    stale = [path for path, text in expected.items() if (LIBRARY / path).read_text(encoding="utf-8") != text]
    assert stale == [], "run scripts/build_library.py"


def test_every_family_has_32_loadable_instances(families, problems):
    assert len(families) == 8
    assert Counter(f.domain for f in families) == {"physics": 2, "chemistry": 2, "biology": 2, "materials": 2}
    assert len(problems) == 256
    for family in families:
        mine = [p for p in problems.values() if p.family == family.name]
        assert sorted(p.mutations for p in mine) == sorted(
            tuple(c) for k in range(6) for c in itertools.combinations(range(1, 6), k))
        for p in mine:
            assert p.task_id == instance_task_id(family, p.mutations)
            assert p.domain == family.domain
            assert 1 <= len(p.probes) <= 5
    assert problems["vacancy-diffusion/original"].mutations == ()
    assert problems["vacancy-diffusion/variant-1-2"].mutations == (1, 2)


def test_core_set_has_ten_instances_per_family(families, problems):
    ids = (LIBRARY / CORE_SET_FILE).read_text(encoding="utf-8").split()
    assert ids == core_set(families)
    assert len(ids) == 80 and set(ids) <= set(problems)
    for family in families:
        sizes = sorted(len(problems[i].mutations) for i in ids if i.startswith(f"{family.name}/"))
        assert sizes == [0, 1, 1, 2, 2, 3, 3, 4, 4, 5]


# ------------------------------------------------------------------ composition


def _rendered(mechanism):
    return [(r.id, r.text(), r.description) for r in mechanism]


def test_composition_does_not_depend_on_the_order(families):
    for family in families:
        reference = None
        for order in itertools.permutations(range(1, 6)):
            mechanism = original_mechanism(family)
            for index in order:
                mechanism = apply_mutation(mechanism, family.mutation(index))
            if reference is None:
                reference = _rendered(mechanism)
            assert _rendered(mechanism) == reference, (family.name, order)


def test_vacancy_diffusion_variant_1_2_matches_the_hand_derivation(problems):
    p = problems["vacancy-diffusion/variant-1-2"]
    assert [q.name for q in p.probes] == ["cm", "Eb"]
    point = {"T": 950.0, "p": 2.0e9, "a": 3.6e-10, **{c.name: c.value for c in p.constants}}
    kT = point["kB"] * point["T"]
    cv = math.exp(-(point["Ef"] + point["p"] * point["Omega"]) / kT)
    cm = cv / (1 + 3 * math.exp(-point["Et"] / kT))
    eb = point["Em"] + point["Omega"] * point["p"] ** 2 / point["pref"]
    d = point["a"] ** 2 * cm * point["nu"] * math.exp(-eb / kT) / 6
    probes = {q.name: q.formula for q in p.probes}
    assert _value(p.law, point) == pytest.approx(d, rel=1e-12)
    assert _value(probes["cm"], point) == pytest.approx(cm, rel=1e-12)
    assert _value(probes["Eb"], point) == pytest.approx(eb, rel=1e-12)


def _value(text: str, point: dict[str, float]) -> float:
    expr = parse_expression(text.split("=", 1)[1], names=tuple(point))
    return float(expr.subs({symbol(n): v for n, v in point.items()}))


# ------------------------------------------------------------------ a small family with known answers


def _toy_family(tmp_path: Path, *, mutation_5: str = "z = x + 1", leak_2: str = "k*x") -> Path:
    path = tmp_path / "toy.family.yaml"
    path.write_text(f"""
family: toy
title: Toy
domain: physics
description: A toy balance.
target: {{name: y, description: output, unit: '1'}}
inputs:
- {{name: x, description: input, unit: '1', sampling: {{min: 1.0, ood_boundary: 2.0, max: 3.0, distribution: uniform}}}}
constants:
- {{name: k, value: 0.5, unit: '1', description: leak coefficient}}
intermediates:
- {{name: w, description: base, unit: '1'}}
- {{name: z, description: sink, unit: '1'}}
relations:
- id: w
  equation: w = x
  description: Base.
  probe: w
- id: bal
  balance:
    left: {{out: y}}
    right: {{base: w}}
  description: Balance.
  probe: w
original_probes: [w]
mutations:
- index: 1
  name: m1
  kind: source term in a balance
  description: Leak and square.
  edits:
  - add_terms: bal
    right: {{leak: k*x, square: x**2}}
    description: Leak and square terms.
- index: 2
  name: m2
  kind: source term in a balance
  description: The same leak.
  edits:
  - add_terms: bal
    right: {{leak: {leak_2}}}
    description: Leak term.
- index: 3
  name: m3
  kind: nonlinear constitutive response
  description: Doubled base term.
  edits:
  - replace_term: bal
    side: right
    term: base
    expr: 2*w
    description: Base doubled.
- index: 4
  name: m4
  kind: changed geometric constraint
  description: Tripled base.
  edits:
  - replace: w
    equation: w = 3*x
    description: Base tripled.
- index: 5
  name: m5
  kind: leakage term in a balance
  description: A sink.
  edits:
  - add_relation:
      id: zr
      equation: {mutation_5}
      description: Sink.
      probe: z
  - add_terms: bal
    left: {{sink: z}}
    description: Sink term.
core_set: [[], [1], [2], [1, 2], [3, 4], [1, 2, 3], [3, 4, 5], [1, 2, 3, 4], [2, 3, 4, 5], [1, 2, 3, 4, 5]]
""", encoding="utf-8")
    return path


def test_union_of_terms_keeps_each_term_once(tmp_path):
    family = load_family(_toy_family(tmp_path))
    both = compose(family, frozenset({1, 2}))
    balance = next(e.text for e in both.mechanism if e.text.startswith("y"))
    assert balance == "y = w + k*x + x**2"
    assert _value(both.law, {"x": 2.0, "k": 0.5}) == pytest.approx(2 + 1 + 4)  # leak counted once
    everything = compose(family, frozenset(range(1, 6)))
    # y + z = 2*w + k*x + x**2 with w = 3*x, z = x + 1
    assert _value(everything.law, {"x": 2.0, "k": 0.5}) == pytest.approx(12 + 1 + 4 - 3)
    assert [p.name for p in everything.probes] == ["w", "z"]
    assert everything.task_id == "toy/variant-1-2-3-4-5"


def test_conflicting_terms_are_refused(tmp_path):
    with pytest.raises(FamilyError, match="conflicts"):
        load_family(_toy_family(tmp_path, leak_2="2*k*x"))


def test_a_mechanism_without_a_real_solution_is_refused_with_the_reason(tmp_path):
    family = load_family(_toy_family(tmp_path, mutation_5="z = sqrt(x - 5)"))
    compose(family, frozenset({1, 2}))
    with pytest.raises(FamilyError, match="real and finite|does not solve"):
        compose(family, frozenset({5}))


@pytest.mark.parametrize("old, new, field, message", [
    ("ood_boundary: 2.0, max: 3.0", "ood_boundary: 3.0, max: 3.0",
     "inputs[0].sampling", "expected min < ood_boundary < max, got min=1, ood_boundary=3, max=3"),
    ("distribution: uniform", "distribution: normal",
     "inputs[0].sampling.distribution", "expected one of uniform, log_uniform, got 'normal'"),
    ("min: 1.0, ood_boundary: 2.0, max: 3.0, distribution: uniform",
     "min: 0.0, ood_boundary: 2.0, max: 3.0, distribution: log_uniform",
     "inputs[0].sampling.min", "log_uniform needs min > 0, got 0"),
    ("{name: w, description: base, unit: '1'}", "{name: w, description: base}",
     "intermediates[0]", "missing required field 'unit'"),
    ("{name: w, description: base, unit: '1'}", "{name: w, description: ' ', unit: '1'}",
     "intermediates[0].description", "expected non-empty text"),
    ("{name: w, description: base, unit: '1'}", "{name: w, description: base, unit: '1', sampling: 1}",
     "intermediates[0]", "unknown field(s) sampling; expected description, name, unit"),
    ("{name: k, value: 0.5,", "{name: k, value: .inf,", "constants[0].value", "expected a finite number, got inf"),
    ("{name: k, value: 0.5,", "{name: k, value: 0.5, symbol: kk,",
     "constants[0]", "unknown field(s) symbol; expected description, name, unit, value"),
    ("{name: x,", "{name: 2x,", "inputs[0].name", "expected a name (letters, digits, '_'), got '2x'"),
])
def test_family_field_errors_name_file_and_field(tmp_path, old, new, field, message):
    path = _toy_family(tmp_path)
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(FamilyError) as info:
        load_family(path)
    assert str(info.value).startswith(f"{path}: {field}: "), str(info.value)
    assert message in str(info.value), str(info.value)


def test_family_descriptions_are_read_without_surrounding_blanks(tmp_path):
    path = _toy_family(tmp_path)
    path.write_text(path.read_text(encoding="utf-8").replace("description: base,", "description: '  base  ',", 1),
                    encoding="utf-8")
    family = load_family(path)
    assert family.intermediates[0].description == "base"
    assert family.inputs[0].sampling.ood_boundary == 2.0 and family.constants[0].unit == "1"


# ------------------------------------------------------------------ derived law vs the mechanism


def _numeric_root(problem, point: dict[str, float], start: dict[str, float]) -> dict[str, float]:
    """Solve the mechanism's equations at ``point`` by least squares from ``start``."""
    names = (*point, problem.target.name, *(v.name for v in problem.intermediates))
    unknowns = [problem.target.name, *(v.name for v in problem.intermediates)]
    given = {symbol(n): v for n, v in point.items()}
    sides = []
    for equation in problem.mechanism:
        lhs, rhs = parse_equation(equation.text, names=names)
        sides += [lhs.subs(given), rhs.subs(given)]
    f = se.Lambdify([symbol(n) for n in unknowns], sides)
    scale = np.array([abs(start[n]) or 1.0 for n in unknowns])

    def residuals(u):
        values = np.asarray(f(u * scale), dtype=float)
        lhs, rhs = values[0::2], values[1::2]
        return (lhs - rhs) / (np.abs(lhs) + np.abs(rhs) + 1e-300)

    x0 = np.array([start[n] for n in unknowns]) / scale
    fit = least_squares(residuals, x0, xtol=1e-15, ftol=1e-15, gtol=1e-15, method="lm")
    assert np.max(np.abs(fit.fun)) < 1e-10
    return dict(zip(unknowns, fit.x * scale))


def test_derived_law_solves_the_composed_mechanism(families, problems):
    from fastscore.scoring.reference import solve_reference_mechanism

    rng = np.random.default_rng(7)
    for family in families:
        for subset in ((), (1, 2, 3, 4, 5), tuple(sorted(rng.choice(5, size=2, replace=False) + 1))):
            p = problems[instance_task_id(family, subset)]
            constants = {c.name: c.value for c in p.constants}
            for _ in range(2):
                drawn = sample_inputs(p, region="domain", n=1, rng=rng)
                point = {**{name: float(v[0]) for name, v in drawn.items()}, **constants}
                solution = solve_reference_mechanism(p, {k: np.array([v]) for k, v in point.items()},
                                                     constants={}, budget=20.0)
                unknowns = [p.target.name, *(v.name for v in p.intermediates)]
                exact = {n: float(v[0]) for n, v in solution.values(unknowns, point).items()}
                start = {n: v * (1 + 0.1 * rng.uniform(-1, 1)) for n, v in exact.items()}
                root = _numeric_root(p, point, start)
                law = _value(p.law, point)
                assert root[p.target.name] == pytest.approx(law, rel=1e-7), p.task_id
                for probe in p.probes:
                    assert root[probe.name] == pytest.approx(_value(probe.formula, point), rel=1e-7, abs=1e-300)
