"""Tapes, the evaluation kernel and split metrics against independent references."""

import subprocess
import sys
import warnings

import numpy as np
import pytest
import symengine as se

import fastscore.tapes.compile as tape_module
import fastscore.tapes.lowering as lowering
from fastscore.kernels import (
    METRICS,
    Tape,
    TapeBatch,
    accuracy,
    evaluate,
    evaluate_bounded,
    jit,
    opcodes,
    pack,
    split_metrics,
)
from fastscore.kernels.evaluate import SHARED
from fastscore.tapes.compile import UnsupportedExpression, compile_tape

RNG = np.random.default_rng(20240601)
N = 700  # more than two kernel blocks, not a multiple of the block size


def sym(names: str):
    return se.symbols(names)


def points(**ranges: tuple[float, float]) -> tuple[list[str], np.ndarray]:
    names = list(ranges)
    X = np.array([RNG.uniform(lo, hi, N) for lo, hi in ranges.values()])
    return names, X


m, c, v = sym("m c v")
hbar, q, eps, k = sym("hbar q eps k")
Ef, p, Omega, kB, T = sym("Ef p Omega kB T")
a, b, S, s = sym("a b S s")
k1, k2, k3, k4, k5, E_T = sym("k1 k2 k3 k4 k5 E_T")
x, y, z, t, w, phi = sym("x y z t w phi")

# (expression, ranges of its variables, the same formula written by hand in NumPy)
CASES = [
    (
        m * c**2 * (1 / se.sqrt(1 - v**2 / c**2) - 1),
        dict(m=(0.1, 10), c=(1, 3), v=(0.3, 0.9)),  # v < c everywhere
        lambda m, c, v: m * c**2 * (1 / np.sqrt(1 - v**2 / c**2) - 1),
    ),
    (
        2 * hbar**2 / (m * q**2 / (4 * se.pi * eps) + se.sqrt((m * q**2 / (4 * se.pi * eps)) ** 2 + hbar**2 * k)),
        dict(hbar=(0.5, 2), m=(0.5, 2), q=(0.5, 2), eps=(0.5, 2), k=(0.5, 2)),
        lambda hbar, m, q, eps, k: 2 * hbar**2
        / (m * q**2 / (4 * np.pi * eps) + np.sqrt((m * q**2 / (4 * np.pi * eps)) ** 2 + hbar**2 * k)),
    ),
    (
        se.exp(-(Ef + p * Omega) / (kB * T)),
        dict(Ef=(0.1, 2), p=(0.1, 2), Omega=(0.1, 2), kB=(0.5, 2), T=(0.5, 3)),
        lambda Ef, p, Omega, kB, T: np.exp(-(Ef + p * Omega) / (kB * T)),
    ),
    (
        ((1 - a) * S / (4 * s * (1 - b / 2))) ** se.Rational(1, 4),
        dict(a=(0, 0.9), S=(100, 2000), s=(1e-8, 1e-7), b=(0, 1)),
        lambda a, S, s, b: ((1 - a) * S / (4 * s * (1 - b / 2))) ** 0.25,
    ),
    (
        k3 * E_T * S / ((k2 + k3) / k1 + S + S**2 * k4 / k5),
        dict(k1=(0.1, 5), k2=(0.1, 5), k3=(0.1, 5), k4=(0.1, 5), k5=(0.1, 5), E_T=(0.1, 5), S=(0.1, 5)),
        lambda k1, k2, k3, k4, k5, E_T, S: k3 * E_T * S / ((k2 + k3) / k1 + S + S**2 * k4 / k5),
    ),
    (
        x * se.sin(w * t + phi) * se.cos(y) - se.tan(t / 3) + se.atan(y) - se.asin(z) + se.acos(z),
        dict(x=(-2, 2), w=(0.5, 3), t=(0, 4), phi=(-1, 1), y=(-3, 3), z=(-0.9, 0.9)),
        lambda x, w, t, phi, y, z: x * np.sin(w * t + phi) * np.cos(y)
        - np.tan(t / 3)
        + np.arctan(y)
        - np.arcsin(z)
        + np.arccos(z),
    ),
    (
        kB * T * se.log(x / y) + se.log(x, 10) - se.log(2 * y),
        dict(kB=(0.5, 2), T=(1, 300), x=(0.5, 5), y=(0.01, 0.2)),
        lambda kB, T, x, y: kB * T * np.log(x / y) + np.log(x) / np.log(10) - np.log(2 * y),
    ),
    (
        x * y / z**2 - a / z**3 + 1 / z**7 - x**-1 + 3 / (x * y) ** 2,
        dict(x=(0.5, 2), y=(0.5, 2), z=(1, 3), a=(-1, 1)),
        lambda x, y, z, a: x * y / z**2 - a / z**3 + 1 / z**7 - 1 / x + 3 / (x * y) ** 2,
    ),
    (
        x**2.5 * y + y ** se.Rational(3, 2) - z ** se.Rational(-1, 3) + x ** se.Rational(2, 3) / 7,
        dict(x=(0.1, 4), y=(0.1, 4), z=(0.1, 4)),
        lambda x, y, z: x**2.5 * y + y**1.5 - 1 / np.cbrt(z) + x ** (2 / 3) / 7,
    ),
    (
        se.tanh(x) / se.cosh(y) + se.sinh(x) * se.acosh(1 + y**2) + se.atanh(x / 3) - se.asinh(y),
        dict(x=(-2, 2), y=(-2, 2)),
        lambda x, y: np.tanh(x) / np.cosh(y) + np.sinh(x) * np.arccosh(1 + y**2) + np.arctanh(x / 3) - np.arcsinh(y),
    ),
    (
        se.Abs(x - 1) * se.sign(y) + se.atan2(y, x) + 2**x - x**y + 1 / se.sqrt(y**2 + 1),
        dict(x=(-3, 3), y=(-3, 3)),
        lambda x, y: np.abs(x - 1) * np.sign(y) + np.arctan2(y, x) + 2**x - x**y + 1 / np.sqrt(y**2 + 1),
    ),
    (
        se.sec(x) + se.csc(x) - se.cot(x) + se.pi * x / 3 - se.E**2 * y + se.sqrt(2) / 2,
        dict(x=(0.2, 1.3), y=(-1, 1)),
        lambda x, y: 1 / np.cos(x) + 1 / np.sin(x) - 1 / np.tan(x) + np.pi * x / 3 - np.e**2 * y + np.sqrt(2) / 2,
    ),
    (
        -x - y + 7 - (x - z) * (y + 2 * z) / 3,
        dict(x=(-5, 5), y=(-5, 5), z=(-5, 5)),
        lambda x, y, z: -x - y + 7 - (x - z) * (y + 2 * z) / 3,
    ),
    (
        a - x * y + z / (x + y) - 3 / (z + x) + (x - 2) / (y * z) - 2 ** (x * y),
        dict(a=(-1, 1), x=(0.5, 2), y=(0.5, 2), z=(0.5, 2)),
        lambda a, x, y, z: a - x * y + z / (x + y) - 3 / (z + x) + (x - 2) / (y * z) - 2 ** (x * y),
    ),
    (z - x * y * (a + 1), dict(a=(-1, 1), x=(0.5, 2), y=(0.5, 2), z=(0.5, 2)), lambda a, x, y, z: z - x * y * (a + 1)),
]


@pytest.mark.parametrize("expr, ranges, reference", CASES, ids=[str(i) for i in range(len(CASES))])
def test_tape_matches_hand_written_numpy(expr, ranges, reference):
    names, X = points(**ranges)
    with np.errstate(invalid="ignore"):
        expected = reference(*X)
    got = evaluate(compile_tape(expr, names), X)
    assert got.shape == (N,)
    finite = np.isfinite(expected)
    assert finite.sum() > N // 3
    np.testing.assert_array_equal(np.isfinite(got), finite)
    # atol covers points where terms cancel to near zero (summation order differs)
    scale = np.max(np.abs(expected[finite]))
    np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-13, atol=1e-14 * scale)


@pytest.mark.parametrize("expr, ranges, reference", CASES[:5], ids=[str(i) for i in range(5)])
def test_tape_matches_high_precision_symengine(expr, ranges, reference):
    names, X = points(**ranges)
    tape = compile_tape(expr, names)
    got = evaluate(tape, X[:, :8])
    for j in range(8):
        at = {se.Symbol(n): se.RealDouble(X[i, j]) for i, n in enumerate(names)}
        exact = float(expr.subs(at).n(100))
        assert got[j] == pytest.approx(exact, rel=1e-13, abs=0)


@pytest.mark.parametrize("n", list(range(-12, 13)) + [31, 32, 33, 40, -40])
def test_integer_powers(n):
    X = np.array([[3.0, -2.0, 0.5, -1.25, 7.0]])
    got = evaluate(compile_tape(x**n, ["x"]), X)
    np.testing.assert_allclose(got, X[0] ** float(n), rtol=2e-15 * max(abs(n), 1), atol=0)


def test_powers_of_small_integers_are_exact():
    X = np.array([[3.0, -3.0, 2.0]])
    assert evaluate(compile_tape(x**20, ["x"]), X).tolist() == [3486784401.0, 3486784401.0, 1048576.0]
    assert evaluate(compile_tape(x**-3, ["x"]), X[:, 2:]).tolist() == [0.125]


def test_domain_errors_give_nan_or_inf_without_exceptions():
    X = np.array([[-1.0, 0.0, 2.0, -8.0, 8.0, 1000.0]])
    cases = {
        se.log(x): [np.nan, -np.inf, np.log(2), np.nan, np.log(8), np.log(1000)],
        se.sqrt(x): [np.nan, 0, np.sqrt(2), np.nan, np.sqrt(8), np.sqrt(1000)],
        1 / x: [-1, np.inf, 0.5, -0.125, 0.125, 0.001],
        se.exp(x): [np.exp(-1), 1, np.exp(2), np.exp(-8), np.exp(8), np.inf],
        se.asin(x): [-np.pi / 2, 0, np.nan, np.nan, np.nan, np.nan],
        x ** se.Rational(1, 3): [np.nan, 0, np.cbrt(2), np.nan, 2, 10],
        x ** se.Rational(-1, 3): [np.nan, np.inf, 1 / np.cbrt(2), np.nan, 0.5, 0.1],
        x**2.5: [np.nan, 0, 2**2.5, np.nan, 8**2.5, 1000**2.5],
        se.acosh(x): [np.nan, np.nan, np.arccosh(2), np.nan, np.arccosh(8), np.arccosh(1000)],
        se.atanh(x): [-np.inf, 0, np.nan, np.nan, np.nan, np.nan],
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for expr, expected in cases.items():
            got = evaluate(compile_tape(expr, ["x"]), X)
            np.testing.assert_allclose(got, expected, rtol=1e-15, err_msg=str(expr))


def test_constants_fold_and_non_real_constants_are_nan():
    X = np.array([[8.0, 0.5]])
    np.testing.assert_allclose(evaluate(compile_tape(se.log(x, 2), ["x"]), X), [3.0, -1.0], rtol=1e-15)
    assert evaluate(compile_tape(se.pi**2 + 0 * x, ["x"]), X).tolist() == [np.pi**2] * 2
    assert np.isnan(evaluate(compile_tape(se.asin(3) * x, ["x"]), X)).all()
    assert np.isnan(evaluate(compile_tape(se.sqrt(-2) * x, ["x"]), X)).all()
    # folded: one instruction for the variable, one for the constant factor
    assert len(compile_tape(x * se.sqrt(3) / se.log(7) * se.pi, ["x"]).ops) == 2
    # atan2 has no multi-precision evaluation in SymEngine: folded in double precision
    folded = compile_tape(se.sin(se.atan2(1, 2)) * x + se.pi, ["x"])
    assert len(folded.ops) == 3
    got = evaluate(folded, X)
    np.testing.assert_allclose(got, np.sin(np.arctan2(1, 2)) * X[0] + np.pi, rtol=1e-15)


@pytest.mark.parametrize(
    "expr, message",
    [
        (se.gamma(x), "gamma"),
        (se.Function("f")(x), "undefined function f"),
        (se.floor(x), "floor"),
        (x + y, "'y'"),
        (x * se.oo, "Infinity"),
        (x + se.zoo, "ComplexInfinity"),
    ],
)
def test_unsupported_nodes_raise(expr, message):
    with pytest.raises(UnsupportedExpression, match=message):
        compile_tape(expr, ["x"])


def test_text_is_never_parsed():
    with pytest.raises(TypeError):
        compile_tape("x + 1", ["x"])


def test_subtraction_and_division_become_single_instructions():
    tape = compile_tape(x - y, ["x", "y"])
    assert tape.ops.tolist() == [opcodes.PUSH_VAR, opcodes.SUB_V]
    tape = compile_tape(x / y, ["x", "y"])
    assert tape.ops.tolist() == [opcodes.PUSH_VAR, opcodes.DIV_V]
    assert "DIV_V y" in tape.to_text() and "PUSH_VAR x" in repr(tape)


def test_negative_powers_in_a_product_divide_by_the_positive_power():
    X = np.array([[8.0, -8.0, 27.0, 0.25], [6.0, 6.0, 3.0, 2.0]])
    PUSH_VAR, RDIV_V = opcodes.PUSH_VAR, opcodes.RDIV_V
    cbrt = compile_tape(y * x ** se.Rational(-1, 3), ["x", "y"])
    assert cbrt.ops.tolist() == [PUSH_VAR, opcodes.CBRT, RDIV_V]
    # y / cbrt(x); SymEngine's principal cube root of -8 is complex: NaN
    np.testing.assert_allclose(evaluate(cbrt, X), [3.0, np.nan, 1.0, 2 * np.cbrt(4.0)], rtol=1e-15)
    # a float exponent equal to -1/3 in float64 is not the exact -1/3: plain pow(x, 1/3)
    near = compile_tape(y * x ** se.RealDouble(-1 / 3), ["x", "y"])
    assert near.ops.tolist() == [PUSH_VAR, opcodes.POW_C, RDIV_V] and near.args[1] == 1 / 3
    np.testing.assert_allclose(evaluate(near, X), [3.0, np.nan, 1.0, 2 * np.cbrt(4.0)], rtol=1e-14)
    root = compile_tape(y * x ** se.Rational(-1, 2), ["x", "y"])
    assert root.ops.tolist() == [PUSH_VAR, opcodes.SQRT, RDIV_V]
    np.testing.assert_allclose(evaluate(root, X[:, [0, 2, 3]]), [6 / np.sqrt(8), 3 / np.sqrt(27), 4.0], rtol=1e-15)
    square = compile_tape(y * x**-2, ["x", "y"])
    assert square.ops.tolist() == [PUSH_VAR, opcodes.POWI, RDIV_V] and square.args[1] == 2.0
    assert evaluate(square, X).tolist() == [6 / 64, 6 / 64, 3 / 729, 32.0]


def test_a_term_is_subtracted_when_its_float64_coefficient_is_negative():
    X = np.array([[1.0, 2.0], [7.0, 14.0]])
    minus = compile_tape(x + se.Rational(-3, 7) * y, ["x", "y"])  # x - 3*y/7
    assert minus.ops.tolist() == [opcodes.PUSH_VAR, opcodes.MUL_C, opcodes.DIV_C, opcodes.RSUB_V]
    assert evaluate(minus, X).tolist() == [-2.0, -4.0]
    # -1/10**400 rounds to -0.0 (not < 0): the term is added, as -(y / inf) (denominator past float64)
    tiny = compile_tape(x + se.Rational(-1, 10**400) * y, ["x", "y"])
    assert tiny.ops.tolist() == [opcodes.PUSH_VAR, opcodes.DIV_C, opcodes.NEG, opcodes.ADD_V]
    assert tiny.args[1] == np.inf
    assert evaluate(tiny, X).tolist() == [1.0, 2.0]


def test_folded_constants_keep_the_sign_of_zero():
    # atan2(±0, -1) = ±pi; SymEngine deems atan2(0.0, -1) and atan2(-0.0, -1) equal
    for zeros in [(-0.0, 0.0), (0.0, -0.0)]:
        tapes = [compile_tape(x * se.atan2(se.RealDouble(zero), -1), ["x"]) for zero in zeros]
        assert [t.args[1] for t in tapes] == [np.copysign(np.pi, zero) for zero in zeros]


def test_n_variables_counts_fused_variables_and_names_may_be_a_tuple():
    assert compile_tape(x - z, ("x", "y", "z")).n_variables == 3  # z only in SUB_V
    assert compile_tape(y * 2, ["x", "y", "z"]).n_variables == 2
    assert compile_tape(se.pi + 0 * x, ["x"]).n_variables == 0
    by_tuple, by_list = compile_tape(x - z, ("x", "y", "z")), compile_tape(x - z, ["x", "y", "z"])
    assert by_tuple.variables == by_list.variables == ("x", "y", "z")
    assert by_tuple.args.tolist() == by_list.args.tolist() == [0.0, 2.0]
    for _ in range(2):  # the error is not lost to a cache
        with pytest.raises(ValueError, match="duplicate"):
            compile_tape(x, ("x", "y", "x"))


def _simulated_depth(ops) -> int:
    depth = top = 0
    for code in ops:
        if code in (opcodes.PUSH_VAR, opcodes.PUSH_CONST, opcodes.LOAD):
            top += 1
        elif code in opcodes.BINARY:
            top -= 1
        depth = max(depth, top)
    assert top == 1
    return depth


def test_declared_depth_matches_stack_simulation():
    for expr, ranges, _ in CASES:
        tape = compile_tape(expr, list(ranges))
        assert tape.depth == _simulated_depth(tape.ops.tolist())
    # deepest operand first: a long sum of products needs 3 rows, not one per term
    wide = sum(x**i * y**j / (i + j + 1) + se.sin(x * j) for i in range(4) for j in range(4))
    assert compile_tape(wide, ["x", "y"]).depth <= 3


def test_batch_equals_each_tape_alone():
    tapes = []
    names = ["x", "y", "z", "a", "w", "t", "phi"]
    for expr, ranges, _ in CASES:
        if set(ranges) <= set(names):
            tapes.append(compile_tape(expr, names))
    tapes.append(compile_tape(x + 0 * y, names))  # x alone: depth 1, one instruction
    assert len(tapes) >= 6
    X = RNG.uniform(0.2, 0.8, (len(names), N))
    batch = pack(tapes)
    assert isinstance(batch, TapeBatch) and len(batch) == len(tapes)
    together = evaluate(batch, X)
    assert together.shape == (len(tapes), N)
    np.testing.assert_array_equal(evaluate(tapes, X), together)
    for i, tape in enumerate(tapes):
        np.testing.assert_array_equal(evaluate(tape, X), together[i])
    np.testing.assert_array_equal(evaluate(batch, np.asfortranarray(X)), together)
    assert evaluate(pack([]), X).shape == (0, N)
    assert evaluate(batch, X[:, :0]).shape == (len(tapes), 0)



def test_costly_parts_shared_in_a_batch_give_each_tape_its_own_values():
    """Results of library calls recur across the tapes of a batch and are reused, more
    of them than a block keeps; every row is bit for bit the tape's own evaluation (the
    scalar interpreter of ``evaluate_bounded``, which shares nothing)."""
    names = ["x", "y", "z"]
    x, y, z = sym("x y z")
    exprs = []
    for c in range(1, 8):
        exprs += [se.sin(x) * c + y, se.exp(-x / y) * z + c, (x + y) ** se.Rational(1, c + 2) * z,
                  se.atan2(y, x + c) + se.sin(x), x ** (y + c) + se.log(z), se.sin(x) * se.cos(se.sin(x))]
    exprs += [se.cos(x + k) * se.sin(x) for k in range(SHARED + 20)]  # more than a block keeps
    tapes = [compile_tape(e, names) for e in exprs]
    X = RNG.uniform(0.5, 2.0, (3, N))
    together = evaluate(tapes, X)
    for tape, row in zip(tapes, together):
        alone, _ = evaluate_bounded(tape, X, np.arange(N))
        assert np.array_equal(row.view(np.int64), alone.view(np.int64))


def test_parts_differing_only_in_the_sign_of_a_zero_are_not_shared():
    x = se.Symbol("x")
    tapes = [compile_tape(se.atan2(se.RealDouble(zero), x), ["x"]) for zero in (0.0, -0.0, 0.0)]
    rows = evaluate(tapes, np.full((1, 5), -2.0))
    assert rows[:, 0].tolist() == [np.pi, -np.pi, np.pi]

def _chain(steps: int, start: se.Basic) -> se.Basic:
    """``a_i = sin(a_{i-1}) + cos(a_{i-1}) * y - exp(a_{i-1}) / 3``: a tree of about
    3**steps nodes over a few per step (a solved mechanism's substitution chain)."""
    for _ in range(steps):
        start = se.sin(start) + se.cos(start) * y - se.exp(start) / 3
    return start


def test_shared_subexpressions_are_compiled_once():
    tape = compile_tape(_chain(12, x / 10**8), ["x", "y"])
    assert len(tape.ops) < 300  # the tree has about 3**12 nodes
    assert opcodes.LOAD in tape.ops and opcodes.STORE in tape.ops
    X = np.vstack([np.linspace(1e7, 1e8, 50), np.linspace(0.1, 0.3, 50)])
    expected = X[0] / 10**8
    for _ in range(12):
        expected = np.sin(expected) + np.cos(expected) * X[1] - np.exp(expected) / 3
    np.testing.assert_allclose(evaluate(tape, X), expected, rtol=1e-12)
    values, errors = evaluate_bounded(tape, X, np.arange(50))
    np.testing.assert_allclose(values, expected, rtol=1e-12)
    assert np.all(np.isfinite(errors))


def test_a_shared_compilation_gives_the_bits_of_the_tree(monkeypatch):
    """Forced to share (a tiny tree limit), tapes give the values and error bounds of
    the tree compilation bit for bit, alone and in a batch with tree tapes (a part that
    reads a kept row is never reused across tapes)."""
    names = ["x", "y"]
    exprs = [_chain(4, x * k + y) + se.atan2(y, _chain(2, x + k)) for k in (1, 2, 3)]
    trees = [compile_tape(e, names) for e in exprs]
    monkeypatch.setattr(lowering, "MAX_TREE_NODES", 3)  # the tree limit, and the largest constant folded when shared
    shared = [compile_tape(e, names) for e in exprs]
    assert all(len(s.ops) < len(t.ops) / 4 for s, t in zip(shared, trees))
    X = np.vstack([RNG.uniform(0.1, 0.4, N), RNG.uniform(0.1, 0.3, N)])
    for tree, kept in zip(trees, shared):
        assert kept.depth >= _simulated_depth(kept.ops.tolist()) + np.count_nonzero(kept.ops == opcodes.STORE)
        assert np.isfinite(evaluate(tree, X)).all()
        assert np.array_equal(evaluate(tree, X).view(np.int64), evaluate(kept, X).view(np.int64))
        for one, other in zip(evaluate_bounded(tree, X, np.arange(40)), evaluate_bounded(kept, X, np.arange(40))):
            assert np.array_equal(one.view(np.int64), other.view(np.int64))
    mixed = trees + shared + shared[::-1] + trees[::-1]
    together = evaluate(mixed, X)
    alone = np.array([evaluate(t, X) for t in mixed])
    assert np.array_equal(together.view(np.int64), alone.view(np.int64))


def test_a_repeated_subexpression_is_emitted_once_into_the_same_tape(monkeypatch):
    """A tree that repeats its parts (as a solved mechanism's law does) compiles to the
    instructions a compiler without the memo of emitted parts writes, and a repeat still
    counts its nodes against the tree limit."""
    names = ["x", "y"]
    part = x * y / (1 + x) - 3 * y ** 2
    exprs = [part ** 2 + se.sin(part) * part - 1 / part, _chain(5, x * 2 + y) * (x + y) - _chain(5, x * 2 + y)]
    remembered = [compile_tape(e, names) for e in exprs]
    initialise = lowering._Compiler.__init__

    def without_memo(self, index, emitted=None):
        initialise(self, index)
        self.emitted = None

    monkeypatch.setattr(lowering._Compiler, "__init__", without_memo)
    for tape, e in zip(remembered, exprs):
        plain = compile_tape(e, names)
        assert np.array_equal(tape.ops, plain.ops) and np.array_equal(tape.args.view(np.int64),
                                                                      plain.args.view(np.int64))
    monkeypatch.undo()
    calls = []
    emit = lowering._Compiler._mul
    monkeypatch.setattr(lowering._Compiler, "_mul", lambda self, *a: calls.append(1) or emit(self, *a))
    compile_tape(exprs[0], names)
    assert len(calls) <= 4  # part's products once each, not once per repeat
    monkeypatch.setattr(lowering, "MAX_TREE_NODES", 40)
    assert opcodes.STORE in compile_tape(exprs[1], names).ops  # repeats counted: past the limit, shared


def test_a_part_compiled_for_one_tape_is_copied_into_the_next(monkeypatch):
    """Tapes over the same variables share a memo of emitted parts (a perturbed law
    ``1.05*L`` is ``L``'s code and one instruction): the parts are emitted once, every
    tape gives the instructions and values a fresh compilation gives, and a copied part
    still counts the rows of ``X`` it reads; ``caches.clear()`` empties the memo."""
    from fastscore.support import caches
    names = ("x", "y", "z")
    law = x * y / (1 + se.sin(z)) - 3 * y ** 2 / (x + z)
    exprs = [law, se.Rational(21, 20) * law, law + se.cos(law), se.sin(z) * 2 + 1]
    caches.clear()
    calls = []
    emit = lowering._Compiler._mul
    monkeypatch.setattr(lowering._Compiler, "_mul", lambda self, *a: calls.append(1) or emit(self, *a))
    compile_tape(exprs[0], names)
    first = len(calls)
    tapes = [compile_tape(e, names) for e in exprs]
    assert len(calls) - first <= 2  # the new products of 1.05*L and of the last formula only
    monkeypatch.undo()
    X = RNG.uniform(0.5, 2.0, (3, N))
    for tape, e in zip(tapes, exprs):
        compiler = lowering._Compiler(tape_module._variable_index(names)[0])  # a memo of its own
        fresh = compiler.emit(e)
        assert tape.ops.tolist() == fresh.ops and tape.args.tolist() == fresh.args
        assert tape.n_variables == compiler.n_variables == 3
    expected = X[0] * X[1] / (1 + np.sin(X[2])) - 3 * X[1] ** 2 / (X[0] + X[2])
    np.testing.assert_allclose(evaluate(tapes[1], X), 1.05 * expected, rtol=1e-13)
    assert lowering._codes(names)
    caches.clear()
    assert not lowering._codes(names)


def test_a_huge_shared_constant_is_refused_not_folded():
    with pytest.raises(UnsupportedExpression, match="too large"):
        compile_tape(_chain(12, se.Integer(2)).subs({y: se.Rational(1, 5)}) + x, ["x"])


def test_x_with_too_few_rows_is_rejected():
    tape = compile_tape(x * z, ["x", "y", "z"])
    assert isinstance(tape, Tape) and tape.n_variables == 3
    with pytest.raises(ValueError, match="3 variables"):
        evaluate(tape, np.ones((2, 4)))


@pytest.mark.slow
def test_compiled_kernel_is_loaded_from_cache_by_a_new_process():
    evaluate(compile_tape(x + 1, ["x"]), np.ones((1, 3)))  # ensure the cache is written
    script = (
        "import numpy as np, symengine as se\n"
        "from fastscore.tapes.compile import compile_tape\n"
        "from fastscore.kernels import evaluate\n"
        "from fastscore.kernels.evaluate import evaluate_batch\n"
        "evaluate(compile_tape(se.Symbol('x') + 1, ['x']), np.ones((1, 3)))\n"
        "print(sum(evaluate_batch.stats.cache_hits.values()), sum(evaluate_batch.stats.cache_misses.values()))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["1", "0"]


def test_kernel_falls_back_to_memory_when_no_cache_location(monkeypatch):
    real = jit.numba.njit

    def njit(**options):
        if options.get("cache"):
            raise RuntimeError("cannot cache function 'f': no locator available for file")
        return real(**options)

    monkeypatch.setattr(jit.numba, "njit", njit)
    with pytest.warns(UserWarning, match="cache unavailable"):
        f = jit.kernel(lambda u: 1.0 / u)
    assert f(0.0) == np.inf  # IEEE semantics kept in the fallback


def test_a_source_change_drops_the_in_tree_cache(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    kept = [cache / "a.cpython-311.pyc"]
    compiled = [cache / "a.f-10.py311.nbi", cache / "a.f-10.py311.1.nbc"]
    for path in kept + compiled:
        path.write_bytes(b"old")
    jit.drop_stale_cache(tmp_path)  # no stamp yet: unknown sources
    assert [p.exists() for p in kept + compiled] == [True, False, False]
    for path in compiled:
        path.write_bytes(b"new")
    jit.drop_stale_cache(tmp_path)  # same sources: kept
    assert all(p.exists() for p in compiled)
    (tmp_path / "b.py").write_text("y = 2\n")
    jit.drop_stale_cache(tmp_path)  # another module changed: dropped
    assert not any(p.exists() for p in compiled)


# ---------------------------------------------------------------- metrics


def test_metrics_match_numpy_references():
    y = RNG.normal(2.0, 1.0, 500)
    pred = y + RNG.normal(0, 0.3, (4, 500))
    pred[3] = 5.0 - 2.0 * y  # perfectly anti-correlated
    got = split_metrics(pred, y)
    assert set(got) == set(METRICS)
    for i, row in enumerate(pred):
        e = row - y
        assert got["max_rel_err"][i] == pytest.approx(np.max(np.abs(e) / np.abs(y)), rel=1e-14)
        assert got["r2"][i] == pytest.approx(1 - np.sum(e**2) / np.sum((y - y.mean()) ** 2), rel=1e-12)
        assert got["rmse"][i] == pytest.approx(np.sqrt(np.mean(e**2)), rel=1e-12)
        assert got["mae"][i] == pytest.approx(np.mean(np.abs(e)), rel=1e-12)
        assert got["smape"][i] == pytest.approx(np.mean(2 * np.abs(e) / (np.abs(row) + np.abs(y))), rel=1e-12)
        assert got["pearson_r"][i] == pytest.approx(np.corrcoef(row, y)[0, 1], rel=1e-12)
    assert got["pearson_r"][3] == pytest.approx(-1.0, rel=1e-14)


def test_metrics_known_values_and_edges():
    y = np.array([1.0, 2.0, 4.0, 0.0])
    got = split_metrics(np.array([1.1, 2.0, 3.0, 0.0]), y)
    assert got["max_rel_err"].shape == ()
    assert got["max_rel_err"] == pytest.approx(0.25)  # |3 - 4| / 4; 0 predicted exactly at y = 0
    assert got["mae"] == pytest.approx(1.1 / 4)
    assert got["smape"] == pytest.approx((0.2 / 2.1 + 0 + 2 / 7 + 0) / 4)
    assert split_metrics(np.array([1e-10]), np.array([0.0]))["max_rel_err"] == pytest.approx(1e290)
    assert split_metrics(-y[:3], y[:3])["smape"] == pytest.approx(2.0)
    constant = split_metrics(np.full(3, 0.1), np.array([0.1, 0.2, 0.3]))
    assert np.isnan(constant["pearson_r"]) and constant["r2"] == pytest.approx(-1.5)
    assert np.isnan(split_metrics(np.array([1.0, 2.0]), np.array([3.0, 3.0]))["r2"])


def test_any_non_finite_prediction_fails_the_split():
    y = np.array([1.0, 2.0, 3.0])
    got = split_metrics(np.array([[1.0, 2.0, 3.0], [1.0, np.nan, 3.0], [np.inf, 2.0, 3.0]]), y)
    assert got["max_rel_err"].tolist() == [0.0, np.inf, np.inf]
    for name in METRICS[1:]:
        assert np.isfinite(got[name][0]) and np.isnan(got[name][1:]).all()
    assert accuracy(got["max_rel_err"]).tolist() == [True, False, False]


def test_metrics_reject_bad_reference():
    with pytest.raises(ValueError):
        split_metrics(np.ones(2), np.array([1.0, np.nan]))
    with pytest.raises(ValueError):
        split_metrics(np.ones(3), np.ones(2))


def test_accuracy_threshold_is_inclusive():
    err = np.array([0.0, 0.1, np.nextafter(0.1, 1), np.nan, np.inf])
    assert accuracy(err).tolist() == [True, True, False, False, False]
    assert accuracy(err, tol=1.0).tolist() == [True, True, True, False, False]
    # through the whole pipeline: predicting 11 for 10 is exactly 10 % off and passes
    pred = evaluate([compile_tape(x + 1, ["x"]), compile_tape(x + 1.000001, ["x"])], np.array([[10.0, -20.0]]))
    err = split_metrics(pred, np.array([10.0, -20.0]))["max_rel_err"]
    assert err[0] == 0.1 and accuracy(err).tolist() == [True, False]
