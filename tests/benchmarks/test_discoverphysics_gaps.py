"""DiscoverPhysics held-out data with gaps: a position missing (null or NaN in every
coordinate) is a particle-time pair that is not evaluated; the error is the mean over the
evaluated pairs, by hand.  A position missing in some coordinates only, or no pair left,
is a load error; a prediction may hold anything where the reference is missing, but must
be finite where it is evaluated."""
from __future__ import annotations

import json

import pytest

from fastscore.benchmarks.trajectories import score_task
from fastscore.problems.formats import load_problems
from fastscore.problems.model import ProblemError
from fastscore.settings import DEFAULT_SETTINGS

# two particles at rest in 2-D (no forces), held out at t = 1 and 2; V_w = 2.
# particle 1 is not observed at t = 2.
WORLD = """benchmark: discoverphysics
name: gaps
world: rest
difficulty: easy
dim: 2
particles: {{mass: [1.0, 1.0], charge: [0.0, 0.0]}}
initial: {{time: 0.0, positions: [[0.0, 0.0], [1.0, 0.0]], velocities: [[0.0, 0.0], [0.0, 0.0]]}}
times: [1.0, 2.0]
variance: 2.0
heldout: {heldout}
"""
GAPPED = "[[[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [null, null]]]"


def world(tmp_path, heldout=GAPPED):
    folder = tmp_path / "w"
    folder.mkdir(exist_ok=True)
    (folder / "gaps.yaml").write_text(WORLD.format(heldout=heldout))
    return load_problems(folder)


def score(problems, *texts):
    rows = [{"config": "a", "run": i, "task": "gaps", "submission": t, "explanation_score": 1.0}
            for i, t in enumerate(texts)]
    return score_task(problems[0], rows, DEFAULT_SETTINGS)


def test_the_error_is_the_mean_over_the_evaluated_pairs(tmp_path):
    problems = world(tmp_path)
    # off by (1, 1) at every evaluated pair: squared distance 2 at each of 3 pairs -> 2 / V_w = 1
    # the unevaluated pair holds anything: a huge value, null
    far = json.dumps([[[1.0, 1.0], [1.0, 1.0]], [[2.0, 1.0], [1e300, -1e300]]])
    unknown = "[[[1.0, 1.0], [1.0, 1.0]], [[2.0, 1.0], [null, null]]]"
    # one pair off by (0, 3) (9), the others exact: 9 / 3 pairs / 2 = 1.5
    one = json.dumps([[[0.0, 3.0], [0.0, 0.0]], [[1.0, 0.0], [7.0, 7.0]]])
    a, b, c = score(problems, far, unknown, one)
    assert (a["status"], a["dp_error"]) == ("ok", 1.0)
    assert (b["status"], b["dp_error"]) == ("ok", 1.0)
    assert (c["status"], c["dp_error"]) == ("ok", 1.5)


def test_a_law_is_judged_on_the_evaluated_pairs_only(tmp_path):
    problems = world(tmp_path)
    [rest] = score(problems, '{"acceleration": {"x": "0", "y": "0"}}')
    assert rest["status"] == "ok" and rest["dp_error"] == 0.0 and rest["dp_pass"] is True
    # a constant push x'' = 2: x = t**2, so x is off by 1 at t=1 (both), 4 at t=2 (particle 0 only):
    # (1 + 1 + 16) / 3 / 2 = 3, by RK4 exactly (a quadratic)
    [push] = score(problems, '{"acceleration": {"x": "2", "y": "0"}}')
    assert push["dp_error"] == pytest.approx(3.0, rel=1e-12)


def test_a_prediction_not_finite_where_evaluated_is_bad_input(tmp_path):
    problems = world(tmp_path)
    [row] = score(problems, "[[[0.0, 0.0], [0.0, null]], [[1.0, 0.0], [0.0, 0.0]]]")
    assert row["status"] == "parse_error" and "evaluated particle-time pair" in row["error"]


def test_a_world_without_gaps_still_needs_finite_predictions_everywhere(tmp_path):
    problems = world(tmp_path, "[[[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]]]")
    ok, bad = score(problems, "[[[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [1.0, 0.0]]]",
                    "[[[0.0, 0.0], [0.0, 0.0]], [[1.0, 0.0], [null, null]]]")
    assert ok["dp_error"] == 0.0
    assert bad["status"] == "parse_error" and "not finite" in bad["error"]


@pytest.mark.parametrize("heldout, reason", [
    ("[[[0.0, 0.0], [0.0, null]], [[1.0, 0.0], [1.0, 0.0]]]", "some coordinates"),
    ("[[[0.0, 0.0], [0.0, .inf]], [[1.0, 0.0], [1.0, 0.0]]]", "infinite"),
    ("[[[null, null], [null, null]], [[null, null], [null, null]]]", "no held-out position"),
    ("[[[0.0, 0.0]], [[1.0, 0.0]]]", "shape"),
])
def test_bad_held_out_data_is_a_load_error(tmp_path, heldout, reason):
    with pytest.raises(ProblemError, match=reason):
        world(tmp_path, heldout)


@pytest.mark.parametrize("key", ["trajectories", "positions", "predictions", "predicted", "trajectory"])
def test_predicted_positions_under_each_key(tmp_path, key):
    problems = world(tmp_path)
    [row] = score(problems, json.dumps({key: [[[1.0, 1.0], [1.0, 1.0]], [[2.0, 1.0], [0.0, 0.0]]]}))
    assert (row["status"], row["dp_error"], row["dp_submission"]) == ("ok", 1.0, "trajectories")


def test_an_object_that_is_neither_positions_nor_a_law_names_its_keys(tmp_path):
    [row] = score(world(tmp_path), '{"foo": 1, "bar": 2}')
    assert row["status"] == "parse_error" and "got the keys foo, bar" in row["error"]
