"""DiscoverPhysics: normalised trajectory error by hand, laws of motion integrated
(RK4 against the exact springs solution and an independent NumPy RK4 of Coulomb
forces; velocity Verlet), the pass rule, bad input and the work bound, a sweep."""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fastscore.benchmarks.base import BadInput
from fastscore.benchmarks.trajectories import compile_law, normalised_error, score_attempt, simulate
from fastscore.problems.formats import load_problems
from fastscore.run.job import score_sweep
from fastscore.settings import Settings

DP = Path(__file__).resolve().parents[2] / "problems" / "discoverphysics"
WORLDS = {p.task_id: p for p in load_problems(DP)}
SPRINGS, CHARGES = WORLDS["springs"].task, WORLDS["charges"].task
SPRING_LAW = json.dumps({"acceleration": {"x": "-k*x/m", "y": "-k*y/m"}, "parameters": {"k": 2}})
COULOMB = {"pair_x": "-C*q*q_j*dx/(m*r**3)", "pair_y": "-C*q*q_j*dy/(m*r**3)"}


def test_normalised_error_by_hand():
    heldout = np.zeros((2, 3, 2))
    predicted = heldout.copy()
    predicted[0, :, 0] = 0.3          # particle 0 off by 0.3 in x at every time: squared distance 0.09
    predicted[1, 2] = (0.3, 0.4)      # particle 1 off by 0.5 at the last time: 0.25
    # mean over the 6 particle-time pairs: (3 * 0.09 + 0.25) / 6; over V_w = 2
    assert normalised_error(predicted, heldout, 2.0) == pytest.approx((3 * 0.09 + 0.25) / 6 / 2)
    predicted[0, 0, 0] = np.inf
    assert normalised_error(predicted, heldout, 2.0) == math.inf


def test_predicted_trajectories_are_scored_and_checked():
    exact = SPRINGS["heldout"]
    assert score_attempt(SPRINGS, json.dumps({"trajectories": exact.tolist()}), Settings())["dp_error"] == 0.0
    shifted = (exact + np.array([0.1, 0.0])).tolist()
    assert score_attempt(SPRINGS, json.dumps(shifted), Settings())["dp_error"] == pytest.approx(
        0.01 / SPRINGS["variance"])
    with pytest.raises(BadInput, match=r"shape \(3, 19, 2\), expected \(3, 20, 2\)"):
        score_attempt(SPRINGS, json.dumps(exact[:, 1:].tolist()), Settings())
    bad = exact.tolist()
    bad[1][4][0] = float("nan")
    with pytest.raises(BadInput, match="not finite"):
        score_attempt(SPRINGS, json.dumps({"trajectories": bad}).replace("NaN", "NaN"), Settings())
    with pytest.raises(BadInput, match="not an array of numbers"):
        score_attempt(SPRINGS, json.dumps({"trajectories": [[["a", 1]]]}), Settings())


@pytest.mark.slow
def test_the_spring_law_reproduces_the_exact_solution():
    rk4 = score_attempt(SPRINGS, SPRING_LAW, Settings())
    assert rk4["dp_submission"] == "law" and rk4["dp_steps"] == 20 * 10
    assert rk4["dp_error"] < 1e-15  # RK4, h = 0.01: position errors near 1e-9
    verlet = score_attempt(SPRINGS, SPRING_LAW, Settings(dp_integrator=1))["dp_error"]
    assert 1e-12 < verlet < 1e-8  # second order: errors near 1e-5
    lines = score_attempt(SPRINGS, "ax = -2*x/m\nay = -2*y/m", Settings())["dp_error"]
    assert lines == pytest.approx(rk4["dp_error"], abs=1e-18)
    wrong = score_attempt(SPRINGS, "ax = -x/m\nay = -y/m", Settings())["dp_error"]
    assert wrong > 0.01


def _numpy_rk4(task, steps_per_interval: int) -> np.ndarray:
    """An independent RK4 of Coulomb forces (C = 1) in NumPy."""
    q, m = task["charge"], task["mass"]

    def acceleration(p):
        d = p[None, :, :] - p[:, None, :]                     # d[i, j] = p_j - p_i
        r = np.sqrt((d ** 2).sum(-1))
        np.fill_diagonal(r, np.inf)
        return (-(q[:, None] * q[None, :])[..., None] * d / r[..., None] ** 3).sum(1) / m[:, None]

    p, v, t, out = task["positions"].copy(), task["velocities"].copy(), task["t0"], []
    for target in task["times"]:
        h = (target - t) / steps_per_interval
        for _ in range(steps_per_interval):
            k1x, k1v = v, acceleration(p)
            k2x, k2v = v + h / 2 * k1v, acceleration(p + h / 2 * k1x)
            k3x, k3v = v + h / 2 * k2v, acceleration(p + h / 2 * k2x)
            k4x, k4v = v + h * k3v, acceleration(p + h * k3x)
            p = p + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
            v = v + h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
        t = target
        out.append(p.copy())
    return np.stack(out, axis=1)


def test_pairwise_forces_match_an_independent_rk4():
    law = compile_law(COULOMB, {"C": 1.0}, 2, Settings().limits)
    predicted, steps = simulate(CHARGES, law, Settings(dp_substeps=7))
    assert steps == 140
    np.testing.assert_allclose(predicted, _numpy_rk4(CHARGES, 7), rtol=0, atol=1e-11)
    # and the bundled held-out data (2,000 steps an interval) is reached at the default 10
    assert score_attempt(CHARGES, json.dumps({"pairwise": {"x": COULOMB["pair_x"], "y": COULOMB["pair_y"]},
                                              "parameters": {"C": 1}}), Settings())["dp_error"] < 1e-8


@pytest.mark.parametrize("text, reason", [
    ("ax = -k*x", "unknown name 'k'"),
    ("ax = -dx/m", "unknown name 'dx'"),                       # a pair variable in the particle's own law
    ("az = 0", "expected 'ax = ...'"),                         # no z in a 2-D world
    ('{"acceleration": {"w": "0"}}', "component 'w'"),
    ('{"acceleration": {"x": "-k*x"}, "parameters": {"k": "two"}}', "not a finite number"),
    ('{"acceleration": {"x": "-x"}, "parameters": {"m": 1}}', "not a free name"),
    ('{"acceleration": {"x": "-pi*x"}, "parameters": {"pi": 2}}', "not a free name"),   # the grammar's constant
    ('{"acceleration": {"x": "sin*x"}, "parameters": {"sin": 2}}', "not a free name"),  # and function
    ("ax = 1/0", "division by zero"),
    ("{}", "gives no acceleration"),
    ("ax = __import__('os')", "ax:"),
])
def test_bad_laws_say_why(text, reason):
    with pytest.raises(BadInput, match=reason.replace("(", r"\(").replace(".", r"\.")):
        score_attempt(SPRINGS, text, Settings())


def test_work_past_the_bound_is_refused():
    with pytest.raises(OverflowError, match="exceed dp_max_work"):
        score_attempt(CHARGES, "pair_ax = 0", Settings(dp_max_work=4 * 3 * 200 - 1))
    score_attempt(CHARGES, "pair_ax = 0", Settings(dp_max_work=4 * 3 * 200))


def test_a_sweep_passes_on_error_and_explanation_and_takes_the_geometric_mean(tmp_path):
    def shifted(task, dx):
        return json.dumps((task["heldout"] + np.array([dx, 0.0])).tolist())
    rows = [  # errors: springs 0.01/V_s (run 0), charges 0.04/V_c (run 0)
        {"config": "a", "run": 0, "task": "springs", "submission": shifted(SPRINGS, 0.1), "explanation_score": 0.95},
        {"config": "a", "run": 0, "task": "charges", "submission": shifted(CHARGES, 0.2), "explanation_score": 0.5},
        {"config": "a", "run": 1, "task": "springs", "submission": SPRING_LAW, "explanation_score": 0.9},
        {"config": "a", "run": 1, "task": "charges", "submission": "[[1, 2]]", "explanation_score": 1.0},
        {"config": "b", "run": 0, "task": "springs", "submission": SPRING_LAW},  # no explanation score: no pass
    ]
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_sweep(DP, sweep, tmp_path / "out", executor="local")
    scores = {(r["config"], r["run"], r["task"]): r for r in
              pl.read_parquet(tmp_path / "out" / "scores.parquet").iter_rows(named=True)}
    e_springs, e_charges = 0.01 / SPRINGS["variance"], 0.04 / CHARGES["variance"]
    assert scores[("a", 0, "springs")]["dp_error"] == pytest.approx(e_springs)
    assert scores[("a", 0, "springs")]["dp_pass"] is True and scores[("a", 0, "charges")]["dp_pass"] is False
    assert scores[("a", 1, "springs")]["dp_pass"] is True  # explanation 0.9 >= 0.9
    assert scores[("a", 1, "charges")]["status"] == "parse_error"
    assert scores[("b", 0, "springs")]["dp_pass"] is False and scores[("b", 0, "charges")]["status"] == "missing"
    summary = {r["config"]: r for r in pl.read_parquet(tmp_path / "out" / "summary.parquet").iter_rows(named=True)}
    run1 = scores[("a", 1, "springs")]["dp_error"]
    assert summary["a"]["dp_gmean_error"] == pytest.approx((math.sqrt(e_springs * e_charges) + run1) / 2)
    assert summary["a"]["dp_pass"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    assert "explanation_score_median" not in summary["a"]  # an input score, not a solver cost
    passk = pl.read_parquet(tmp_path / "out" / "passk.parquet").filter(
        (pl.col("outcome") == "dp_pass") & (pl.col("config") == "a"))
    # springs n=2 c=2, charges n=2 c=0
    assert passk.select("k", "pass_at_k").rows() == [(1, pytest.approx(0.5)), (2, pytest.approx(0.5))]
