"""MDBench 0.7 both ways: its synthetic arrays, its prepared folders and answers read by
fastscore; fastscore's prepared folders read by MDBench's own ``evaluate``.

The read side runs on MDBench's outputs checked in under ``tests/data/mdbench-outputs``
(how they were made: its README).  The tests marked ``mdbench_cli`` run the real
``mdbench==0.7.0`` CLI; it needs Python 3.12, so the session fixture installs it once
into a cache (``$FASTSCORE_TEST_CACHE``, default ``~/.cache/fastscore-tests``) when a
Python 3.12 is found (pyenv, or on the PATH), and skips with the reason otherwise.
``$FASTSCORE_MDBENCH_CLI`` names an installed ``mdbench`` executable to use instead.
"""
from __future__ import annotations

import fcntl
import glob
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from fastscore.export import write_splits, write_task_views
from fastscore.problems.formats import load_problem, load_problems
from fastscore.problems.model import ProblemError
from fastscore.problems.prepared import answer_law, unit_mapping, unit_text
from fastscore.problems.splits import read_npz
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
from fastscore.scoring.written import written_values
from fastscore.settings import Settings

pytestmark = pytest.mark.slow

DATA = Path(__file__).resolve().parents[1] / "data"
PROBLEM_DIR = DATA / "mdbench-problems"
OUTPUTS = DATA / "mdbench-outputs"
NAMES = {  # problem file -> MDBench's output name (its safe_name of problem_name)
    "enzyme-reaction-rate-original": "Enzyme_Reaction_Rate_-_Original",
    "inclined-block-displacement-original": "Inclined_Block_Displacement_-_Original",
    "spring-oscillator-period-original": "Spring_Oscillator_Period_-_Original",
}
SPLITS = ("train", "id_test", "ood_test")
MDBENCH_VERSION = "0.7.0"
INSTALL_TIMEOUT = 1200  # seconds: a cold pip install of mdbench and its dependencies
RUN_TIMEOUT = 600


def problems(*stems):
    """The named problem files of tests/data/mdbench-problems (the folder may hold more)."""
    return [load_problem(PROBLEM_DIR / f"{stem}.yaml", root=PROBLEM_DIR) for stem in stems or NAMES]


def mechanism_text(problem) -> str:
    return "\n".join(e.text for e in problem.mechanism)


def score_rows(problem, rows):
    reference = build_reference(problem)
    rows = [{"config": "c", "run": i, "task": problem.task_id, **row} for i, row in enumerate(rows)]
    scores, _ = score_task(reference, rows)
    return scores


# --- fastscore data == mdbench synthetic --------------------------------------------------

def test_data_seed_gives_mdbench_synthetic_arrays_bit_for_bit(tmp_path):
    settings = Settings(data_seed=7, n_samples=40)
    assert write_splits(problems(), tmp_path, settings=settings) == 3
    for stem, name in NAMES.items():
        ours, theirs = read_npz(tmp_path / f"{stem}.npz"), read_npz(OUTPUTS / "synthetic" / f"{name}.npz")
        assert ours.variables == theirs.variables and ours.seed == theirs.seed == 7
        for split in SPLITS:
            np.testing.assert_array_equal(getattr(ours, split), getattr(theirs, split), err_msg=f"{stem} {split}")
    # a near miss: another seed gives other arrays
    write_splits(problems("spring-oscillator-period-original"), tmp_path / "s8",
                 settings=Settings(data_seed=8, n_samples=40))
    other = read_npz(tmp_path / "s8" / "spring-oscillator-period-original.npz")
    theirs = read_npz(OUTPUTS / "synthetic" / "Spring_Oscillator_Period_-_Original.npz")
    assert not np.array_equal(other.train, theirs.train)


def test_enzyme_target_is_mdbench_s_written_order_not_the_canonical_one():
    # the canonical (SymEngine) evaluation of this law differs from MDBench's in the last bit
    theirs = read_npz(OUTPUTS / "synthetic" / "Enzyme_Reaction_Rate_-_Original.npz")
    k3, e_t, s, k1, k2 = theirs.train[1:]
    written = k3 * e_t * s / ((k2 + k3) / k1 + s)
    np.testing.assert_array_equal(theirs.train[0], written)
    reordered = k3 * (e_t * s) / (s + (k2 + k3) / k1)
    assert not np.array_equal(written, reordered)


# --- written order ------------------------------------------------------------------------

def test_written_values_follow_python_order():
    rng = np.random.default_rng(3)
    a, b, c = rng.uniform(0.1, 10, (3, 2000))
    values = {"a": a, "b": b, "c": c, "π": 3.141592653589793}
    np.testing.assert_array_equal(written_values("y = a*b*c", values), (a * b) * c)
    assert not np.array_equal(written_values("a*b*c", values), a * (b * c))
    np.testing.assert_array_equal(written_values("a/b/c", values), (a / b) / c)
    np.testing.assert_array_equal(written_values("-a**2", values), -(a ** 2))
    np.testing.assert_array_equal(written_values("a^2 + b**3", values), a ** 2 + b ** 3)
    np.testing.assert_array_equal(written_values("a**0.5", values), np.sqrt(a))
    np.testing.assert_array_equal(written_values("a**-1", values), 1 / a)
    np.testing.assert_array_equal(written_values("2*3*a", values), 6 * a)  # literals folded first
    np.testing.assert_array_equal(written_values("2*π*sqrt(a/b)", values), (2 * values["π"]) * np.sqrt(a / b))
    np.testing.assert_array_equal(written_values("exp(-a)*log(b)", values), np.exp(-a) * np.log(b))
    np.testing.assert_array_equal(written_values("2**a", values), 2 ** a)
    assert written_values("a*z", values) is None  # a name it is not given
    assert written_values("erf(a)", values) is None  # a function it does not evaluate
    assert written_values("a*(b", values) is None


# --- MDBench's prepared folders read by fastscore -----------------------------------------

def test_mdbench_prepared_folders_read_as_problems_with_their_data():
    loaded = {p.task_id: p for p in load_problems(OUTPUTS / "prepared")}
    assert sorted(loaded) == sorted(NAMES.values())
    for stem, name in NAMES.items():
        problem, original = loaded[name], problems(stem)[0]
        assert problem.format == "mdbench-prepared"
        assert problem.law.replace("**", "^").replace(" ", "") == original.law.replace("**", "^").replace(" ", "")
        assert [e.text for e in problem.mechanism] == [e.text for e in original.mechanism]
        assert problem.data_variables == original.data_variables
        assert [v.name for v in problem.auxiliary_inputs] == [v.name for v in original.auxiliary_inputs]
        assert [(c.name, c.value) for c in problem.constants] == [(c.name, c.value) for c in original.constants]
        assert [v.name for v in problem.intermediates] == [v.name for v in original.intermediates]
        assert problem.target.unit == original.target.unit or unit_mapping(problem.target.unit) == \
            unit_mapping(original.target.unit)
        theirs = read_npz(OUTPUTS / "synthetic" / f"{name}.npz")
        for split in SPLITS:
            np.testing.assert_array_equal(getattr(problem.splits, split), getattr(theirs, split))
        for variable in problem.observed:  # ranges inferred from the data cover it
            row = problem.splits.columns("ood_test")[variable.name]
            assert variable.sampling.min <= row.min() and row.max() <= variable.sampling.max


def test_mdbench_prepared_answers_score():
    for problem in load_problems(OUTPUTS / "prepared"):
        rhs = problem.law.split("=", 1)[1]
        scores = score_rows(problem, [{"phenomenal": problem.law}, {"phenomenal": f"({rhs})*(1 + 1e-3)"},
                                      {"mechanism": mechanism_text(problem)}])
        assert [s["status"] for s in scores] == ["ok"] * 3, problem.task_id
        assert scores[0]["p_verdict"] == "proven" and scores[2]["p_verdict"] == "proven"
        assert scores[1]["p_verdict"] == "different"
        assert scores[0]["id_acc"] and scores[0]["ood_acc"]


def test_hidden_auxiliary_inputs_are_refused_with_the_reason():
    with pytest.raises(ProblemError, match=r"lacks the auxiliary input\(s\) m .*--reveal-auxiliary"):
        load_problems(OUTPUTS / "prepared-hidden")


def _copy_prepared(tmp_path, name="Spring_Oscillator_Period_-_Original"):
    folder = tmp_path / "set" / name
    shutil.copytree(OUTPUTS / "prepared" / name, folder)
    return folder


@pytest.mark.parametrize("damage, message", [
    (lambda f: np.save(f / "data_id_test.npy", np.full((3, 4), np.nan)), r"data_id_test.npy: expected a finite real"),
    (lambda f: np.save(f / "data_ood_test.npy", np.zeros((2, 4))), r"expected a finite real array of shape \(3, n\)"),
    (lambda f: (f / "data_ood_test.npy").unlink(), r"data_ood_test.npy is missing .*--save-answer"),
    (lambda f: _edit(f, data_variables=["m", "T", "k"]), r"expected the target 'T' first"),
    (lambda f: _edit(f, phenomenological_formula=None), r"missing required field 'phenomenological_formula'"),
    (lambda f: _edit(f, mutations=[-1]), r"mutations\[0\]: expected a non-negative integer"),
    (lambda f: (f / "answer.json").write_text("{not json"), r"answer.json: invalid JSON"),
])
def test_damaged_prepared_folders_fail_naming_file_and_field(tmp_path, damage, message):
    damage(_copy_prepared(tmp_path))
    with pytest.raises(ProblemError, match=message):
        load_problems(tmp_path / "set")


def _edit(folder, **changes):
    answer = json.loads((folder / "answer.json").read_text(encoding="utf-8"))
    (folder / "answer.json").write_text(json.dumps(answer | changes), encoding="utf-8")


def test_units_as_mdbench_writes_them():
    assert unit_mapping("kg m s^-2") == {"kg": 1, "m": 1, "s": -2}
    assert unit_mapping("1 (dimensionless)") == {} and unit_mapping("") == {}
    assert unit_mapping("m / s^2") == {"m": 1, "s": -2}
    assert unit_mapping("m^2 m^-2 K") == {"K": 1}
    assert unit_mapping("N·m") == "N·m"  # another notation stays text
    assert unit_text({"kg": 1, "m": 2, "s": -3}) == "kg m^2 s^-3" and unit_text({}) == "1"
    assert unit_mapping(unit_text({"kg": 1, "m": -1, "s": -2})) == {"kg": 1, "m": -1, "s": -2}


# --- fastscore's prepared folders: MDBench's fields, read back by fastscore ------------------

def test_fastscore_prepare_writes_mdbench_s_fields_and_arrays(tmp_path):
    settings = Settings(data_seed=7, n_samples=40)
    assert write_task_views(problems(), tmp_path, save_answer=True, settings=settings) == 3
    for stem, name in NAMES.items():
        ours, theirs = tmp_path / stem, OUTPUTS / "prepared" / name
        for file in ("problem.json", "answer.json"):
            mine, reference = (json.loads((folder / file).read_text(encoding="utf-8")) for folder in (ours, theirs))
            assert set(reference) <= set(mine), (stem, file, set(reference) - set(mine))
            for key in reference:
                if key != "problem_name":
                    assert mine[key] == reference[key], (stem, file, key)
        for file in ("data_train.npy", "data_id_test.npy", "data_ood_test.npy"):
            np.testing.assert_array_equal(np.load(ours / file), np.load(theirs / file), err_msg=f"{stem} {file}")


def test_fastscore_prepared_answers_read_back(tmp_path):
    originals = problems()
    write_task_views(originals, tmp_path, save_answer=True, settings=Settings(n_samples=50))
    loaded = {p.task_id: p for p in load_problems(tmp_path)}
    assert sorted(loaded) == sorted(NAMES)
    for original in originals:
        problem = loaded[original.task_id]
        assert problem.law == answer_law(original.law)  # '^' written '**', as MDBench writes it
        assert (problem.mechanism, problem.probes) == (original.mechanism, original.probes)
        assert (problem.family, problem.mutations) == (original.family, original.mutations)
        expected = build_reference(original, settings=Settings(n_samples=50)).splits
        assert problem.splits.seed == expected.seed
        for split in SPLITS:
            np.testing.assert_array_equal(getattr(problem.splits, split), getattr(expected, split))
    # without answers the folder is public only: no problem to read
    write_task_views(originals, tmp_path / "public", settings=Settings(n_samples=5))
    with pytest.raises(ProblemError, match="no problem files"):
        load_problems(tmp_path / "public")


# --- the real MDBench CLI -------------------------------------------------------------------

def _python312() -> str | None:
    candidates = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python")), reverse=True)
    candidates += [p for p in (shutil.which("python3.12"),) if p]
    return candidates[0] if candidates else None


@pytest.fixture(scope="session")
def mdbench_cli() -> Path:
    """The ``mdbench`` executable of mdbench==0.7.0, installed once into a cache (under
    a file lock, so concurrent sessions install it once)."""
    if given := os.environ.get("FASTSCORE_MDBENCH_CLI"):
        return Path(given)
    cache = Path(os.environ.get("FASTSCORE_TEST_CACHE") or Path.home() / ".cache" / "fastscore-tests")
    venv = cache / f"mdbench-{MDBENCH_VERSION}-py312"
    cli, done = venv / "bin" / "mdbench", venv / ".installed"
    if done.is_file() and cli.is_file():
        return cli
    python = _python312()
    if python is None:
        pytest.skip("MDBench 0.7 needs Python 3.12: none found (pyenv ~/.pyenv/versions/3.12*, or python3.12 "
                    "on the PATH); set FASTSCORE_MDBENCH_CLI to an installed mdbench")
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"{venv.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (done.is_file() and cli.is_file()):
            _install(python, venv)
            done.write_text(MDBENCH_VERSION + "\n")
    return cli


def _install(python: str, venv: Path) -> None:
    shutil.rmtree(venv, ignore_errors=True)
    try:
        subprocess.run([python, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
        subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-compile",
                        "--disable-pip-version-check", f"mdbench=={MDBENCH_VERSION}"],
                       check=True, capture_output=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.skip(f"installing mdbench=={MDBENCH_VERSION} took more than {INSTALL_TIMEOUT} s")
    except subprocess.CalledProcessError as error:
        pytest.skip(f"could not install mdbench=={MDBENCH_VERSION} with {python}: "
                    f"{error.stderr.decode(errors='replace').strip().splitlines()[-1:]}")


def run_mdbench(cli: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    # no credentials reach it: its optional LLM judgments report themselves unavailable
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return subprocess.run([str(cli), *args], cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env)


def _accuracies(output: str) -> list[str]:
    match = re.search(r"Acc \(rtol=1e-6, atol=1e-9\): ([^\n]*)", output)
    assert match, output[-2000:]
    return [part.strip() for part in match.group(1).split("|")]


def test_mdbench_evaluate_reads_fastscore_prepare(mdbench_cli, tmp_path):
    problem = problems("spring-oscillator-period-original")[0]
    write_task_views([problem], tmp_path, save_answer=True, settings=Settings(n_samples=200))
    answer = tmp_path / problem.task_id / "answer.json"
    right = run_mdbench(mdbench_cli, "evaluate", "--evaluation-mode", "final", "--answer", str(answer),
                        "--submission", "; ".join(e.text for e in problem.mechanism), cwd=tmp_path)
    output = right.stdout + right.stderr
    assert right.returncode == 0 and "MDBench · Result evaluation" in output, output[-2000:]
    assert _accuracies(output) == ["100.00%"] * 3  # train | ID test | OOD test
    assert re.search(r"Ground-truth structure recovery\S*: 100\.00%", output), output[-2000:]
    # a near miss: a wrong constant factor is measured as wrong on every split
    wrong = run_mdbench(mdbench_cli, "evaluate", "--evaluation-mode", "final", "--answer", str(answer),
                        "--submission", "omega = sqrt(k / m); T = 2.02 * π / omega", cwd=tmp_path)
    assert wrong.returncode == 0 and _accuracies(wrong.stdout + wrong.stderr) == ["0.00%"] * 3


def test_mdbench_cli_outputs_read_by_fastscore(mdbench_cli, tmp_path):
    stem, name = "inclined-block-displacement-original", NAMES["inclined-block-displacement-original"]
    source = PROBLEM_DIR / f"{stem}.yaml"
    made = run_mdbench(mdbench_cli, "synthetic", "--problems", str(source), "--output-dir", "synthetic",
                       "--seed", "11", "--train-samples", "30", "--id-test-samples", "30",
                       "--ood-test-samples", "30", cwd=tmp_path)
    assert made.returncode == 0, made.stderr[-2000:]
    prepared = run_mdbench(mdbench_cli, "prepare", "--problems", str(source), "--synthetic-data-dir", "synthetic",
                           "--output-dir", "prepared", "--task", "mechanism_discovery", "--reveal-auxiliary",
                           "--save-answer", "--force", cwd=tmp_path)
    assert prepared.returncode == 0, prepared.stderr[-2000:]
    write_splits(problems(stem), tmp_path / "ours", settings=Settings(data_seed=11, n_samples=30))
    ours, theirs = read_npz(tmp_path / "ours" / f"{stem}.npz"), read_npz(tmp_path / "synthetic" / f"{name}.npz")
    for split in SPLITS:
        np.testing.assert_array_equal(getattr(ours, split), getattr(theirs, split))
    (problem,) = load_problems(tmp_path / "prepared")
    np.testing.assert_array_equal(problem.splits.ood_test, theirs.ood_test)
    scores = score_rows(problem, [{"mechanism": mechanism_text(problem)}])
    assert scores[0]["status"] == "ok" and scores[0]["p_verdict"] == "proven"
