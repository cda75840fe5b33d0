"""fastscore.service.feedback and ``fastscore feedback``: the mdbench-proposal-v1 answer for one
submission on a public task."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
import pytest

from fastscore.service.feedback import METRIC_KEYS, feedback, train_metrics
from fastscore.service.protocol import EXTRAS, protocol_answer
from fastscore.service.public import TaskError, load_task, public_task, read_problem, read_train
from tests.support.public_tasks import HOSTILE, ROLE_OF, demo_data, implicit_data, problem_json, write_task

TRAIN_KEYS = ["n_samples", "finite_fraction", "numerically_equivalent", *METRIC_KEYS]


@pytest.fixture(scope="module")
def demo():
    return public_task(problem_json(ROLE_OF), demo_data())


def harness_metrics(pred: np.ndarray, y: np.ndarray) -> dict:
    """The harness's metric definitions, written out with NumPy for the comparison."""
    e = pred - y
    eps = np.finfo(float).eps
    return {
        "mae": np.mean(np.abs(e)), "mse": np.mean(e**2), "rmse": np.sqrt(np.mean(e**2)),
        "mape": np.mean(np.abs(e) / np.maximum(np.abs(y), eps)),
        "r2": 1 - np.mean(e**2) / np.var(y),
        "nrmse": np.sqrt(np.mean(e**2)) / max(np.sqrt(np.mean(y**2)), eps),
        "max_absolute_error": np.max(np.abs(e)),
    }


def test_explicit_mechanism_metrics_are_the_harness_definitions(demo):
    answer = feedback(demo, "c = 3.1  # a fitted coefficient\nh = c*x**2; y = h/z + 0.01")
    assert answer["ok"] is True
    assert answer["solution"] == {"c": "31/10", "h": "(31/10)*x**2", "y": "1/100 + (31/10)*x**2/z"}
    assert list(answer["train"]) == TRAIN_KEYS
    x, z, y = demo.data
    expected = harness_metrics(3.1 * x**2 / z + 0.01, y)
    for key in METRIC_KEYS:
        assert answer["train"][key] == pytest.approx(expected[key], rel=1e-12), key
    assert answer["train"]["n_samples"] == demo.n_samples
    assert answer["train"]["finite_fraction"] == 1.0
    assert answer["train"]["numerically_equivalent"] is False
    extras = answer[EXTRAS]
    assert extras["nodes"] == [2, 6, 8]
    assert extras["closed_form"] == ["c", "h", "y"] and extras["numeric"] == []


def test_solution_holds_canonical_closed_forms(demo):
    answer = feedback(demo, "k = 3\nh = k*x**2\ny*z = h")
    assert answer["ok"] is True
    assert answer["solution"] == {"k": "3", "h": "3*x**2", "y": "3*x**2/z"}
    assert answer["train"]["numerically_equivalent"] is True
    assert answer["train"]["mae"] == 0.0 and answer["train"]["r2"] == 1.0
    assert protocol_answer(answer) == {key: answer[key] for key in ("ok", "solution", "train")}


def test_tiny_relative_error_is_numerically_equivalent(demo):
    assert feedback(demo, "y = 3.000001*x**2/z")["train"]["numerically_equivalent"] is True  # |e| = 3.3e-7 |y|
    assert feedback(demo, "y = 3.00001*x**2/z")["train"]["numerically_equivalent"] is False


def test_coupled_block_with_closed_forms(demo):
    answer = feedback(demo, "u + v = 3*x**2\nu - v = 3*x**2\ny = u/z")  # u = 3x², v = 0
    assert answer["ok"] is True
    assert answer["solution"]["y"] == "3*x**2/z" and answer["solution"]["v"] == "0"
    assert answer["train"]["numerically_equivalent"] is True


@pytest.mark.slow
def test_implicit_target_is_solved_numerically():
    task = public_task(problem_json({"x": "input", "y": "target"}), implicit_data())
    answer = feedback(task, "y + exp(y) = x")
    assert answer["ok"] is True
    assert "y" not in answer["solution"]
    assert answer[EXTRAS]["numeric"] == ["y"]
    assert any("solved numerically" in w for w in answer[EXTRAS]["warnings"])
    assert answer["train"]["numerically_equivalent"] is True
    assert answer["train"]["max_absolute_error"] < 1e-9


@pytest.mark.parametrize("text, message", [
    ("y = x\ny = 2*x", "inconsistent"),
    ("y = a*x", "under-determined"),
    ("y = x\nx = 2", "inconsistent"),
    ("a = 1", "under-determined"),
])
def test_unsolvable_models_are_solve_errors(demo, text, message):
    answer = feedback(demo, text)
    assert answer["ok"] is False and answer["error_type"] == "SolveError"
    assert message in answer["error"] and "\n" not in answer["error"]
    assert set(answer) == {"ok", "error", "error_type", EXTRAS}


def test_non_finite_predictions_void_the_metrics(demo):
    answer = feedback(demo, "y = log(x - 1.5)")  # undefined for x < 1.5
    assert answer["ok"] is True
    train = answer["train"]
    assert 0 < train["finite_fraction"] < 1
    assert train["numerically_equivalent"] is False
    assert all(train[key] is None for key in METRIC_KEYS)
    assert any("not finite" in w for w in answer[EXTRAS]["warnings"])


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_submissions_are_clear_errors(demo, text):
    answer = feedback(demo, text)
    assert answer["ok"] is False
    assert answer["error_type"] in ("ParseError", "SolveError")
    assert answer["error"] and "\n" not in answer["error"] and len(answer["error"]) < 400


def test_parse_errors_name_the_equation(demo):
    answer = feedback(demo, "h = x\ny = h +* z")
    assert answer["error"].startswith("equation 2 ('y = h +* z'): ")


def test_train_metrics_constant_truth():
    y = np.full(5, 2.0)
    assert train_metrics(y.copy(), y)["r2"] == 1.0
    assert train_metrics(y + 1, y)["r2"] == 0.0


@pytest.mark.parametrize("problem, message", [
    ([], "data_layout"),
    ({"variables": [], "data_columns": []}, "data_layout"),
    (problem_json(ROLE_OF) | {"variables": "x"}, "must be a list"),
    (problem_json(ROLE_OF) | {"data_columns": ["x", "y", "z"]}, "data_columns"),
    (problem_json({"x": "input", "z": "internal", "y": "target"}), "public roles"),
    (problem_json({"x": "input", "z": "target", "y": "target"}), "exactly one target"),
    (problem_json({"x": "input", "z": "auxiliary", "y": "input"}), "exactly one target"),
    (problem_json({"x y": "input", "z": "auxiliary", "y": "target"}), "invalid name"),
])
def test_problem_not_in_the_public_layout(problem, message):
    with pytest.raises(TaskError, match=message):
        public_task(problem, demo_data())


def test_problem_with_private_fields_or_duplicate_names():
    problem = problem_json(ROLE_OF)
    problem["variables"][0]["sampling"] = {"min": 1, "max": 2}
    with pytest.raises(TaskError, match="exactly the fields"):
        public_task(problem, demo_data())
    problem = problem_json(ROLE_OF)
    problem["variables"][1]["name"] = "x"
    problem["data_columns"] = ["x", "x", "y"]
    with pytest.raises(TaskError, match="unique"):
        public_task(problem, demo_data())


@pytest.mark.parametrize("train, message", [
    (demo_data()[:2], "shape"),
    (demo_data()[0], "shape"),
    (np.zeros((3, 0)), "shape"),
    (demo_data().astype(complex), "complex"),
    (demo_data() > 1, "bool"),
    (np.where(np.eye(3, 400, dtype=bool), np.nan, demo_data()), "non-finite"),
    (np.where(np.eye(3, 400, dtype=bool), np.inf, demo_data()), "non-finite"),
    ([[1.0]], "list"),
])
def test_train_data_not_matching(train, message):
    with pytest.raises(TaskError, match=message):
        public_task(problem_json(ROLE_OF), train)


def test_integer_train_data_is_real():
    task = public_task(problem_json(ROLE_OF), np.arange(12).reshape(3, 4))
    assert task.data.dtype == np.float64


def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


@pytest.mark.parametrize("data, message", [
    (b"", "NPY"),
    (b"not an array", "magic"),
    (_npy(np.array([{"a": 1}], dtype=object)), "object"),
    (_npy(demo_data())[:-8], "data bytes"),
    (_npy(demo_data()).replace(b"(3, 400)", b"(3, 9999999999999)", 1), "data bytes"),
])
def test_unreadable_npy(data, message):
    with pytest.raises(TaskError, match=message):
        read_train(data)


def test_problem_bytes_not_json():
    with pytest.raises(TaskError, match="not JSON"):
        read_problem(b"{")
    with pytest.raises(TaskError, match="not JSON"):
        read_problem(b"\xff")
    with pytest.raises(TaskError, match="not JSON"):
        read_problem(b"[" * 100_000)


def test_load_task_reads_an_agent_folder(tmp_path):
    write_task(tmp_path / "T" / "agent", ROLE_OF, demo_data(), description="three over z")
    task = load_task(tmp_path / "T")
    assert task.columns == ("x", "z", "y") and task.target == "y" and task.sources == ("x", "z")
    assert task.description == "three over z"
    with pytest.raises(FileNotFoundError, match="train.npy"):
        (tmp_path / "T" / "agent" / "train.npy").unlink()
        load_task(tmp_path / "T" / "agent")


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "fastscore.cli", "feedback", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_cli_answers_as_the_function(tmp_path, demo):
    folder = write_task(tmp_path / "task", ROLE_OF, demo.data)
    (tmp_path / "good.txt").write_text("k = 3\nh = k*x**2\ny*z = h\n")
    (tmp_path / "bad.txt").write_bytes(b"y = \xff")
    run = _cli("--task", folder, "--submission", tmp_path / "good.txt", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == feedback(demo, "k = 3\nh = k*x**2\ny*z = h\n")
    run = _cli("--task", folder, "--submission", tmp_path / "bad.txt", cwd=tmp_path)
    assert run.returncode == 0 and run.stdout.startswith("not ok: ParseError: submission is not UTF-8")
    folder.joinpath("problem.json").write_text(json.dumps({"data_layout": "samples_by_variables"}))
    run = _cli("--task", folder, "--submission", tmp_path / "good.txt", cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.strip().splitlines() == ["fastscore feedback: error: problem is not a public problem.json: "
                                               "expected data_layout 'variables_by_samples'"]
