"""Coupled linear blocks: exact elimination, singular and inconsistent blocks, pivots that
vanish on part of the domain, and the blocks of real MechBench tasks."""
from __future__ import annotations

import numpy as np
import pytest
import symengine as se

from fastscore.kernels import evaluate
from fastscore.solve.linear import UnsatisfiedEquation, linear_block, solve_linear, unsatisfied
from fastscore.solve.mechanism import SolveError, solve_mechanism
from fastscore.tapes.compile import compile_tape
from fastscore.text.parse import parse_equation

N = 200
a, b = se.Symbol("a"), se.Symbol("b")


def _points(low=1.0, high=2.0):
    rng = np.random.default_rng(3)
    return {"a": rng.uniform(low, high, N), "b": rng.uniform(low, high, N)}


def _equations(*texts):
    return [parse_equation(t, names=("a", "b"), allow_new_names=True) for t in texts]


def _values(expr, points):
    names = sorted(points)
    return evaluate(compile_tape(expr, names), np.array([points[n] for n in names]))


def test_linearity_is_read_from_derivatives():
    (l1, r1), (l2, r2) = _equations("a*x + y = b", "x - 2*y = 1")
    block = linear_block([l1 - r1, l2 - r2], ["x", "y"])
    assert block is not None and block.rows[0] == {"x": a, "y": se.Integer(1)} and block.rhs[0] == b
    (l3, r3), = _equations("x*y = b")
    assert linear_block([l3 - r3, l2 - r2], ["x", "y"]) is None  # x*y is not linear


def test_a_coupled_block_has_its_exact_closed_forms():
    # a steady-state chain with expression left-hand sides (as in MechBench's balances)
    equations = _equations("(a + 1)*e = 3/7*c", "e + c + q = b", "2*q = a*e", "r = 5*c")
    points = _points()
    solution = solve_mechanism(equations, knowns=["a", "b"], target="r", points=points)
    expected = 5 * (se.Rational(7, 3) * (a + 1)) * b / (1 + se.Rational(7, 3) * (a + 1) + a / 2)
    assert set(solution.expressions) == {"e", "c", "q", "r"}
    np.testing.assert_allclose(_values(solution.law, points), _values(expected, points), rtol=1e-13)
    # rational coefficients stay exact: no float in the law
    assert not solution.law.atoms(se.RealDouble)


def test_a_large_sparse_block_solves_exactly():
    n = 16  # a ring of balances: u_i depends on its two neighbours
    texts = [f"(2 + a)*u{i} = u{(i - 1) % n} / 3 + u{(i + 1) % n} / 5 + b" for i in range(n)] + ["y = u0"]
    points = _points()
    solution = solve_mechanism(_equations(*texts), knowns=["a", "b"], target="y", points=points)
    # by symmetry every u_i equals b / (2 + a - 1/3 - 1/5)
    np.testing.assert_allclose(_values(solution.law, points), points["b"] / (points["a"] + 2 - 1 / 3 - 1 / 5),
                               rtol=1e-12)


@pytest.mark.parametrize(("texts", "message"), [
    (("x + y = a", "2*x + 2*y = 2*a", "z = x"), "under-determined: dependent equations"),
    (("x + y = a", "2*x + 2*y = b", "z = x"), "inconsistent equations"),
    (("a*x + y = 1", "a*x + y = b", "z = x + y"), "inconsistent equations"),
])
def test_singular_blocks_are_solve_errors(texts, message):
    with pytest.raises(SolveError, match=message):
        solve_mechanism(_equations(*texts), knowns=["a", "b"], target="z", points=_points())


def test_a_pivot_that_vanishes_inside_the_domain_is_avoided():
    # (a - 1.5) is zero inside [1, 2): eliminating x through it would divide by zero there
    equations = _equations("(a - 3/2)*x + y = b", "x + y = 1", "z = x")
    points = _points()
    solution = solve_mechanism(equations, knowns=["a", "b"], target="z", points=points)
    expected = (points["b"] - 1) / (points["a"] - 2.5)
    np.testing.assert_allclose(_values(solution.law, points), expected, rtol=1e-12)


def test_a_block_singular_at_sample_points_is_a_solve_error():
    # the determinant (a - 3/2)**2 - 1 is zero at a = 0.5 and 2.5, both sample points
    equations = _equations("(a - 3/2)*x + y = b", "x + (a - 3/2)*y = 1", "z = x")
    solve_mechanism(equations, knowns=["a", "b"], target="z", points=_points(1.0, 2.0))  # fine on [1, 2)
    with pytest.raises(SolveError):
        solve_mechanism(equations, knowns=["a", "b"], target="z",
                        points={"a": np.linspace(0.5, 2.5, 5), "b": np.full(5, 2.0)})


def test_solve_linear_without_points_uses_symbols_only():
    (l1, r1), (l2, r2) = _equations("x + y = a", "x - y = b")
    solved, values = solve_linear(linear_block([l1 - r1, l2 - r2], ["x", "y"]), None)
    assert values is None
    assert se.expand(solved["x"] - (a + b) / 2).is_zero and se.expand(solved["y"] - (a - b) / 2).is_zero


def test_consistent_redundant_equations_are_accepted_and_inconsistent_ones_rejected():
    points = _points()
    solution = solve_mechanism(_equations("x = a", "y = 2*x", "y/2 = a"), knowns=["a", "b"], target="y",
                               points=points)
    np.testing.assert_allclose(_values(solution.law, points), 2 * points["a"])
    with pytest.raises(SolveError, match="inconsistent equations"):
        solve_mechanism(_equations("x = a", "y = 2*x", "y/2 = 1.01*a"), knowns=["a", "b"], target="y",
                        points=points)


@pytest.mark.parametrize("texts", [("T = T",), ("z = z", "T = a*b"), ("T = a", "x + 1 = 1 + x")])
def test_identity_equations_fix_nothing(texts):
    with pytest.raises(SolveError, match="holds identically"):
        solve_mechanism(_equations(*texts), knowns=["a", "b"], target="T", points=_points())


def test_the_consistency_check_uses_the_given_rtol():
    """A redundant equation 3e-8 off agrees at the default rtol (1e-6) and contradicts the
    others at rtol 1e-9: ``solve_mechanism`` judges with the run's ``Settings.rtol``."""
    equations = _equations("x = a", "y = 2*x", "y/2 = 1.00000003*a")
    points = _points()
    solution = solve_mechanism(equations, knowns=["a", "b"], target="y", points=points)
    np.testing.assert_allclose(_values(solution.law, points), 2 * points["a"])
    with pytest.raises(SolveError, match="inconsistent equations"):
        solve_mechanism(equations, knowns=["a", "b"], target="y", points=points, rtol=1e-9)


def test_unsatisfied_names_the_first_equation_off_beyond_rtol():
    one = np.ones(3)
    coefficients = [{"x": one, "y": one}, {"x": one, "y": -one}]
    rhs = [np.full(3, 2.0), np.array([0.0, 0.0, 1e-3])]  # x + y = 2 holds; x - y = 0 is off at the last point
    solution = {"x": one, "y": one}
    assert unsatisfied(coefficients, rhs, solution, 1e-6) == 1
    assert unsatisfied(coefficients, rhs, solution, 1e-2) is None


def test_unsatisfied_judges_cancelling_terms_on_their_scale_and_skips_undefined_points():
    big = np.full(2, 1e8)
    # 1e8*x - 1e8*y = 0 with y one rounding step above x: off by 1e-8 absolutely, 1e-16 relatively
    coefficients = [{"x": big, "y": -big}]
    solution = {"x": np.ones(2), "y": np.full(2, 1 + 2.0 ** -52)}
    assert unsatisfied(coefficients, [np.zeros(2)], solution, 1e-12) is None
    assert unsatisfied(coefficients, [np.array([0.0, 1.0])], solution, 1e-12) == 0
    # where the equation's own coefficient is not finite, it cannot fail
    undefined = [{"x": np.array([np.inf, 1.0])}]
    assert unsatisfied(undefined, [np.array([5.0, 1.0])], {"x": np.ones(2)}, 1e-6) is None


def test_solve_linear_checks_its_float64_solution_with_the_given_rtol():
    (l1, r1), (l2, r2) = _equations("x/3 + y/7 = a", "x/11 - y = b")
    block = linear_block([l1 - r1, l2 - r2], ["x", "y"])
    points = _points()

    def values(exprs):
        return evaluate([compile_tape(e, ["a", "b"]) for e in exprs], np.array([points["a"], points["b"]]))

    solved, found = solve_linear(block, values)
    np.testing.assert_allclose(found["x"] / 3 + found["y"] / 7, points["a"], rtol=1e-12)
    with pytest.raises(UnsatisfiedEquation):  # rounding alone fails a zero tolerance somewhere
        solve_linear(block, values, rtol=0.0)


def test_swapping_the_sides_of_equations_does_not_change_the_closed_forms():
    """A steady-state balance written with sides swapped solves to the same closed forms
    (the same trees and texts, not just equal values): each residual takes its smaller
    side first.  Another order of the equations gives equal values."""
    texts = ["(a + 1)*x + b*y = 2*u", "a*u + x = b*y + 1", "y + u = a*x", "z = x + y*u"]
    points = _points()

    def solved(order, swap):
        equations = []
        for k in order:
            left, right = texts[k].split("=")
            equations.append(f"{right} = {left}" if k in swap else texts[k])
        return solve_mechanism(_equations(*equations), knowns=["a", "b"], target="z", points=points)

    reference = solved([0, 1, 2, 3], ()).expressions
    for swap in ((0, 2), (1, 2, 3), (0, 1, 2, 3)):
        other = solved([0, 1, 2, 3], swap).expressions
        assert {n: str(e) for n, e in other.items()} == {n: str(e) for n, e in reference.items()}
    shuffled = solved([2, 0, 3, 1], (1, 2))
    np.testing.assert_allclose(_values(shuffled.law, points), _values(reference["z"], points), rtol=1e-12)


def test_an_entry_cancelled_exactly_leaves_no_stale_value():
    """The block of MechBench's 'Materials Thermoelastic Constraint - Variant 1-3' (three
    phases, an interaction stiffness E/5, fixed total length), in the order its solver
    meets it: one elimination cancels an entry exactly in the symbols (SymEngine gives 0)
    while its float64 value is a rounding residue.  Both must go, or the back-substitution
    reads the value of an unknown it has not solved yet (a KeyError)."""
    E, dT, alpha = se.symbols("E dT alpha")
    rng = np.random.default_rng(3)
    points = {"E": np.exp(rng.uniform(np.log(2e9), np.log(2e11), N)),
              "alpha": np.exp(rng.uniform(np.log(5e-6), np.log(4e-5), N)),
              "dT": np.exp(rng.uniform(np.log(10), np.log(200), N))}
    R, one = se.Rational, se.Integer(1)
    rows = [{"e2": -E / 5, "sigma": one, "e1": R(6, 5) * E},
            {"e2": R(12, 5) * E, "sigma": one, "e3": -E / 5, "e1": -E / 5},
            {"e2": -E / 5, "sigma": one, "e3": R(16, 5) * E},
            {"e2": -one, "e3": -one, "e1": -one}]
    h = dT * alpha
    rhs = [E * h * (1 + 2 * h), R(14, 5) * E * h * (1 + R(28, 5) * h), R(57, 10) * E * h * (1 + R(57, 5) * h),
           se.Integer(0)]
    from fastscore.solve.linear import LinearBlock
    solved, values = solve_linear(LinearBlock(("e2", "sigma", "e3", "e1"), rows, rhs),
                                  lambda exprs: np.array([_values(e, points) for e in exprs]))
    assert se.expand(solved["sigma"] - (R(983, 404) * E * h + R(183367, 10100) * E * h**2)) == 0
    assert se.expand(solved["e1"] + solved["e2"] + solved["e3"]) == 0
    assert np.allclose(values["sigma"], _values(solved["sigma"], points), rtol=1e-12)
