"""The register program of a law's pairwise part (``fastscore.kernels.pairs``): its values
are the tapes' values bit for bit (``evaluate`` on the same points), repeated
instructions are computed once (within a component and across components), and values
the same for all of a particle's pairs are computed once per particle, as scalars."""
from __future__ import annotations

import numpy as np
import pytest
import symengine as se

from fastscore.benchmarks.trajectories import compile_law
from fastscore.kernels import opcodes as op
from fastscore.kernels.evaluate import BLOCK, evaluate
from fastscore.kernels.motion import MOTION_VARIABLES, N_FIXED
from fastscore.kernels.pairs import FIRST_PAIR, N_PAIR, pair_program, run_rows, run_scalars
from fastscore.kernels.tape import Tape, pack
from fastscore.settings import Settings
from fastscore.tapes.compile import compile_tape

PARAMETERS = {"C": 0.7, "G": 1.1}
COULOMB = {"pair_x": "-C*q*q_j*dx/(m*r**3)", "pair_y": "-C*q*q_j*dy/(m*r**3)"}


def _points(n_params: int, nb: int, seed: int = 0, special: bool = False) -> np.ndarray:
    """Variables of one particle's ``nb`` pairs: own rows and parameters the same in every
    column, pair rows varying (``special``: zeros, infinities and NaN among them)."""
    rng = np.random.default_rng(seed)
    X = np.empty((N_FIXED + n_params, nb))
    X[:FIRST_PAIR] = rng.normal(size=(FIRST_PAIR, 1)) * 2
    X[N_FIXED:] = rng.uniform(0.5, 2, size=(n_params, 1))
    X[FIRST_PAIR:FIRST_PAIR + N_PAIR] = rng.normal(size=(N_PAIR, nb)) * 2
    X[FIRST_PAIR + 3] = np.abs(X[FIRST_PAIR + 3])  # r >= 0
    if special:
        X[FIRST_PAIR:FIRST_PAIR + N_PAIR, :4] = [[0.0] * 4, [0.0, -0.0, np.inf, np.nan], [0.0] * 4,
                                                 [0.0, 0.0, np.inf, np.nan], [1.0, -1.0, 0.0, np.inf], [0.0] * 4]
    return X


def _run(program, X: np.ndarray) -> list[np.ndarray]:
    """Each tape's values at the columns of ``X`` through the program."""
    nb = X.shape[1]
    S = program.constants.copy()
    W = np.full((program.n_rows, BLOCK), np.nan)
    W[:N_PAIR, :nb] = X[FIRST_PAIR:FIRST_PAIR + N_PAIR]
    run_scalars(program.loads, program.scalars, S, X, 0)
    run_rows(program.rows, S, W, nb)
    return [W[row, :nb].copy() for row in program.results]


def _law(formulas: dict, dim: int = 3):
    law = compile_law(formulas, PARAMETERS, dim, Settings().limits)
    ops, args, starts, depth, has, _, params = law
    tapes = [k for k in range(dim, 2 * dim) if has[k]]
    batch = [Tape(ops[starts[k]:starts[k + 1]], args[starts[k]:starts[k + 1]], depth, N_FIXED + params.size)
             for k in tapes]
    return pair_program(ops, args, starts, tapes), batch


def _codes(program) -> list[int]:
    return program.rows[:, 0].tolist()


@pytest.mark.parametrize("formulas", [
    COULOMB,
    {"pair_x": "G*m_j*dx/(r**2 + 0.1)**1.5", "pair_y": "sin(dy)*exp(-r)", "pair_z": "atan2(dz, r + 1) - dz**q"},
    {"pair_x": "vx - vx*0 + q_j*vy", "pair_y": "(vx + C)*dy/(1 + r**-2)", "pair_z": "exp(-q)*sqrt(m) + dz"},
    {"pair_x": "C*q", "pair_y": "dy", "pair_z": "C*q + 0*dz"},   # one value for all pairs; a pair row itself
    {"pair_x": "2**dx - (1 - dx)/q + cbrt(r) - log(r)", "pair_y": "abs(dy)*sign(dx) - 3", "pair_z": "tanh(dz)**-3"},
    {"pair_x": "dx/(r - sqrt(r**2))", "pair_y": "log(dy - 100)", "pair_z": "exp(1000*r)"},  # NaN and inf
])
@pytest.mark.parametrize("special", [False, True])
def test_the_program_gives_the_tapes_values_bit_for_bit(formulas, special):
    program, tapes = _law(formulas)
    X = _points(len(PARAMETERS), 37, seed=len(str(formulas)), special=special)
    for got, want in zip(_run(program, X), evaluate(tapes, X)):
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_shared_parts_of_the_components_are_computed_once():
    program, tapes = _law(COULOMB, dim=2)
    # x: (C*q)*dx*q_j / (r**3*m), negated; y: the same with dy.  C*q is a scalar (one MUL
    # per particle); r**3 and r**3*m are computed once for both components.
    assert _codes(program).count(op.POWI) == 1
    assert _codes(program).count(op.DIV) == 2
    assert len(program.rows) == 6 + 4
    assert program.scalars[:, 0].tolist() == [op.MUL]
    assert sum(len(t.ops) for t in tapes) == 18


def test_components_without_shared_parts_are_computed_apart():
    program, tapes = _law({"pair_x": "dx*q_j", "pair_y": "dy/r"}, dim=2)
    assert _codes(program) == [op.MUL, op.DIV]
    assert len(set(program.results.tolist())) == 2
    program, _ = _law({"pair_x": "dx*q_j", "pair_y": "q_j*dx"}, dim=2)  # one value, one register
    assert _codes(program) == [op.MUL] and program.results[0] == program.results[1]


def test_a_value_of_the_particle_alone_is_a_scalar():
    program, _ = _law({"pair_x": "exp(-q*C)*sqrt(vx**2 + vy**2)*dx"}, dim=1)
    # exp(-C*q) and the speed once per particle; per pair: dx times a scalar (or two)
    assert set(_codes(program)) == {op.MUL}
    assert {op.EXP, op.SQRT} <= set(program.scalars[:, 0].tolist())
    assert {op.EXP, op.SQRT}.isdisjoint(_codes(program))
    program, _ = _law({"pair_x": "C*q"}, dim=1)  # every pair the same: one fill
    assert _codes(program) == [op.PUSH_CONST]


def test_registers_are_reused_and_binary_results_never_overwrite_an_operand():
    program, _ = _law({"pair_x": "((dx + 1)*(dy + 2) + (dz + 3)*(r + 4))*((q_j + 5)*(m_j + 6))"})
    rows = program.rows.tolist()
    assert program.n_rows - 1 - N_PAIR < len(rows)  # fewer registers than instructions
    for code, _mode, dst, a, b, _n in rows:
        if b >= 0 and code != op.PUSH_CONST:
            assert dst not in (a, b) and dst >= N_PAIR


def test_kept_rows_of_a_large_shared_tree_are_values():
    names = (*MOTION_VARIABLES, "C", "G")
    dx, q, r = se.Symbol("dx"), se.Symbol("q"), se.Symbol("r")
    a = dx
    for _ in range(14):  # a tree of ~2**14 nodes over a few dozen distinct ones: STORE / LOAD
        a = se.sin(a) * q + se.cos(a) / (r + 1)
    tape = compile_tape(a, names)
    assert op.STORE in tape.ops.tolist() and op.LOAD in tape.ops.tolist()
    batch = pack([tape])
    program = pair_program(batch.ops, batch.args, batch.starts, [0])
    X = _points(2, 50, seed=3)
    assert np.array_equal(_run(program, X)[0], evaluate(tape, X), equal_nan=True)
    assert op.STORE not in _codes(program) and op.LOAD not in _codes(program)
