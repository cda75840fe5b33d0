"""Real laws that are exactly right are ``proven``; near misses are not.

The six attempts of ``tests/data/real/proofs`` (MechBench's published Core-set runs, MIT,
repository ``yuzhTHU/mdbench``) are laws MechBench's harness proves symbolically.  Each
mechanism defines ``pi = 3.141592653589793`` itself: that name means the quantity it
defines (the decimal written), so its law is exactly the task's, whose ``pi0`` is the
same decimal.  Near misses: a constant off in its last digit, the constant pi where the
task has a decimal, a coarser decimal pi, a root of a quantity that can be negative."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastscore.algebra.canonical import prove_equal
from fastscore.problems.formats import load_problems
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
from fastscore.text.answers import defined_constants, split_equations
from fastscore.text.parse import parse_expression

DATA = Path(__file__).resolve().parents[1] / "data" / "real" / "proofs"
ORIGINAL = "Circular Orbit - Original"
KEPLER = ("G = 6.6743e-11\npi = 3.141592653589793\nomega = sqrt(G*central_mass/(radius*radius*radius))\n"
          "period = 2.0*pi/omega\nperiod_squared = period*period\n")


@pytest.fixture(scope="module")
def references():
    return {p.task_id: build_reference(p) for p in load_problems(DATA / "tasks")}


def _rows(task: str, mechanisms, probes=None) -> list[dict]:
    return [{"config": "c", "run": i, "task": task, "mechanism": m,
             **({} if probes is None else {"probes": json.dumps(probes)})} for i, m in enumerate(mechanisms)]


@pytest.mark.slow
def test_the_six_real_attempts_the_harness_proves_are_proven(references):
    rows = [json.loads(line) for line in (DATA / "sweep.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(r["harness_law_symbolic"] for r in rows)
    verdicts = []
    for task in sorted({r["task"] for r in rows}):
        batch = [{**r, "probes": json.dumps(r["probes"])} for r in rows if r["task"] == task]
        scores, _ = score_task(references[task], batch)
        verdicts += [(s["task"], s["config"], s["run"], s["status"], s["p_verdict"]) for s in scores]
    assert len(verdicts) == 6
    assert all(status == "ok" and verdict == "proven" for *_, status, verdict in verdicts), verdicts


@pytest.mark.parametrize("change, verdict", [
    (("pi = 3.141592653589793", "pi = 3.141592653589794"), "numeric"),  # pi off in its last digit
    (("G = 6.6743e-11", "G = 6.674300000000001e-11"), "numeric"),  # G off in its last digit
    (("pi = 3.141592653589793\n", ""), "numeric"),  # the constant pi, not the task's decimal
    (("pi = 3.141592653589793", "pi = 3.14159"), "different"),  # the decimal written counts
    (("pi = 3.141592653589793", "pi = 3.14"), "different"),  # a quantity, not an inconsistent pi
])
def test_near_misses_of_a_real_attempt_are_not_proven(references, change, verdict):
    mechanism = KEPLER.replace(*change)
    assert mechanism != KEPLER
    scores, _ = score_task(references[ORIGINAL], _rows(ORIGINAL, [KEPLER, mechanism]))
    assert [s["status"] for s in scores] == ["ok", "ok"]
    assert [s["p_verdict"] for s in scores] == ["proven", verdict]


def test_a_root_of_a_quantity_that_can_be_negative_is_not_proven(references):
    """``sqrt((radius - 1)**2)`` is ``radius - 1`` on the domain (radius >= 1e7) but not
    for every positive radius: equivalent, not proven."""
    law = "period_squared = 4*pi^2*radius^3/(G*central_mass)*sqrt((radius - 1)^2)/(radius - 1)"
    scores, _ = score_task(references[ORIGINAL], _rows(ORIGINAL, [KEPLER.replace(
        "period_squared = period*period\n", law)]))
    assert scores[0]["status"] == "ok" and scores[0]["p_verdict"] == "numeric"


def test_a_probe_answer_means_the_pi_its_mechanism_defines(references):
    """The answer's ``pi`` is the mechanism's decimal: exactly the task's probe."""
    answer = {"speed_squared": "speed_squared = 4*pi^2*radius^2/period_squared"}
    _, probes = score_task(references[ORIGINAL], _rows(ORIGINAL, [KEPLER], answer))
    assert [(p["probe"], p["probe_verdict"]) for p in probes] == [("speed_squared", "proven")]
    near = {"speed_squared": "speed_squared = 4*3.141592653589794^2*radius^2/period_squared"}  # last digit off
    _, probes = score_task(references[ORIGINAL], _rows(ORIGINAL, [KEPLER], near))
    assert [(p["probe"], p["probe_verdict"]) for p in probes] == [("speed_squared", "numeric")]


def test_only_a_constant_that_is_a_whole_left_side_is_defined():
    assert defined_constants(split_equations("pi = 3.14; y = 2*pi*x")) == ("pi",)
    assert defined_constants(split_equations(" π=3.14 ; y = π*x")) == ("π",)
    assert defined_constants(split_equations("y = 2*pi*x; 2*pi = z")) == ()
    assert defined_constants(split_equations("pix = 3; y = pi*x")) == ()


POSITIVE = frozenset({"r", "M"})
REFERENCE = "4*3.141592653589793^2*r^3/(M*6.67430e-11)"


@pytest.mark.parametrize("law", [
    "(2.0*3.141592653589793/sqrt(6.6743e-11*M/(r*r*r)))*(2.0*3.141592653589793/sqrt(6.6743e-11*M/(r*r*r)))",
    "(2*3.141592653589793/sqrt(0.000000000066743*M/r^2*r)*r)^2",  # a root of a product, nested
    "(2*3.141592653589793*sqrt(r^3/(6.6743e-11*M)))^2",  # r^3 under a root
    "(2*3.141592653589793*r^1.5/sqrt(6.6743e-11*M))^2",  # a decimal exponent
    "((4*3.141592653589793^2*r^3/(M*6.67430e-11))^(1/4))^4",  # a root of a root, raised back
    "4*3.141592653589793^2/(6.6743e-11*M)*sqrt(r)^6",
])
def test_the_shapes_of_the_real_laws_are_proven_from_their_decimals(law):
    assert prove_equal(parse_expression(law, names=("r", "M")), parse_expression(REFERENCE, names=("r", "M")),
                       positive=POSITIVE) is not None


@pytest.mark.parametrize("law", [
    "(2*3.141592653589793/sqrt(6.6744e-11*M/r^3))^2",  # G off in its last digit
    "(2*3.141592653589794/sqrt(6.6743e-11*M/r^3))^2",  # pi off in its last digit
    "(2*pi/sqrt(6.6743e-11*M/r^3))^2",  # the constant pi against its decimal
])
def test_near_misses_of_those_shapes_are_not_proven(law):
    assert prove_equal(parse_expression(law, names=("r", "M")), parse_expression(REFERENCE, names=("r", "M")),
                       positive=POSITIVE) is None


def test_a_root_of_a_square_needs_a_positive_base():
    x, y = parse_expression("sqrt(r^2)", names=("r",)), parse_expression("r", names=("r",))
    assert prove_equal(x, y, positive=frozenset({"r"})) is not None
    assert prove_equal(x, y, positive=frozenset()) is None
    assert prove_equal(parse_expression("sqrt(r^6)", names=("r",)), parse_expression("r^3", names=("r",)),
                       positive=frozenset()) is None
