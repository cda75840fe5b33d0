"""Mechanism elimination: the 72 MDBench mechanisms derive their stated laws; errors
for under-/over-determined, inconsistent and runaway systems; branch choice; the
numeric root kernel on systems with known roots."""


import numpy as np
import pytest
import symengine as se

from fastscore.kernels import evaluate
from fastscore.kernels.roots import solve_block
from fastscore.problems.formats import load_problems
from fastscore.problems.splits import sample_inputs
from fastscore.solve.closed_forms import names_of
from fastscore.solve.mechanism import SolveError, solve_mechanism
from fastscore.solve.solution import compile_block
from fastscore.tapes.compile import compile_tape
from fastscore.text.parse import parse_equation
from tests.support.external import MDBENCH, requires_mdbench

PROBLEMS = MDBENCH
N = 200
x, y, a = se.Symbol("x"), se.Symbol("y"), se.Symbol("a")


@pytest.fixture(scope="module")
def problems():
    return {p.task_id: p for p in load_problems(PROBLEMS)}


def _setup(problem, seed=1):
    """Parsed mechanism, stated law (right-hand side) and domain points with constants."""
    names = (*problem.known_names, problem.target.name)
    equations = [parse_equation(e.text, names=names, allow_new_names=True) for e in problem.mechanism]
    _, law = parse_equation(problem.law, names=names)
    points = sample_inputs(problem, region="domain", n=N, rng=np.random.default_rng(seed))
    points.update({c.name: np.full(N, c.value) for c in problem.constants})
    return equations, law, points


def _values(expr, points):
    names = sorted(points)
    return evaluate(compile_tape(expr, names), np.array([points[n] for n in names]))


def _solve(problem, equations, points, **options):
    return solve_mechanism(equations, knowns=problem.known_names, target=problem.target.name, points=points, **options)


def _a_points(low=1.0, high=2.0):
    return {"a": np.random.default_rng(0).uniform(low, high, N)}


TASKS = sorted(p.stem for p in PROBLEMS.glob("*.yaml"))


@requires_mdbench
def test_all_reference_problems_are_present():
    assert len(TASKS) == 72


@pytest.mark.slow
@requires_mdbench
@pytest.mark.parametrize("task", TASKS)
def test_reference_mechanism_derives_the_stated_law(problems, task):
    problem = problems[task]
    equations, law, points = _setup(problem)
    solution = _solve(problem, equations, points)
    derived = solution.values([problem.target.name], points)[problem.target.name]
    expected = _values(law, points)
    assert np.all(np.isfinite(expected))
    np.testing.assert_allclose(derived, expected, rtol=1e-6)
    if solution.law is not None:  # the closed form itself, not just the plan, is right
        np.testing.assert_allclose(_values(solution.law, points), expected, rtol=1e-6)


@requires_mdbench
@pytest.mark.parametrize("task", ["bound-particle-orbital-radius-variant2", "narrow-tube-liquid-rise-variant1"])
def test_numeric_in_mdbench_gets_a_closed_form_by_quadratic_solving(problems, task):
    problem = problems[task]
    equations, law, points = _setup(problem)
    solution = _solve(problem, equations, points)
    assert solution.law is not None and solution.numeric == ()
    assert set(solution.law.free_symbols) <= {se.Symbol(n) for n in problem.known_names}
    np.testing.assert_allclose(_values(solution.law, points), _values(law, points), rtol=1e-6)


@requires_mdbench
def test_intermediates_get_closed_forms_in_the_knowns(problems):
    # bound orbit: L = hbar and L = m v r, so v = hbar / (m r) at the derived r
    problem = problems["bound-particle-orbital-radius-variant2"]
    equations, _, points = _setup(problem)
    solution = _solve(problem, equations, points)
    assert set(solution.expressions) == {"F_C", "F_B", "F_in", "v", "L", "B", "r"}
    r = _values(solution.expressions["r"], points)
    np.testing.assert_allclose(_values(solution.expressions["v"], points), points["hbar"] / (points["m"] * r), rtol=1e-12)
    np.testing.assert_allclose(_values(solution.expressions["B"], points), 5.0e4)


@requires_mdbench
def test_shuffled_equations_and_renamed_intermediates_give_the_same_law(problems):
    rng = np.random.default_rng(7)
    for task in ("enzyme-reaction-rate-variant1", "atmosphere-surface-equilibrium-temperature-variant4",
                 "coupled-mass-acceleration-variant1", "bound-particle-orbital-radius-variant2"):
        problem = problems[task]
        equations, law, points = _setup(problem)
        renames = {se.Symbol(v.name): se.Symbol(f"h{i}") for i, v in enumerate(problem.intermediates)}
        renamed = [(lhs.xreplace(renames), rhs.xreplace(renames)) for lhs, rhs in equations]
        order = rng.permutation(len(renamed))
        swapped = [renamed[i][::-1] if i % 2 else renamed[i] for i in order]
        solution = _solve(problem, swapped, points)
        assert solution.law is not None
        np.testing.assert_allclose(_values(solution.law, points), _values(law, points), rtol=1e-9)


@pytest.mark.parametrize(
    ("equations", "target", "message"),
    [
        ([(x + y, a)], "x", "under-determined: 1 equations for 2 unknowns (y not fixed)"),
        ([(y, 2 * x), (2 * y, 4 * x)], "x", "under-determined: dependent equations"),
        ([(y, a)], "x", "under-determined: the target x appears in no equation"),
        ([(x, a), (y, x), (y, 2 * a + x)], "y", "inconsistent equations"),
        ([(x, se.Integer(1)), (x, se.Integer(2))], "x", "inconsistent equations"),
        ([(x, a), (a, se.Integer(3))], "x", "inconsistent equations"),  # a known pinned to a value
        ([(y, 2 * x), (y, 2 * x + a)], "x", "inconsistent equations"),
        ([(x, se.Function("f")(a))], "x", "unknown function f"),
        ([(x**2, a - 1.5)], "x", "no real solution for x on 50% of the domain"),
        ([(x**2, -a)], "x", "no real solution for x on 100% of the domain"),
    ],
)
def test_unusable_systems_raise_one_line_errors(equations, target, message):
    with pytest.raises(SolveError) as error:
        solve_mechanism(equations, knowns=["a"], target=target, points={"a": np.linspace(1.0, 2.0, N, endpoint=False)})
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_a_derived_law_has_its_integer_roots_reduced():
    """``T = (U/sigma)**(1/4)`` with ``sigma = 5.670374419e-8``: SymEngine folds the
    constant into ``100000000000000000**(1/4)`` or ``10000*10**(1/4)`` depending on the
    order it is built in; the derived law is written with the root reduced, and a proof
    against the unreduced form goes through (the last rule reduces both sides)."""
    from fastscore.algebra.canonical import prove_equal
    T, U, sigma = se.Symbol("T"), se.Symbol("U"), se.Symbol("sigma")
    sigma_value = se.Rational(5670374419, 10**17)
    equations = [(sigma, sigma_value), (U, a * (1 + a)), (T, (U / sigma) ** se.Rational(1, 4))]
    law = solve_mechanism(equations, knowns=["a"], target="T", points={"a": np.linspace(1.0, 2.0, N)}).law
    assert "100000000000000000" not in str(law) and "10**(1/4)" in str(law)
    stated = ((a * (1 + a)) / sigma_value) ** se.Rational(1, 4)
    assert "100000000000000000**(1/4)" in str(stated)
    assert prove_equal(law, stated) == "roots"


def test_branch_choice_prefers_real_then_positive_and_rejects_ambiguity():
    points = _a_points()
    # x**2 = a**2 over a > 0: +a (positive), not -a
    solution = solve_mechanism([(x**2, a**2)], knowns=["a"], target="x", points=points)
    np.testing.assert_allclose(_values(solution.law, points), points["a"])
    # x*(x + a) = 2 a**2: roots a and -2a; the positive one wins
    solution = solve_mechanism([(x * (x + a), 2 * a**2)], knowns=["a"], target="x", points=points)
    np.testing.assert_allclose(_values(solution.law, points), points["a"], rtol=1e-12)
    # sqrt(x) = a - 3 < 0 has no solution although x = (a - 3)**2 is real: residual check
    with pytest.raises(SolveError, match="no real solution"):
        solve_mechanism([(x**2, a**2), (se.sqrt(y), x - 3)], knowns=["a"], target="y", points=points)
    # x**2 = a**2 over a of both signs: sqrt(a**2) = |a| is the positive root
    points = _a_points(-1.0, 1.0)
    solution = solve_mechanism([(x**2, a**2)], knowns=["a"], target="x", points=points)
    np.testing.assert_allclose(_values(solution.law, points), np.abs(points["a"]))
    # (x - a)(x - a - 1) = 0 over a in (-2, 1): roots a and a + 1, neither positive everywhere
    with pytest.raises(SolveError, match="ambiguous branch for x"):
        solve_mechanism([((x - a) * (x - a - 1), se.Integer(0))], knowns=["a"], target="x", points=_a_points(-2.0, 1.0))


def test_implicit_single_equation_forms():
    points = _a_points()
    cases = [
        ((x, 2 * a / (1 + x)), (-1 + se.sqrt(1 + 8 * a)) / 2),  # implicit, quadratic
        ((x**3 * a, se.Integer(8)), 2 / a ** se.Rational(1, 3)),  # pure power
        ((se.sqrt(x) + a, 3 * a), 4 * a**2),  # rational power
        ((se.exp(2 * x), a), se.log(a) / 2),  # inversion
        ((a, se.log(x / a)), a * se.exp(a)),
    ]
    for (lhs, rhs), expected in cases:
        solution = solve_mechanism([(lhs, rhs)], knowns=["a"], target="x", points=points)
        np.testing.assert_allclose(_values(solution.law, points), _values(expected, points), rtol=1e-12)


def test_linear_coupled_block_is_solved_exactly():
    # x + y = a, x - y = 1  ->  x = (a + 1) / 2
    solution = solve_mechanism([(x + y, a), (x - y, se.Integer(1))], knowns=["a"], target="x", points=_a_points())
    assert se.expand(solution.law - (a + 1) / 2).is_zero
    assert se.expand(solution.expressions["y"] - (a - 1) / 2).is_zero


def test_transcendental_block_goes_numeric_and_satisfies_the_equations():
    points = _a_points()
    # x + exp(x) = a has no elementary closed form (x = a - W(e**a)); unique real root
    solution = solve_mechanism([(x + se.exp(x), a)], knowns=["a"], target="x", points=points, budget=0.5)
    assert solution.law is None and solution.numeric == ("x",)
    value = solution.values(["x"], points)["x"]
    np.testing.assert_allclose(value + np.exp(value), points["a"], rtol=1e-12)
    # a closed form downstream of a numeric unknown is not a law in the knowns
    solution = solve_mechanism([(x + se.exp(x), a), (y, 2 * x)], knowns=["a"], target="y", points=points, budget=0.5)
    assert solution.law is None and "y" not in solution.expressions
    np.testing.assert_allclose(solution.values(["y"], points)["y"], 2 * value, rtol=1e-12)


@pytest.mark.parametrize(
    ("lhs", "rhs", "residual"),
    [
        # degree 50: no closed form; one positive root (increasing for x > 0)
        (x**50 + a * x, 3 * a + 1, lambda v, a: (v**50 + a * v) / (3 * a + 1) - 1),
        # expanding would give ~2**60 terms: never expanded, solved numerically
        (x * (x + a) ** 30 * (x + 2 * a) ** 30, a, lambda v, a: v * (v + a) ** 30 * (v + 2 * a) ** 30 / a - 1),
    ],
)
def test_runaway_equations_end_within_the_budget(lhs, rhs, residual):
    points = _a_points()
    try:
        solution = solve_mechanism([(lhs, rhs)], knowns=["a"], target="x", points=points, budget=0.3)
    except SolveError as error:
        assert "budget" in str(error)
    else:
        value = solution.values(["x"], points)["x"]
        np.testing.assert_allclose(residual(value, points["a"]), 0.0, atol=1e-9)


def test_roots_kernel_one_dimensional_prefers_the_positive_root():
    given = np.random.default_rng(3).uniform(0.5, 4.0, (1, N))
    block = compile_block([x**2 - a], ["a"], ["x"])
    solution, converged = solve_block(block, given)
    assert converged.all()
    np.testing.assert_allclose(solution[0], np.sqrt(given[0]), rtol=1e-13)
    # pole at x = a, no root: rejected, NaN
    solution, converged = solve_block(compile_block([1 / (x - a)], ["a"], ["x"]), given)
    assert not converged.any() and np.isnan(solution).all()


def test_roots_kernel_newton_on_two_unknowns():
    given = np.random.default_rng(4).uniform(0.5, 4.0, (1, N))
    # x*y = a, x/y = 4  ->  x = 2 sqrt(a), y = sqrt(a)/2 (from positive starts)
    block = compile_block([x * y - a, x / y - 4], ["a"], ["x", "y"])
    solution, converged = solve_block(block, given)
    assert converged.all()
    np.testing.assert_allclose(solution[0], 2 * np.sqrt(given[0]), rtol=1e-12)
    np.testing.assert_allclose(solution[1], np.sqrt(given[0]) / 2, rtol=1e-12)
    # no real solution: x**2 + y**2 = -a
    solution, converged = solve_block(compile_block([x**2 + y**2 + a, x - y], ["a"], ["x", "y"]), given)
    assert not converged.any()


def test_a_block_met_before_in_a_batch_is_not_solved_again(monkeypatch):
    import fastscore.solve.mechanism as solve_module
    points = {"a": np.linspace(1.0, 2.0, 50), "b": np.linspace(3.0, 5.0, 50)}
    names = ("a", "b", "y")

    def parsed(text):
        return [parse_equation(e, names=names, allow_new_names=True) for e in text.split(";")]

    first = parsed("p + q = a; p - 2*q = b; y = p*q")  # a linear block in p, q
    second = parsed("p + q = a; p - 2*q = b; y = p + q**2")  # the same block, another law
    linear = []
    original = solve_module.solve_linear
    monkeypatch.setattr(solve_module, "solve_linear", lambda *a, **k: linear.append(1) or original(*a, **k))
    alone = [solve_mechanism(eqs, knowns=["a", "b"], target="y", points=points) for eqs in (first, second)]
    assert len(linear) == 2
    shared: dict = {}
    together = [solve_mechanism(eqs, knowns=["a", "b"], target="y", points=points, solved_blocks=shared)
                for eqs in (first, second)]
    assert len(linear) == 3  # the second mechanism's block came from the first's
    for one, other in zip(alone, together):
        assert one.expressions == other.expressions and one.branches == other.branches


def test_a_network_is_evaluated_step_by_step_with_the_values_of_its_closed_forms():
    # 5 layers of 3 nodes, each a tanh of products of the layer before (a network written
    # out as formulas): the closed forms of the chain share their subexpressions; each
    # step is evaluated from its own equation, with the same values
    rng = np.random.default_rng(5)
    text, layer = [], ["a", "x"]
    for depth in range(5):
        names = [f"n{depth}_{i}" for i in range(3)]
        for name in names:
            terms = " + ".join(f"{rng.uniform(-2, 2)!r}*{rng.choice(layer)}*{rng.choice(layer)}" for _ in range(3))
            text.append(f"{name} = tanh({terms})" if depth % 2 else f"{name} = -tanh({terms})")
        layer = names
    text.append("y = " + " + ".join(layer))
    equations = [parse_equation(t, names=("a", "x", "y"), allow_new_names=True) for t in text]
    points = {"a": np.random.default_rng(0).uniform(1.0, 2.0, N), "x": np.random.default_rng(1).uniform(-1, 1, N)}
    solution = solve_mechanism(equations, knowns=("a", "x"), target="y", points=points)
    names = sorted(solution.expressions)
    values = solution.values(names, points)
    for name in names:  # the whole closed form of each, evaluated as one tape
        assert np.allclose(values[name], _values(solution.expressions[name], points), rtol=1e-12, atol=0)
    local = {step.name: step.expr for step in solution._local_plan()}
    assert all(names_of(local[f"n4_{i}"]) <= {f"n3_{j}" for j in range(3)} for i in range(3))
