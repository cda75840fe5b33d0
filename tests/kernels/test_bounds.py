"""Error-bounded evaluation (``kernels.bounds``) and the float64 screen (``kernels.screen``).

The bounds are checked against an independent 50-digit mpmath evaluation of the
corpus formulas (``tests/verdict_corpus.py``, which never uses fastscore): wherever a
bound is finite it must hold, and where float64 loses its digits (cancellation,
underflow) the bound must say so.
"""
from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from fastscore.algebra import canonical, equivalence
from fastscore.algebra.equivalence import Domain, Quantity, Verdict, _separated, judge
from fastscore.algebra.precision import Precise
from fastscore.kernels import classify, evaluate, evaluate_bounded, screen, worst
from fastscore.tapes.compile import compile_tape
from fastscore.text.parse import parse_expression
from tests.support.verdict_corpus import CASES, DIGITS, mp_value, sample

POINTS_PER_FORMULA = 12


def _formulas():
    seen = set()
    for case in CASES:
        for text in (case.candidate, case.reference):
            if (text, case.names) not in seen:
                seen.add((text, case.names))
                yield case, text


@pytest.mark.slow
def test_bounds_hold_against_high_precision_on_the_corpus():
    """Every finite bound covers the true error; values equal the batch kernel's."""
    checked = finite = 0
    for index, (case, text) in enumerate(_formulas()):
        tape = compile_tape(parse_expression(text, names=case.names), case.names)
        points = sample(case, POINTS_PER_FORMULA, seed=index)
        values, bounds = evaluate_bounded(tape, points, np.arange(POINTS_PER_FORMULA))
        np.testing.assert_array_equal(values, evaluate(tape, points))  # bit for bit, NaN where NaN
        with mpmath.workdps(DIGITS):
            for j in range(POINTS_PER_FORMULA):
                exact = mp_value(text, {n: mpmath.mpf(float(points[i, j])) for i, n in enumerate(case.names)})
                checked += 1
                if bounds[j] == 0.0 and math.isnan(values[j]):  # claimed certainly undefined
                    assert exact is None, (text, points[:, j])
                    continue
                if exact is None or not math.isfinite(bounds[j]):
                    continue
                finite += 1
                error = abs(mpmath.mpf(values[j]) - exact)
                slack = abs(exact) * mpmath.mpf(10) ** (5 - DIGITS)  # the mpmath value's own rounding
                assert error <= bounds[j] + slack, (text, points[:, j], values[j], float(exact), bounds[j])
    assert finite > 0.8 * checked  # bounds are known almost everywhere on ordinary formulas


def _bounded(text: str, names: tuple[str, ...], **point: float) -> tuple[float, float]:
    tape = compile_tape(parse_expression(text, names=names), names)
    X = np.array([[point[n]] for n in names])
    values, bounds = evaluate_bounded(tape, X, np.array([0]))
    return float(values[0]), float(bounds[0])


def test_cancellation_gets_a_large_bound():
    """m*c**2*(1/sqrt(1 - v**2/c**2) - 1) at small v: float64 keeps no digit; the bound
    must not claim otherwise (true value ~ m*v**2/2 = 5e-17)."""
    value, bound = _bounded("m*c**2*(1/sqrt(1 - v**2/c**2) - 1)", ("m", "c", "v"), m=1.0, c=3e8, v=1e-8)
    assert abs(value - 5e-17) > 1e-17  # float64 is far off here ...
    assert bound >= abs(value - 5e-17)  # ... and the bound covers it


def test_underflow_in_a_product_is_not_exact():
    """h*exp(-x) = 9e-331 underflows to 0.0: the bound must cover the lost value."""
    value, bound = _bounded("h*exp(-x)", ("h", "x"), h=6.6e-34, x=684.0)
    exact = 6.6e-34 * mpmath.exp(-684)
    assert value == 0.0
    assert bound >= exact


def test_ordinary_formula_has_a_tight_bound():
    value, bound = _bounded("G*M*m/r**2", ("G", "M", "m", "r"), G=6.674e-11, M=5.97e24, m=70.0, r=6.37e6)
    assert 0 < bound < 1e-14 * abs(value)


def test_domain_edges_have_unknown_bounds():
    """Where an uncertain operand sits on a function's edge, no bound is claimed."""
    # sqrt(x - y) with x - y = 0 computed exactly from exact inputs: exact
    assert _bounded("sqrt(x - y)", ("x", "y"), x=2.0, y=2.0) == (0.0, 0.0)
    # x*y - z rounds to 0.0 but is truly -2.8e-17: sqrt of an uncertain 0
    assert _bounded("sqrt(x*y - z)", ("x", "y", "z"), x=3.0, y=0.1, z=3.0 * 0.1)[1] == math.inf
    # log of a rounded product next to 1: the result has no reliable relative accuracy
    assert _bounded("log(x*y)", ("x", "y"), x=3.0, y=(1 + 1e-12) / 3)[1] == math.inf


def test_screen_sorts_points():
    a = np.array([1.0, 2.0, 0.0, np.nan, 5.0, np.inf, np.nan, 1e-300])
    b = np.array([1.0 + 1e-9, 2.1, 0.0, 3.0, np.nan, np.inf, np.nan, 1.0000001e-300])
    screened = screen(a, b, rtol=1e-6, k=3)
    assert screened[:3] == (2, 4, 2)  # trusted: points 0 and 7 (relative agreement, however small the values)
    unreliable, invalid = classify(a, b, rtol=1e-6)
    assert unreliable.tolist() == [1, 2, 3, 4]  # disagreement, 0 == 0, one side finite (twice)
    assert invalid.tolist() == [5, 6]
    assert screened.worst.tolist() == [3, 4, 1]  # NaN on one side (first met first), then 0.1/2.1
    assert screened.apart.tolist() == [7, 0]  # trusted points only: 1e-7, then 1e-9


def test_worst_puts_the_largest_disagreement_first():
    a = np.array([1.0, 2.0, 3.0, np.nan, 10.0])
    b = np.array([1.1, 2.0, 1.0, 1.0, 1.0])
    assert worst(a, b, np.array([0, 1, 2, 3, 4]), k=3).tolist() == [3, 4, 2]  # NaN on one side, then 9, then 2
    assert worst(a, b, np.array([1, 2, 0]), k=8).tolist() == [2, 0, 1]


def test_certified_difference_needs_no_high_precision(monkeypatch):
    """A clear disagreement at a well-conditioned point is settled by the bounds alone."""
    names = ("x", "y")
    rng = np.random.default_rng(3)
    domain = Domain(names=names, points=rng.uniform(1, 2, (2, 300)), sampled=names, positive=frozenset(names))
    candidate = parse_expression("x*y + 1e-3*x", names=names)
    reference = Quantity.bounded(parse_expression("x*y", names=names), domain)

    def forbidden(*args, **kwargs):
        raise AssertionError("high precision used")

    monkeypatch.setattr(Precise, "value", forbidden)
    tape = compile_tape(candidate, names)
    verdict = judge(Quantity(candidate, evaluate(tape, domain.points), tape), reference, domain=domain)
    assert verdict.provenance == "different"
    example = verdict.counterexample
    x, y = example["x"], example["y"]
    assert example["candidate"] == pytest.approx(x * y + 1e-3 * x, rel=1e-12)
    assert example["reference"] == pytest.approx(x * y, rel=1e-12)



def _judge_against(reference_text: str, *, seed: int):
    """``verdict(text)``: a formula in x and y judged against ``reference_text`` over 300
    points drawn from [1, 2) x [1, 2) with ``seed`` (both names positive)."""
    names = ("x", "y")
    points = np.random.default_rng(seed).uniform(1, 2, (2, 300))
    domain = Domain(names=names, points=points, sampled=names, positive=frozenset(names))
    reference = Quantity.bounded(parse_expression(reference_text, names=names), domain)

    def verdict(text: str):
        candidate = parse_expression(text, names=names)
        tape = compile_tape(candidate, names)
        return judge(Quantity(candidate, evaluate(tape, points), tape), reference, domain=domain)

    return verdict


def _judged_without_high_precision(monkeypatch, candidate_text: str, reference_text: str):
    def forbidden(*args, **kwargs):
        raise AssertionError("high precision used")

    monkeypatch.setattr(Precise, "value", forbidden)
    return _judge_against(reference_text, seed=4)(candidate_text)


def test_a_point_certainly_undefined_on_one_side_needs_no_high_precision(monkeypatch):
    """sqrt of an operand certainly below 0: no real value there, while the reference
    certainly has one: different, at that point."""
    verdict = _judged_without_high_precision(monkeypatch, "x*y + sqrt(x - 1.5)", "x*y")
    assert verdict.provenance == "different", verdict
    assert verdict.counterexample["x"] < 1.5 and math.isnan(verdict.counterexample["candidate"])
    assert verdict.reason == "defined at the counterexample on one side only"


def test_a_difference_beside_overflowing_points_needs_no_high_precision(monkeypatch):
    """The worst points are where the candidate overflows (exactly finite, so no bound
    certifies them); the difference is certified at the worst points finite on both sides."""
    verdict = _judged_without_high_precision(monkeypatch, "x*y + exp(400*x)", "x*y")  # inf for x > 1.77
    assert verdict.provenance == "different", verdict
    example = verdict.counterexample
    assert math.isfinite(example["candidate"]) and example["x"] < 1.78
    assert example["candidate"] == pytest.approx(example["x"] * example["y"] + math.exp(400 * example["x"]))


def test_certainly_undefined_values_are_undefined_at_high_precision():
    """A NaN with a bound of 0 is claimed only where the formula has no real value."""
    cases = [("sqrt(x - y)", 1.0, 2.0), ("log(x - y)", 1.0, 2.0), ("cbrt(x - y)", 1.0, 2.0),
             ("(x - y)**0.5 + x", 1.0, 2.0), ("(x - y)**(1/4)", 1.0, 1.5), ("asin(x*y)", 1.5, 1.0),
             ("acos(x + y)", 0.5, 0.6), ("atanh(x/y)", 3.0, 2.0), ("acosh(x - y)", 1.5, 1.0),
             ("x*sqrt(x - 3*y) + y", 2.0, 1.0), ("exp(log(y - x))", 2.0, 1.0)]
    for text, x, y in cases:
        value, bound = _bounded(text, ("x", "y"), x=x, y=y)
        assert math.isnan(value) and bound == 0.0, (text, value, bound)
        with mpmath.workdps(DIGITS):
            assert mp_value(text, {"x": mpmath.mpf(x), "y": mpmath.mpf(y)}) is None, text
    # at an uncertain edge, or where float64 gives NaN for a defined value, nothing is claimed
    point = dict(x=1.9560342718892494, y=1.9478274870593495, w=1.0565513677268088, z=4.025479010948358)
    assert _bounded("x*y*w - z", tuple(point), **point) == (-8.881784197001252e-16, pytest.approx(8.94e-16, rel=1e-2))
    value, bound = _bounded("sqrt(x*y*w - z)", tuple(point), **point)  # below 0 by less than its bound
    assert math.isnan(value) and bound == math.inf
    assert _bounded("exp(x)/(exp(y) + 1)", ("x", "y"), x=800.0, y=800.0)[1] == math.inf  # inf/inf, about 1

def test_cancellation_difference_is_confirmed_at_high_precision():
    """Float64 says the sides differ (cancellation), the bounds cannot certify it, and
    high precision finds them equal: the pair is equivalent."""
    names = ("m", "c", "v")
    points = np.array([[1.0] * 40, [3e8] * 40, np.geomspace(1e-3, 1e3, 40)])
    domain = Domain(names=names, points=points, sampled=("v",), positive=frozenset(names))
    candidate = parse_expression("m*c**2*(1/sqrt(1 - v**2/c**2) - 1)", names=names)
    tape = compile_tape(candidate, names)
    reference = Quantity.bounded(parse_expression("m*c**2*(1 - sqrt(1 - v**2/c**2))/sqrt(1 - v**2/c**2)",
                                                  names=names), domain)
    verdict = judge(Quantity(candidate, evaluate(tape, domain.points), tape), reference, domain=domain)
    assert verdict.equivalent, verdict


def test_apart_picks_the_trusted_points_that_differ_most():
    a = np.array([1.0, 2.0, np.nan, 4.0, 0.0, 7.0])
    b = np.array([1.0, 2.2, 1.0, 4.0 + 4e-6, 1e-300, np.inf])
    assert screen(a, b, rtol=1e-6, k=1).apart.tolist() == [3]  # the only trusted point with a != b
    assert screen(a, b, rtol=1e-2, k=8).apart.tolist() == [3]  # point 1 (0.09) is not trusted at 1e-2
    assert screen(a, b, rtol=0.5, k=8).apart.tolist() == [1, 3]  # it is at 0.5; 0 vs 1e-300 differs by 1


def _corpus_pair(case, seed: int):
    names = case.names
    points = sample(case, 512, seed)
    domain = Domain(names=names, points=points, sampled=tuple(v[0] for v in case.variables))
    candidate = parse_expression(case.candidate, names=names)
    tape = compile_tape(candidate, names)
    reference = Quantity.bounded(parse_expression(case.reference, names=names), domain)
    return Quantity(candidate, evaluate(tape, points), tape), reference, domain


def test_exact_identities_are_never_shown_unequal():
    """The rtol=0 test that skips the proof rung must never fire on an exact identity
    of the corpus (its bounds would be wrong), and should fire on most pairs that are
    only approximately equal (fitted or rounded constants) by more than float64 rounding."""
    exact = approximate = detected = 0
    for index, case in enumerate(CASES):
        if not case.equivalent:
            continue
        candidate, reference, domain = _corpus_pair(case, seed=index)
        points = screen(candidate.values, reference.values, rtol=1e-6).apart
        shown = _separated(candidate, reference, domain, points, rtol=0.0)
        if case.exact:
            exact += 1
            assert shown is None, (case.id, shown)
        elif points.size and _relative(candidate.values[points[0]], reference.values[points[0]]) > 1e-12:
            approximate += 1  # unequal beyond float64 rounding (most decimal-pi pairs are not)
            detected += shown is not None
    assert exact > 100 and approximate > 20
    assert detected >= 0.9 * approximate, (detected, approximate)


def _relative(a: float, b: float) -> float:
    return abs(a - b) / max(abs(a), abs(b))


def test_no_proof_is_tried_for_a_fitted_constant(monkeypatch):
    verdict = _judge_against("x*y/3", seed=5)
    assert verdict("y*(x/3)").provenance == "proven"  # exact: the proof rung runs

    def forbidden(*args, **kwargs):
        raise AssertionError("proof tried")

    monkeypatch.setattr(equivalence, "prove_equal", forbidden)
    fitted = verdict("0.3333333333333*x*y")  # 1e-13 off, within rtol: equivalent, not exactly
    assert fitted.provenance == "numeric", fitted


def test_decimal_pi_skips_the_costly_proof_rules(monkeypatch):
    """A decimal pi is within float64 rounding of pi (the bounds cannot tell them apart),
    but differs at high precision: the expansions are never tried, the verdict is numeric."""
    verdict = _judge_against("pi*x*y/(x + y)", seed=6)
    calls = []
    real_zero_rule = canonical._zero_rule
    monkeypatch.setattr(canonical, "_zero_rule", lambda a, b: calls.append((a, b)) or real_zero_rule(a, b))
    assert verdict("x*y*pi/(y + x)").provenance == "proven"
    assert verdict("pi/(1/x + 1/y)") == Verdict("proven", "rational")  # exact: the expansions run
    assert calls
    calls.clear()
    decimal = verdict("3.141592653589793/(1/x + 1/y)")
    assert decimal.provenance == "numeric", decimal
    assert not calls, "an expansion was tried for a pair that differs at high precision"



def _band(text: str, names: tuple, point: dict, rtol: float) -> tuple[float, float]:
    tape = compile_tape(parse_expression(text, names=names), names)
    X = np.array([[point[n]] for n in names], dtype=np.float64)
    values, bounds = evaluate_bounded(tape, X, np.array([0]), constant_rtol=rtol)
    return float(values[0]), float(bounds[0])


def test_a_tolerance_band_is_rtol_of_the_terms_that_cancel():
    names = ("x", "y")
    value, band = _band("3*x - 3*y", names, {"x": 1.0, "y": 1.0}, 1e-6)
    assert value == 0.0 and 6e-6 <= band <= 6.1e-6  # 1e-6 of each term of size 3
    _, rounding = _band("3*x - 3*y", names, {"x": 1.0, "y": 1.0}, 0.0)
    assert rounding < 1e-14  # without a tolerance: float64 rounding only
    value, band = _band("3*x*7", names, {"x": 2.0, "y": 1.0}, 1e-6)
    assert value == 42.0 and band <= 1e-6 * 42 * 2.01  # two constants, no cancellation


@pytest.mark.parametrize("k", ["1.000001", "0.999", "1.0005"])
def test_the_band_of_a_square_of_a_rough_operand_holds_exactly(k):
    """(1 - k x)**2 near its zero: the first-order rule gives up; the exact bound
    (|a| + e)**2 - a**2 covers every constant within the tolerance."""
    names = ("x",)
    rtol = 1e-3
    value, band = _band(f"(1 - {k}*x)**2", names, {"x": 1.0}, rtol)
    assert math.isfinite(band)
    for moved in np.linspace(float(k) * (1 - rtol), float(k) * (1 + rtol), 41):
        for one in (1 - rtol, 1 + rtol):
            assert abs((one - moved) ** 2 - value) <= band * (1 + 1e-9)
