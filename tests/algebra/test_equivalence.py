"""The equivalence engine against a corpus of pairs with independent truth.

The corpus and its truth helpers live in ``tests/verdict_corpus.py``: every case's
truth is re-established there with plain mpmath, never with fastscore.  Here every
case is judged by ``fastscore.algebra.equivalence.compare`` with default settings.
"""
from __future__ import annotations

import math
from collections import Counter

import mpmath
import numpy as np
import pytest
import symengine as se

from fastscore.algebra.canonical import prove_equal
from fastscore.algebra.equivalence import Domain, compare
from fastscore.settings import DEFAULT_SETTINGS
from fastscore.text.parse import parse_expression
from tests.support.verdict_corpus import CASES, Case, difference_at, mp_value, relative_difference, sample, truth_of

N_POINTS = DEFAULT_SETTINGS.n_points + 3 * DEFAULT_SETTINGS.n_samples


def domain_of(case: Case, *, seed: int) -> Domain:
    """The engine's view of a case, sized as ``fastscore.scoring.reference`` builds it (``n_points``
    domain points plus three splits of ``n_samples``), all drawn over the whole domain;
    positive names as the reference derives them (min > 0, constants > 0)."""
    points = sample(case, N_POINTS, seed)
    positive = {name for name, lo, _, _ in case.variables if lo > 0}
    positive |= {name for name, value in case.constants if value > 0}
    return Domain(names=case.names, points=points, sampled=tuple(v[0] for v in case.variables),
                  positive=frozenset(positive))


def verdict_of(case: Case, index: int):
    names = case.names
    candidate = parse_expression(case.candidate, names=names)
    reference = parse_expression(case.reference, names=names)
    return compare(candidate, reference, domain=domain_of(case, seed=1000 + index))


def _params():
    for index, case in enumerate(CASES):
        marks = [pytest.mark.xfail(strict=True, reason=case.bug)] if case.bug else []
        if index % 5:  # the fast loop (-m "not slow") judges every fifth case; the full suite all of them
            marks.append(pytest.mark.slow)
        yield pytest.param(index, case, id=case.id, marks=marks)


@pytest.mark.parametrize(("index", "case"), list(_params()))
def test_corpus_case(index: int, case: Case):
    """Independent truth holds; the verdict matches it; a counterexample is real."""
    assert truth_of(case) is case.equivalent, "the declared truth is not what mpmath finds"
    verdict = verdict_of(case, index)
    if case.equivalent:
        assert verdict.provenance in ("proven", "numeric"), verdict
        if verdict.provenance == "proven":
            assert case.exact, f"only approximately equal, yet proven by {verdict.reason!r}"
        return
    assert not verdict.equivalent, f"WRONG EQUIVALENT: {verdict}"
    assert verdict.provenance == "different", verdict
    example = dict(verdict.counterexample)
    point = {name: example[name] for name, _, _, _ in case.variables} | dict(case.constants)
    assert difference_at(case, point) > DEFAULT_SETTINGS.rtol, f"counterexample shows no difference: {example}"


def test_corpus_size_and_mix():
    """At least 300 pairs, both truths well represented, every required theme present."""
    assert len(CASES) >= 300
    truths = Counter(case.equivalent for case in CASES)
    assert truths[True] >= 100 and truths[False] >= 100
    tags = {case.tag.split("/")[0] for case in CASES}
    for theme in ("sqrt", "log-exp", "cancellation", "singularity", "near-miss", "names", "magnitude",
                  "positivity", "pendulum", "bohr"):
        assert theme in tags
    assert any(case.tag.endswith("/fit1e-9") for case in CASES)
    assert any(case.tag.endswith("/fit1e-3") for case in CASES)
    assert any(case.tag.endswith("/decimal-pi") for case in CASES)
    assert any("1.0545718e-34" in case.candidate for case in CASES)


def test_equivalent_pairs_mostly_decided():
    """Equivalent pairs judged undecided/different: at most 0.5% (each one xfailed)."""
    equivalent = [case for case in CASES if case.equivalent]
    known_misses = [case for case in equivalent if case.bug]
    assert len(known_misses) <= 0.005 * len(equivalent)


# ---------------------------------------------------------------- the independent evaluator


def test_independent_evaluator_known_values():
    with mpmath.workdps(50):
        env = {"x": mpmath.mpf(4), "y": mpmath.mpf(-8)}
        assert mp_value("sqrt(x)", env) == 2
        assert mp_value("x^2", env) == 16
        assert mp_value("-x**2", env) == -16
        assert mp_value("sqrt(y)", env) is None
        assert mp_value("y**(1/3)", env) is None
        assert mp_value("log(y)", env) is None
        assert mp_value("1/(x - 4)", env) is None
        assert mp_value("log(x, 2)", env) == 2
        assert abs(mp_value("pi", env) - mpmath.pi) < mpmath.mpf(10) ** -45
        assert mp_value("0.1", env) == mpmath.mpf(1) / 10  # the decimal text, not the binary float
    assert relative_difference(mpmath.mpf(1), mpmath.mpf(2)) == 0.5
    assert relative_difference(None, mpmath.mpf(2)) == math.inf
    assert relative_difference(None, None) == 0.0


# ---------------------------------------------------------------- the proof rung


x, y, z, a, b = (se.Symbol(n) for n in "xyzab")


@pytest.mark.parametrize(("lhs", "rhs", "positive", "rule"), [
    (x * y, y * x, frozenset(), "identical"),
    ((x + y) ** 2, x**2 + 2 * x * y + y**2, frozenset(), "expand"),
    (1 / (x - 1) + 1 / (x + 1), 2 * x / (x**2 - 1), frozenset(), "rational"),
    ((x**2 - 1) / (x - 1), x + 1, frozenset(), "rational"),
    (1 / (1 / x + 1 / y), x * y / (x + y), frozenset(), "rational"),
    (se.exp(-(a + b) / z), se.exp(-a / z) * se.exp(-b / z), frozenset(), "arguments"),
    (se.sqrt(x * y), se.sqrt(x) * se.sqrt(y), frozenset("xy"), "positive"),
    (se.log(x * y), se.log(x) + se.log(y), frozenset("xy"), "positive"),
    (se.exp(2 * se.log(x)), x**2, frozenset("x"), "positive"),
    (se.sqrt(x**2), x, frozenset("x"), "positive"),
])
def test_prove_equal_rules(lhs, rhs, positive, rule):
    assert prove_equal(lhs, rhs, positive=positive) == rule


@pytest.mark.parametrize(("lhs", "rhs"), [
    (se.sqrt(x**2), x),
    (se.log(x**2), 2 * se.log(x)),
    (se.sqrt(x * y), se.sqrt(x) * se.sqrt(y)),
    ((x**2) ** se.Rational(1, 4), se.sqrt(x)),
    (se.exp(se.log(x)), x),
])
def test_positive_identities_need_positive_names(lhs, rhs):
    """Positivity guard: these hold only for positive bases, never proven without them."""
    assert prove_equal(lhs, rhs, positive=frozenset()) is None
    assert prove_equal(lhs, rhs, positive=frozenset({"x", "y"})) == "positive"


def test_prove_equal_rejects_near_misses():
    assert prove_equal(x**2, x**2.001) is None
    assert prove_equal(se.pi * x, se.Rational(3141592653589793, 10**15) * x) is None
    assert prove_equal(1 / (x - 1), 1 / (1 - x)) is None
    assert prove_equal(se.sqrt(x**2), x, positive=frozenset({"y"})) is None


def test_sqrt_of_square_on_signed_domain():
    """sqrt(x**2) vs x on [-1, 1]: not proven, judged different at a negative x."""
    case = Case("sqrt(x**2)", "x", (("x", -1.0, 1.0, "uniform"),), False, "guard", "|x| != x for x < 0")
    points = sample(case, 256, 7)
    domain = Domain(names=("x",), points=points, sampled=("x",), positive=frozenset())
    verdict = compare(se.sqrt(x**2), x, domain=domain)
    assert verdict.provenance == "different"
    assert verdict.counterexample["x"] < 0
    assert verdict.counterexample["candidate"] == pytest.approx(-verdict.counterexample["reference"])
    positive = Domain(names=("x",), points=np.abs(points) + 1e-3, sampled=("x",), positive=frozenset({"x"}))
    assert compare(se.sqrt(x**2), x, domain=positive).provenance == "proven"


# ---------------------------------------------------------------- many unreliable points


def _zero_region_verdict(candidate: str, reference: str, monkeypatch) -> tuple:
    """The verdict of a pair over a [0, 10] x [0, 2] domain, and how many high-precision
    evaluations it took."""
    import fastscore.algebra.precision as precision
    calls = []
    value = precision.Precise.value
    monkeypatch.setattr(precision.Precise, "value", lambda self, *a, **k: calls.append(1) or value(self, *a, **k))
    case = Case(candidate, reference, (("a", 0.0, 10.0, "uniform"), ("y", 0.0, 2.0, "uniform")), True,
                "zero-region", "")
    names = case.names
    verdict = compare(parse_expression(candidate, names=names), parse_expression(reference, names=names),
                      domain=domain_of(case, seed=3))
    return verdict, len(calls)


def test_a_provable_pair_with_many_unreliable_points_is_proven_before_they_are_rechecked(monkeypatch):
    # a clamp at zero on a <= 3 (a third of the points: all unreliable, as both sides are 0.0)
    verdict, evaluations = _zero_region_verdict("((1 + Abs((a - 3)/7) - Abs((a - 3)/7 - 1))/2)**2*exp(y)",
                                                "((7 + Abs(a - 3) - Abs(a - 10))/14)**2*exp(y)", monkeypatch)
    assert (verdict.provenance, verdict.reason) == ("proven", "abs")
    assert evaluations < 100  # the worst few only, not the ~1,000 zero-region points


def test_an_unprovable_pair_with_many_unreliable_points_has_every_one_rechecked(monkeypatch):
    verdict, evaluations = _zero_region_verdict("((1 + sqrt(((a - 3)/7)**2) - Abs((a - 3)/7 - 1))/2)**2*exp(y)",
                                                "((7 + Abs(a - 3) - Abs(a - 10))/14)**2*exp(y)", monkeypatch)
    assert verdict.provenance == "numeric"  # sqrt(u**2) = |u| is no rule: both vanish at high precision
    assert evaluations > 1000
