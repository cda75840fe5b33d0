"""Differences judged against the size of the terms that cancel (``fastscore.algebra.equivalence``'s
tolerance bands): a constant within ``rtol`` is not a counterexample where a clamp cancels
to exactly 0, while real differences, in or out of the cancellation, still are.

The clamps are MechBench's ``((1 + |c| - |c - 1|)/2)**2`` (Thermoelastic Heating Response
- Variant 3-4, ``prepared_adhesive_fraction``): exactly 0 for ``c <= 0``."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from fastscore.algebra.equivalence import Domain, compare
from fastscore.problems.formats import load_problems
from fastscore.scoring.validate import validate_problem
from fastscore.text.parse import parse_expression

NAMES = ("T", "r")
X = "(T - 300)**2/r"
MECHANISM = f"((1 + Abs(({X}/2 - 1600)/10400) - Abs(({X}/2 - 1600)/10400 - 1))/2)**2"
EXACT = f"(Abs(3200 - {X})/20800 - Abs(24000 - {X})/20800 + 1)**2/4"  # the task's own answer
DECIMAL = "4.8076923076923e-05"  # 1/20800 to 14 digits (off by 1.6e-14)


def _answer(constant: str, extra: str = "") -> str:
    return f"(Abs(3200 - {X})*{constant} - Abs(24000 - {X})*{constant} + 1)**2/4{extra}"


@pytest.fixture(scope="module")
def domain() -> Domain:
    rng = np.random.default_rng(7)
    n = 600
    points = np.array([rng.uniform(330, 800, n), rng.uniform(2, 20, n)])
    return Domain(names=NAMES, points=points, sampled=NAMES, positive=frozenset(NAMES))


def _verdict(candidate: str, reference: str, domain: Domain):
    return compare(parse_expression(candidate, names=NAMES), parse_expression(reference, names=NAMES),
                   domain=domain)


def test_the_domain_holds_the_clamped_region(domain):
    exposure = (domain.points[0] - 300) ** 2 / domain.points[1]
    assert 50 < np.sum(exposure <= 3200) < 550  # exactly 0 there, positive elsewhere


@pytest.mark.slow
@pytest.mark.parametrize("swap", [False, True])
def test_a_decimal_constant_that_cancels_to_a_residue_is_equivalent(domain, swap):
    pair = (_answer(DECIMAL), MECHANISM)
    verdict = _verdict(*(pair[::-1] if swap else pair), domain)
    assert verdict.provenance == "numeric", verdict


def test_the_exact_answer_agrees_where_both_sides_are_exactly_zero(domain):
    assert _verdict(EXACT, MECHANISM, domain).equivalent
    assert _verdict(_answer("(1/20800)"), MECHANISM, domain).equivalent


@pytest.mark.parametrize("constant", ["4.8125e-05", "4.80817e-05"])  # 1e-3 and 1e-4 off
def test_a_clamp_whose_constant_is_off_beyond_rtol_differs(domain, constant):
    verdict = _verdict(_answer(constant), MECHANISM, domain)
    assert verdict.provenance == "different", verdict
    example = verdict.counterexample
    exposure = (example["T"] - 300) ** 2 / example["r"]
    if exposure <= 3200:  # a counterexample in the clamped region: the residue is beyond the band
        assert example["reference"] == 0.0 and example["candidate"] > 1e-12


def test_a_real_term_hiding_where_the_clamp_cancels_differs(domain):
    # 1e-9 * T/300 is far below rtol of the clamp where it is not 0, but a true value
    # where the reference is exactly 0: beyond what the constants' tolerance leaves there
    verdict = _verdict(_answer(DECIMAL, " + 1e-9*T/300"), MECHANISM, domain)
    assert verdict.provenance == "different", verdict
    assert verdict.counterexample["reference"] == 0.0


def test_cancellation_of_exact_terms_is_judged_by_the_relative_rule(domain):
    # both sides are non-zero where their terms cancel: a factor 2 is a factor 2
    verdict = _verdict("(1 - cos(1e-5*T/r))", "2*(1 - cos(1e-5*T/r))", domain)
    assert verdict.provenance == "different", verdict


def test_a_linear_clamp_off_within_rtol_agrees_and_beyond_differs(domain):
    # (1 + |c|(1 + d) - |c - 1|)/2 at c <= 0 is -c d/2: within rtol of the terms for d = 1e-10
    clamp = "(1 + Abs(c)*{k} - Abs(c - 1))/2".replace("c", f"(({X}/2 - 1600)/10400)")
    reference = clamp.format(k="1")
    assert _verdict(clamp.format(k="1.0000000001"), reference, domain).equivalent
    assert _verdict(clamp.format(k="1.00001"), reference, domain).provenance == "different"


@pytest.mark.slow
def test_validate_accepts_the_decimal_answer_of_the_real_task(tmp_path):
    source = Path(__file__).resolve().parents[1] / "data" / "mechbench-tasks" / "material" / \
        "Thermoelastic Heating Response - Variant 3-4.yaml"
    text = source.read_text()
    decimal = text.replace("conditioning_cooling_rate)/20800 - Abs", f"conditioning_cooling_rate)*{DECIMAL} - Abs")
    decimal = decimal.replace("conditioning_cooling_rate)/20800 + 1", f"conditioning_cooling_rate)*{DECIMAL} + 1")
    assert decimal.count(DECIMAL) == 2
    (tmp_path / source.name).write_text(decimal)
    problem, = load_problems(tmp_path)
    findings = {f.check: f for f in validate_problem(problem)}
    assert findings["probe:prepared_adhesive_fraction"].ok, findings["probe:prepared_adhesive_fraction"]
    assert findings["probe:prepared_adhesive_fraction"].detail == "numeric"
    assert all(f.ok for f in findings.values())
