"""DiscoverPhysics at its thresholds, by hand: an error exactly at ``dp_error_threshold``
(no pass: "below"), an explanation score exactly at ``dp_explanation_threshold`` (a
pass: "at least"), a missing / NaN / non-numeric explanation, the thresholds changed
through the settings (Python and the command line), the geometric mean with a zero
and an infinite error, and bad trajectories beside good ones."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import polars as pl
import pytest

from fastscore.benchmarks.trajectories import ERROR_FLOOR, RATES, score_task
from fastscore.problems.formats import load_problems
from fastscore.settings import DEFAULT_SETTINGS, Settings

WORLD = """benchmark: discoverphysics
name: "{name}"
world: "{name}"
difficulty: "{difficulty}"
dim: 1
particles: {{mass: [1.0], charge: [0.0]}}
initial: {{time: 0.0, positions: [[{start}]], velocities: [[0.0]]}}
times: [1.0]
variance: {variance}
heldout: [[[{start}]]]
"""
# "still": held-out position 0, V_w = 10, so a prediction off by 1 has error 1/10 = 0.1 exactly
# "rest": held-out position 1, V_w = 4, so a prediction off by 1 has error 0.25


@pytest.fixture
def worlds(tmp_path):
    folder = tmp_path / "worlds"
    folder.mkdir()
    (folder / "still.yaml").write_text(WORLD.format(name="still", difficulty="easy", start=0.0, variance=10.0))
    (folder / "rest.yaml").write_text(WORLD.format(name="rest", difficulty="hard", start=1.0, variance=4.0))
    return folder


def rows_of(worlds, submissions, settings=DEFAULT_SETTINGS):
    problem = {p.task_id: p for p in load_problems(worlds)}["still"]
    rows = [{"config": "a", "run": i, "task": "still", "submission": text, **extra}
            for i, (text, extra) in enumerate(submissions)]
    return score_task(problem, rows, settings)


def test_an_error_exactly_at_the_threshold_is_not_a_pass(worlds):
    at, inside = rows_of(worlds, [("[[[1.0]]]", {"explanation_score": 1.0}),
                                  ("[[[0.5]]]", {"explanation_score": 1.0})])
    assert at["dp_error"] == 0.1 and at["dp_pass"] is False  # below 0.1, not at it
    assert inside["dp_error"] == 0.025 and inside["dp_pass"] is True
    raised = rows_of(worlds, [("[[[1.0]]]", {"explanation_score": 1.0})],
                     Settings(dp_error_threshold=math.nextafter(0.1, 1.0)))
    assert raised[0]["dp_pass"] is True


@pytest.mark.parametrize("extra, kept, passed", [
    ({"explanation_score": 0.9}, 0.9, True),                               # at least 0.9
    ({"explanation_score": math.nextafter(0.9, 0.0)}, math.nextafter(0.9, 0.0), False),
    ({"explanation_score": 1}, 1.0, True),                                 # an integer score
    ({}, None, False),                                                     # no column: no pass
    ({"explanation_score": None}, None, False),
    ({"explanation_score": math.nan}, "nan", False),
    ({"explanation_score": "0.95"}, None, False),                          # not a number: no pass
    ({"explanation_score": True}, None, False),
])
def test_the_explanation_score_at_and_around_its_threshold(worlds, extra, kept, passed):
    (row,) = rows_of(worlds, [("[[[0.0]]]", extra)])
    assert row["status"] == "ok" and row["dp_error"] == 0.0 and row["dp_pass"] is passed
    if kept == "nan":
        assert math.isnan(row["explanation_score"])
    else:
        assert row["explanation_score"] == kept


def test_the_explanation_threshold_is_a_setting(worlds):
    got = rows_of(worlds, [("[[[0.0]]]", {"explanation_score": 0.9}), ("[[[0.0]]]", {"explanation_score": 0.95})],
                  Settings(dp_explanation_threshold=0.95))
    assert [row["dp_pass"] for row in got] == [False, True]


@pytest.mark.parametrize("text, reason", [
    ("[[1.0]]", "shape (1, 1), expected (1, 1, 1)"),
    ("[[[1.0, 2.0]]]", "shape (1, 1, 2), expected (1, 1, 1)"),
    ("[[[NaN]]]", "not finite"),
    ('{"trajectories": [[[Infinity]]]}', "not finite"),
    ('[[["x"]]]', "not an array of numbers"),
    ("[[[1.0]]", "not JSON"),
])
def test_bad_trajectories_are_parse_errors_beside_good_rows(worlds, text, reason):
    bad, good = rows_of(worlds, [(text, {"explanation_score": 1.0}), ("[[[0.0]]]", {"explanation_score": 1.0})])
    assert bad["status"] == "parse_error" and reason in bad["error"] and bad["dp_pass"] is None
    assert bad.get("dp_error") is None
    assert good["status"] == "ok" and good["dp_pass"] is True


def _gmean(errors):
    frame = pl.DataFrame({"domain": ["discoverphysics"] * len(errors), "dp_error": errors},
                         schema={"domain": pl.Utf8, "dp_error": pl.Float64})
    return frame.select(next(rate[2] for rate in RATES if rate[0] == "dp_gmean_error")).item()


def test_geometric_mean_floors_a_zero_and_keeps_an_infinite_error():
    assert _gmean([0.04, 0.01]) == pytest.approx(0.02)
    assert _gmean([0.0, 0.04]) == pytest.approx(math.sqrt(ERROR_FLOOR * 0.04))  # not 0
    assert _gmean([0.0, 0.0]) == pytest.approx(ERROR_FLOOR)
    assert _gmean([math.inf, 0.01]) == math.inf
    assert _gmean([0.0, math.inf]) == math.inf  # not NaN
    assert _gmean([None, math.nan, 0.04]) == pytest.approx(0.04)  # rows without an error are left out
    assert _gmean([None]) is None


def test_a_sweep_with_thresholds_set_on_the_command_line(worlds, tmp_path):
    rows = [{"config": "a", "run": 0, "task": "still", "submission": "[[[1.0]]]", "explanation_score": 0.5},
            {"config": "a", "run": 0, "task": "rest", "submission": "ax = 0", "explanation_score": 0.5},   # error 0
            {"config": "a", "run": 1, "task": "still", "submission": "[[[2.0]]]", "explanation_score": 0.5},
            {"config": "a", "run": 1, "task": "rest", "submission": "[[[NaN]]]", "explanation_score": 0.5}]
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "fastscore", "score", "--problems", str(worlds), "--sweep", str(sweep),
                    "--out", str(out), "--executor", "local", "--dp-error-threshold", "0.25",
                    "--dp-explanation-threshold", "0.5"], check=True, capture_output=True)
    scores = {(r["run"], r["task"]): r for r in pl.read_parquet(out / "scores.parquet").iter_rows(named=True)}
    assert (scores[(0, "still")]["dp_error"], scores[(0, "still")]["dp_pass"]) == (0.1, True)
    assert (scores[(0, "rest")]["dp_error"], scores[(0, "rest")]["dp_pass"]) == (0.0, True)
    assert (scores[(1, "still")]["dp_error"], scores[(1, "still")]["dp_pass"]) == (0.4, False)
    assert scores[(1, "rest")]["status"] == "parse_error"
    summary = pl.read_parquet(out / "summary.parquet").row(0, named=True)
    # run 0: sqrt(0.1 * floor); run 1: 0.4 alone (the bad row has no error)
    assert summary["dp_gmean_error"] == pytest.approx((math.sqrt(0.1 * ERROR_FLOOR) + 0.4) / 2)
    assert summary["dp_pass"] == pytest.approx((1.0 + 0.0) / 2)
    passk = pl.read_parquet(out / "passk.parquet").filter(pl.col("outcome") == "dp_pass")
    assert passk.select("k", "pass_at_k").rows() == [(1, 0.5), (2, 1.0)]  # still: n=2 c=1; rest: n=2 c=1
    strata = pl.read_parquet(out / "strata.parquet").filter(pl.col("stratum") == "difficulty")
    assert dict(strata.select("value", "dp_pass").rows()) == {"easy": 0.5, "hard": 0.5}
    meta = json.loads((out / "meta.json").read_text())
    assert meta["settings"]["dp_error_threshold"] == 0.25
