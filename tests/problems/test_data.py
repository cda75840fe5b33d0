"""Data splits: determinism, ranges, redraws, and MDBench's npz / prepared layouts."""
import hashlib
import json

import numpy as np
import pytest

from fastscore.problems.model import Constant, Equation, Probe, Problem, Sampling, Variable
from fastscore.problems.splits import (
    Splits,
    make_splits,
    problem_rng,
    read_npz,
    read_prepared,
    sample_inputs,
    write_npz,
    write_prepared,
)
from fastscore.settings import DEFAULT_SETTINGS


def toy(task_id="toy/variant-1", aux=True):
    return Problem(
        task_id=task_id, name="Toy", description="A toy mechanism.",
        target=Variable("y", "target", "m"),
        inputs=(Variable("x", "linear input", "m", Sampling(-2.0, 6.0, 2.0, "uniform")),
                Variable("k", "scale input", "1", Sampling(1e-3, 1e3, 1.0, "log_uniform"))),
        auxiliary_inputs=(Variable("z", "aux", "s", Sampling(1.0, 3.0, 2.0, "uniform")),) if aux else (),
        intermediates=(Variable("h", "secret internal", "m"),),
        constants=(Constant("a", 1.5, "a constant", "1"),),
        law="y = a * x * k", mechanism=(Equation("h = a * x", "first"), Equation("y = h * k", "second")),
        family="toy", domain="physics", mutations=(1,), probes=(Probe("h", "the internal"),))


def law(points):
    return 1.5 * points["x"] * points["k"]


def test_defaults_match_mdbench():
    assert (DEFAULT_SETTINGS.data_seed, DEFAULT_SETTINGS.n_samples) == (20260725, 1000)


def test_layout_target_first_and_values_follow_the_law():
    splits = make_splits(toy(), law, n=200)
    assert splits.variables == ("y", "x", "k", "z")
    for split in ("train", "id_test", "ood_test"):
        array = getattr(splits, split)
        assert array.shape == (4, 200) and array.dtype == np.float64
        columns = splits.columns(split)
        np.testing.assert_array_equal(columns["y"], 1.5 * columns["x"] * columns["k"])
    assert splits.seed == DEFAULT_SETTINGS.data_seed
    assert not np.array_equal(splits.train, splits.id_test)


def test_same_problem_and_seed_give_identical_arrays_and_seeds_differ():
    first = make_splits(toy(), law, n=100, seed=7)
    again = make_splits(toy(), law, n=100, seed=7)
    other = make_splits(toy(), law, n=100, seed=8)
    for split in ("train", "id_test", "ood_test"):
        np.testing.assert_array_equal(getattr(first, split), getattr(again, split))
        assert not np.array_equal(getattr(first, split), getattr(other, split))


def test_processing_order_does_not_change_arrays():
    problems = [toy("a"), toy("b"), toy("c")]
    forward = {p.task_id: make_splits(p, law, n=50, seed=3) for p in problems}
    problem_rng("unrelated", 3).uniform(size=1000)  # other draws in between must not matter
    backward = {p.task_id: make_splits(p, law, n=50, seed=3) for p in reversed(problems)}
    for task_id in forward:
        np.testing.assert_array_equal(forward[task_id].train, backward[task_id].train)
        np.testing.assert_array_equal(forward[task_id].ood_test, backward[task_id].ood_test)
    # as MDBench: the arrays are a function of the seed and the problem, not of its task id
    np.testing.assert_array_equal(forward["a"].train, forward["b"].train)


def test_splits_are_mdbench_s_draws():
    # MDBench 0.7's sampler, step by step: one default_rng(seed); 10,000 pilot draws over
    # the domain, then per split batches of max(1024, 2 * missing) points, each variable's
    # batch in declaration order, the first valid ones kept
    rng = np.random.default_rng(5)

    def draw(region, n):
        x = rng.uniform(*{"id": (-2.0, 2.0), "ood": (2.0, 6.0), "domain": (-2.0, 6.0)}[region], n)
        k = np.exp(rng.uniform(*np.log({"id": (1e-3, 1.0), "ood": (1.0, 1e3), "domain": (1e-3, 1e3)}[region]), n))
        z = rng.uniform(*{"id": (1.0, 2.0), "ood": (2.0, 3.0), "domain": (1.0, 3.0)}[region], n)
        return x, k, z

    draw("domain", 10_000)
    expected = {}
    for split, region in (("train", "id"), ("id_test", "id"), ("ood_test", "ood")):
        x, k, z = draw(region, 1024)
        expected[split] = np.vstack([1.5 * x * k, x, k, z])[:, :300]
    splits = make_splits(toy(), law, n=300, seed=5)
    for split, array in expected.items():
        np.testing.assert_array_equal(getattr(splits, split), array)


def test_rejection_keeps_the_first_valid_draws_of_each_batch():
    # valid only for x >= 1.2 (a fifth of the ID range): the first batch of 1024 falls
    # short of 300; the second (again 1024, as 2 * missing < 1024) tops the split up
    def fake(points):
        return np.where(points["x"] >= 1.2, points["x"], np.nan)

    splits = make_splits(toy(), fake, n=300, seed=9)
    rng = np.random.default_rng(9)
    rng.uniform(size=3 * 10_000)  # the pilot's draws of x, k and z
    x = rng.uniform(-2.0, 2.0, 1024)
    kept = x[x >= 1.2]
    assert 0 < kept.size < 300  # this batch alone is not enough
    rng.uniform(size=2 * 1024)  # its k and z
    x2 = rng.uniform(-2.0, 2.0, 1024)
    expected = np.concatenate([kept, x2[x2 >= 1.2][:300 - kept.size]])
    np.testing.assert_array_equal(splits.train[1], expected)
    np.testing.assert_array_equal(splits.train[0], expected)


def test_problem_rng_is_a_stable_function_of_seed_and_task_id():
    # derived from blake2b of the task id, never from Python's per-process salted hash()
    digest = int.from_bytes(hashlib.blake2b(b"toy/variant-1", digest_size=8).digest(), "little")
    expected = np.random.default_rng([20260725, digest, 0]).random(3)
    np.testing.assert_array_equal(problem_rng("toy/variant-1", 20260725).random(3), expected)
    np.testing.assert_array_equal(problem_rng(toy(), 20260725).random(3), expected)
    assert not np.array_equal(expected, problem_rng("toy/variant-2", 20260725).random(3))


def test_streams_are_independent():
    first = problem_rng("t", 1, 1).random(4)
    assert not np.array_equal(first, problem_rng("t", 1, 1, 0).random(4))
    assert not np.array_equal(first, problem_rng("t", 1).random(4))
    np.testing.assert_array_equal(first, problem_rng("t", 1, 1).random(4))


def test_split_regions_respected():
    splits = make_splits(toy(), law, n=2000, seed=1)
    for split, (lo, hi) in {"train": ("min", "ood_boundary"), "id_test": ("min", "ood_boundary"),
                            "ood_test": ("ood_boundary", "max")}.items():
        columns = splits.columns(split)
        for variable in toy().observed:
            low, high = getattr(variable.sampling, lo), getattr(variable.sampling, hi)
            values = columns[variable.name]
            assert values.min() >= low and values.max() < high, (split, variable.name)


@pytest.mark.parametrize("region, low, high", [("id", 1e-3, 1.0), ("ood", 1.0, 1e3), ("domain", 1e-3, 1e3)])
def test_log_uniform_draws_are_uniform_in_log(region, low, high):
    values = sample_inputs(toy(), region=region, n=20000, rng=np.random.default_rng(0))["k"]
    assert values.min() >= low and values.max() < high
    logs = np.log10(values)
    # uniform in log10 over [a, b): mean (a+b)/2, and each of 3 equal bins holds about a third
    a, b = np.log10(low), np.log10(high)
    assert abs(logs.mean() - (a + b) / 2) < 0.03 * (b - a)
    counts, _ = np.histogram(logs, bins=3, range=(a, b))
    assert np.all(np.abs(counts / values.size - 1 / 3) < 0.02)


def test_uniform_draws_are_uniform():
    values = sample_inputs(toy(), region="domain", n=20000, rng=np.random.default_rng(1))["x"]
    assert values.min() >= -2.0 and values.max() < 6.0
    assert abs(values.mean() - 2.0) < 0.08  # mean of U[-2, 6) is 2, sd of the mean ~0.016
    counts, _ = np.histogram(values, bins=4, range=(-2.0, 6.0))
    assert np.all(np.abs(counts / values.size - 0.25) < 0.02)


def test_sample_inputs_only_observed_and_rejects_unknown_region():
    points = sample_inputs(toy(), region="id", n=3, rng=np.random.default_rng(0))
    assert list(points) == ["x", "k", "z"]
    with pytest.raises(ValueError, match="unknown region 'test'"):
        sample_inputs(toy(), region="test", n=3, rng=np.random.default_rng(0))


def test_invalid_samples_are_redrawn():
    # sqrt(x) is NaN for x < 0: a quarter of the ID region [-2, 2) for train/id_test
    calls = []

    def fake(points):
        calls.append(len(points["x"]))
        with np.errstate(invalid="ignore"):
            return np.sqrt(points["x"]) * points["k"]

    splits = make_splits(toy(), fake, n=500, seed=5)
    for split in ("train", "id_test", "ood_test"):
        columns = splits.columns(split)
        assert np.all(np.isfinite(columns["y"]))
        assert np.all(columns["x"] >= 0)
        np.testing.assert_array_equal(columns["y"], np.sqrt(columns["x"]) * columns["k"])
    assert len(calls) > 3  # the ID splits needed redraws
    again = make_splits(toy(), fake, n=500, seed=5)
    np.testing.assert_array_equal(splits.train, again.train)


def test_complex_and_infinite_targets_count_as_invalid():
    def fake(points):
        x = points["x"].astype(complex)
        y = np.sqrt(x)  # complex for x < 0
        return np.where(points["z"] < 1.2, np.inf, y)

    splits = make_splits(toy(), fake, n=300, seed=2)
    columns = splits.columns("train")
    assert np.all(columns["x"] >= 0) and np.all(columns["z"] >= 1.2)
    np.testing.assert_allclose(columns["y"], np.sqrt(columns["x"]))


def test_scalar_target_broadcasts():
    splits = make_splits(toy(), lambda points: 3.0, n=10)
    np.testing.assert_array_equal(splits.train[0], np.full(10, 3.0))


def test_never_valid_raises_naming_the_task():
    def never(points):
        return np.where(points["x"] < 100, np.nan, 1.0)

    with pytest.raises(ValueError, match=r"toy/variant-1: only 0 of 10000 draws over the whole domain"):
        make_splits(toy(), never, n=20, max_rounds=3)

    def ood_only(points):  # the pilot finds valid draws, the ID region none
        return np.where(points["x"] >= 2.0, 1.0, np.nan)

    with pytest.raises(ValueError, match=r"toy/variant-1: only 0 of 20 samples in the 'id' region .* 3 rounds"):
        make_splits(toy(), ood_only, n=20, max_rounds=3)


def test_npz_round_trip(tmp_path):
    splits = make_splits(toy(), law, n=40, seed=11)
    path = tmp_path / "sub" / "toy.npz"
    write_npz(splits, path, generation_config={"fastscore": "0.1.0", "seed": 999})
    back = read_npz(path)
    assert back.variables == splits.variables and back.seed == 11
    for split in ("train", "id_test", "ood_test"):
        np.testing.assert_array_equal(getattr(back, split), getattr(splits, split))
    with np.load(path, allow_pickle=False) as archive:
        assert sorted(archive.files) == ["generation_config", "id_test", "ood_test", "train", "variables"]
        config = json.loads(str(archive["generation_config"].item()))
    assert config == {"fastscore": "0.1.0", "seed": 11, "train_samples": 40,
                      "id_test_samples": 40, "ood_test_samples": 40}


def test_read_mdbench_style_npz(tmp_path):
    # the arrays MDBench's synthetic_data writes with np.savez_compressed
    train = np.arange(6.0).reshape(2, 3)
    path = tmp_path / "Toy.npz"
    np.savez_compressed(path, train=train, id_test=train + 1, ood_test=train + 2,
                        variables=np.asarray(["y", "x"]),
                        generation_config=np.asarray(json.dumps({"seed": 20260725, "train_samples": 3})))
    splits = read_npz(path)
    assert splits.variables == ("y", "x") and splits.seed == 20260725
    np.testing.assert_array_equal(splits.columns("ood_test")["x"], [5.0, 6.0, 7.0])
    np.savez_compressed(path, train=train, variables=np.asarray(["y", "x"]))
    with pytest.raises(ValueError, match="missing array"):
        read_npz(path)


def test_prepared_round_trip_without_answers(tmp_path):
    problem = toy()
    splits = make_splits(problem, law, n=30)
    folder = tmp_path / "toy"
    write_prepared(problem, splits, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["data_train.npy", "problem.json"]
    public, train = read_prepared(folder)
    np.testing.assert_array_equal(train, splits.train)
    assert public["target_variable"] == "y"
    assert [v["name"] for v in public["variables"]] == ["y", "x", "k"]
    assert [v["name"] for v in public["auxiliary_input_variables"]] == ["z"]
    # units as MDBench writes them: base units to exponents
    assert public["variables"][1] == {"name": "x", "description": "linear input", "unit": {"m": 1}}
    assert public["constants"] == [{"name": "a", "value": 1.5, "description": "a constant", "unit": {}}]
    text = (folder / "problem.json").read_text(encoding="utf-8")
    assert set(public) == {"task_id", "problem_name", "problem_description", "task", "input",
                           "expected_output", "target_variable", "variables", "auxiliary_input_variables",
                           "constants"}
    for secret in ("h = a * x", "y = a * x * k", "secret internal", "the internal", '"h"'):
        assert secret not in text, secret
    # MDBench's reader maps rows to variables + auxiliary_input_variables in this order
    names = [v["name"] for v in public["variables"]] + [v["name"] for v in public["auxiliary_input_variables"]]
    assert names == list(problem.data_variables)


def test_prepared_with_answers_and_stale_answers_removed(tmp_path):
    problem = toy()
    splits = make_splits(problem, law, n=30)
    folder = tmp_path / "toy"
    write_prepared(problem, splits, folder, save_answer=True)
    answer = json.loads((folder / "answer.json").read_text(encoding="utf-8"))
    assert answer["phenomenological_formula"] == "y = a * x * k"
    assert [m["formula"] for m in answer["mechanisms"]] == ["h = a * x", "y = h * k"]
    assert answer["probes"] == [{"name": "h", "description": "the internal", "formula": None}]
    np.testing.assert_array_equal(np.load(folder / "data_ood_test.npy"), splits.ood_test)
    write_prepared(problem, splits, folder)
    assert sorted(p.name for p in folder.iterdir()) == ["data_train.npy", "problem.json"]


def test_prepared_rejects_mismatched_splits(tmp_path):
    splits = make_splits(toy(aux=False), law, n=5)
    with pytest.raises(ValueError, match="splits have variables"):
        write_prepared(toy(), splits, tmp_path / "x")


def test_read_prepared_missing_files(tmp_path):
    (tmp_path / "problem.json").write_text("{}")
    with pytest.raises(ValueError, match="lacks data_train.npy"):
        read_prepared(tmp_path)


def test_splits_shape_checked():
    with pytest.raises(ValueError, match=r"expected \(2, n_samples\)"):
        Splits(("y", "x"), np.zeros((3, 4)), np.zeros((2, 4)), np.zeros((2, 4)), seed=None)
