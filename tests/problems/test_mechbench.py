"""MechBench's task files and task folders as problems (``fastscore.problems.mechbench``)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from fastscore.cli import main
from fastscore.problems.formats import load_problem, load_problems
from fastscore.problems.mechbench import data_columns, parse_task_name, write_task_folder
from fastscore.problems.model import ProblemError
from fastscore.scoring.reference import build_reference
from fastscore.settings import Settings
from tests.support.external import MECHBENCH
from tests.support.mechbench_tasks import SMALL, orbit_task, write_task


def test_a_task_file_becomes_a_problem(tmp_path):
    problem = load_problems(write_task(tmp_path, orbit_task()).parent.parent)[0]
    assert (problem.task_id, problem.family, problem.mutations, problem.domain, problem.format) == (
        "Toy Orbit - Variant 1-3", "Toy Orbit", (1, 3), "physics", "mechbench")
    assert [v.name for v in problem.inputs] == ["M", "r"] and [v.name for v in problem.auxiliary_inputs] == ["k"]
    assert [v.name for v in problem.intermediates] == ["g", "w"]
    # fixed coefficients are private constants, not names a submission knows
    assert [(c.name, c.formula) for c in problem.coefficients] == [("G", "6.674e-11"), ("two", "2")]
    assert problem.constants == () and set(problem.known_names) == {"M", "r", "k"}
    assert [e.text for e in problem.mechanism] == ["g = G*M/r**2", "w**2*r = g", "T = two*pi/w + 0*k"]
    assert data_columns(problem) == ["T", "M", "k", "r"]  # declaration order, as the harness writes data


def test_probe_answers_and_the_law_expand_through_the_reference_mechanism(tmp_path):
    problem = load_problem(write_task(tmp_path, orbit_task()), root=tmp_path)
    reference = build_reference(problem, settings=SMALL)
    points = {name: reference.domain.points[i] for i, name in enumerate(reference.domain.names)}
    expected_w = np.sqrt(6.674e-11 * points["M"] / points["r"] ** 3)
    np.testing.assert_allclose(reference.probes["w"].values, expected_w, rtol=1e-12)
    np.testing.assert_allclose(reference.probes["g"].values, 6.674e-11 * points["M"] / points["r"] ** 2, rtol=1e-12)
    np.testing.assert_allclose(reference.law.values, 2 * np.pi / expected_w, rtol=1e-12)
    assert {s.name for s in reference.law.expr.free_symbols} == {"M", "r"}  # coefficients substituted


def test_family_and_mutations_come_from_the_task_name():
    assert parse_task_name("Hall Response - Original") == ("Hall Response", ())
    assert parse_task_name("Hall Response - Variant 1-2-5") == ("Hall Response", (1, 2, 5))
    assert parse_task_name("A - B - Variant 3") == ("A - B", (3,))
    assert parse_task_name("Odd Name") == (None, None)
    assert parse_task_name("Odd - Something") == ("Odd", None)


def test_domain_is_the_top_folder(tmp_path):
    task = orbit_task()
    assert load_problem(write_task(tmp_path / "a", task, "biology/Toy Orbit"), root=tmp_path / "a").domain == "biology"
    assert load_problem(write_task(tmp_path / "b", task, None), root=tmp_path / "b").domain is None


def test_a_directory_may_mix_both_formats(tmp_path, example_dir):
    write_task(tmp_path, orbit_task())
    (tmp_path / "mm.yaml").write_text((example_dir / "michaelis-menten-rate.yaml").read_text())
    problems = load_problems(tmp_path)
    assert [(p.task_id, p.format) for p in problems] == [("Toy Orbit - Variant 1-3", "mechbench"), ("mm", "mdbench")]


def _mutated(change) -> dict:
    task = orbit_task()
    change(task)
    return task


@pytest.mark.parametrize(("change", "field", "message"), [
    (lambda t: t.pop("mutation"), "", "missing required field 'mutation'"),
    (lambda t: t.update(extra=1), "", "unknown field(s) extra"),
    (lambda t: t["variables"][1].update(role="observed"), "variables[1].role", "unknown role 'observed'"),
    (lambda t: t["variables"][1]["sampling"].update(ood_boundary=1e26), "variables[1].sampling",
     "expected min < ood_boundary < max"),
    (lambda t: t["variables"][1].pop("sampling"), "variables[1]", "missing required field 'sampling'"),
    (lambda t: t["variables"][4].update(sampling=t["variables"][1]["sampling"]), "variables[4].sampling",
     "a internal variable has no sampling"),
    (lambda t: t["mechanism_model"][2].update(note="x"), "mechanism_model[2]", "unknown field(s) note"),
    (lambda t: t["mechanism_probes"].append({"probe": "r", "description": "d", "answer": "r"}),
     "mechanism_probes[2].probe", "is an observed variable"),
    (lambda t: t["variables"].append(dict(t["variables"][4])), "variables[6].name", "already used"),
    (lambda t: t["variables"][0].update(role="input", sampling=t["variables"][1]["sampling"]), "variables",
     "exactly one target"),
    (lambda t: t.update(task_name="a/b - Original"), "task_name", "usable as a folder name"),
])
def test_bad_task_files_name_the_file_and_the_field(tmp_path, capsys, change, field, message):
    path = write_task(tmp_path, _mutated(change), None)
    with pytest.raises(ProblemError) as error:
        load_problems(tmp_path)
    text = str(error.value)
    assert text.startswith(f"{path}: {field}: " if field else f"{path}: ") and message in text
    assert main(["validate", "--problems", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("fastscore validate: error: ") and message in err[0]


def test_a_key_given_twice_is_an_error(tmp_path):
    text = yaml.safe_dump(orbit_task(), sort_keys=False) + "mutation: again\n"
    (tmp_path / "t.yaml").write_text(text)
    with pytest.raises(ProblemError, match="key 'mutation' is given twice"):
        load_problems(tmp_path)


def test_a_duplicate_task_name_names_both_files(tmp_path):
    first = write_task(tmp_path, orbit_task(), "physics")
    second = write_task(tmp_path, orbit_task(), "astronomy")
    with pytest.raises(ProblemError) as error:
        load_problems(tmp_path)
    assert str(first) in str(error.value) and str(second) in str(error.value)


def test_task_folders_round_trip_and_their_splits_are_used_as_given(tmp_path):
    tasks = tmp_path / "tasks"
    problem = load_problem(write_task(tmp_path / "src", orbit_task()), root=tmp_path / "src")
    splits = build_reference(problem, settings=SMALL).splits
    write_task_folder(problem, splits, tasks / problem.task_id, save_answer=True)
    public = json.loads((tasks / problem.task_id / "agent" / "problem.json").read_text())
    assert public == {"task_description": "Orbital period of a satellite.",
                      "variables": [{"name": "T", "description": "period", "unit": "s", "role": "target"},
                                    {"name": "M", "description": "mass", "unit": "kg", "role": "input"},
                                    {"name": "k", "description": "an auxiliary", "unit": "1", "role": "auxiliary"},
                                    {"name": "r", "description": "radius", "unit": "m", "role": "input"}],
                      "data_columns": ["T", "M", "k", "r"], "data_layout": "variables_by_samples"}
    train = np.load(tasks / problem.task_id / "agent" / "train.npy")
    assert train.shape == (4, 64)
    answer = json.loads((tasks / problem.task_id / "answer" / "answer.json").read_text())
    assert set(answer) == {"task", "data_columns", "data_layout", "data", "generation"}
    assert answer["data"] == {"train": "train.npy", "id_test": "id_test.npy", "ood_test": "ood_test.npy"}
    assert answer["task"]["variables"][1]["sampling"]["min"] == 1e23  # a number, not YAML 1.1 text
    # the private tree loads as problems with these very arrays (never regenerated)
    loaded, = load_problems(tasks)
    assert loaded.task_id == problem.task_id and loaded.splits is not None
    ood = np.load(tasks / problem.task_id / "answer" / "ood_test.npy")
    reference = build_reference(loaded, settings=Settings(n_points=64, data_seed=999))
    np.testing.assert_array_equal(reference.splits.ood_test, ood)
    np.testing.assert_array_equal(reference.target_values("ood_test"), ood[0])
    # public only: the answer files go away without --save-answer
    write_task_folder(problem, splits, tasks / problem.task_id)
    assert not (tasks / problem.task_id / "answer" / "answer.json").exists()


def _answer_tree(tmp_path) -> Path:
    problem = load_problem(write_task(tmp_path / "src", orbit_task()), root=tmp_path / "src")
    write_task_folder(problem, build_reference(problem, settings=SMALL).splits, tmp_path / "t" / problem.task_id,
                      save_answer=True)
    return tmp_path / "t" / problem.task_id / "answer"


@pytest.mark.parametrize(("change", "message"), [
    (lambda a, d: a.update(data_columns=["T", "M", "r", "k"]), "data_columns: expected ['T', 'M', 'k', 'r']"),
    (lambda a, d: a.update(data_layout="samples_by_variables"), "data_layout"),
    (lambda a, d: a["data"].update(train="../../../etc/passwd"), "data.train"),
    (lambda a, d: np.save(d / "id_test.npy", np.full((4, 3), np.nan)), "data.id_test: expected a finite real array"),
    (lambda a, d: np.save(d / "id_test.npy", np.ones((3, 3))), "data.id_test: expected a finite real array"),
])
def test_bad_task_folders_are_clear_errors(tmp_path, change, message):
    folder = _answer_tree(tmp_path)
    answer = json.loads((folder / "answer.json").read_text())
    change(answer, folder)
    (folder / "answer.json").write_text(json.dumps(answer))
    with pytest.raises(ProblemError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_problems(tmp_path / "t")


def test_cli_prepare_writes_mechbench_folders(tmp_path, capsys, example_dir):
    write_task(tmp_path / "src", orbit_task())
    assert main(["prepare", "--problems", str(tmp_path / "src"), "--out", str(tmp_path / "out"),
                 "--layout", "mechbench", "--save-answer"]) == 0
    assert (tmp_path / "out" / "Toy Orbit - Variant 1-3" / "answer" / "answer.json").is_file()
    assert main(["prepare", "--problems", str(example_dir), "--out", str(tmp_path / "x"), "--layout", "mechbench"]) == 2
    assert "only MechBench task files" in capsys.readouterr().err


@pytest.mark.slow
def test_every_shared_task_loads_and_validates(capsys):
    problems = load_problems(MECHBENCH)
    assert len(problems) == 23 and all(p.format == "mechbench" for p in problems)
    assert {p.domain for p in problems} == {"astronomy", "biology", "chemistry", "geoscience", "material", "physics"}
    assert main(["validate", "--problems", str(MECHBENCH)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("23 of 23 problems valid")
