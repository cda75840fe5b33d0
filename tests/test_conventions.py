"""The command line's small conventions: several --problems paths, a single task file,
no silent overwrite by prepare, errors naming flags, a clear missing-file error, help
with an example per command; and the Python API on in-memory sweeps."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from fastscore.cli import _parser, main
from fastscore.cli_examples import EXAMPLES
from fastscore.problems.formats import digest_problems, load_problems
from fastscore.run.job import score_sweep

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems" / "example"
SWEEP = ROOT / "problems" / "example-sweep.jsonl"
ORBIT = PROBLEMS / "circular-orbit-period.yaml"


def _split_example(tmp_path: Path) -> tuple[Path, Path]:
    """The example's problems in two places: one file alone, the rest in a folder."""
    folder = tmp_path / "rest"
    shutil.copytree(PROBLEMS, folder)
    (folder / ORBIT.name).unlink()
    single = tmp_path / ORBIT.name
    shutil.copy(ORBIT, single)
    return single, folder


def test_several_problem_paths_are_one_problem_set(tmp_path):
    single, folder = _split_example(tmp_path)
    together = load_problems([single, folder])
    assert [p.task_id for p in together] == [p.task_id for p in load_problems(PROBLEMS)]
    assert [p.task_id for p in load_problems(single)] == ["circular-orbit-period"]
    assert digest_problems([single, folder]) != digest_problems(folder)
    assert digest_problems(PROBLEMS) == digest_problems(str(PROBLEMS))  # a resumed run sees the same digest


@pytest.mark.slow
def test_score_takes_several_problem_paths(tmp_path, capsys):
    single, folder = _split_example(tmp_path)
    out = tmp_path / "out"
    assert main(["score", "--problems", str(single), str(folder), "--sweep", str(SWEEP), "--out", str(out),
                 "--executor", "local", "--no-progress"]) == 0
    scores = pl.read_parquet(out / "scores.parquet")
    assert scores["task"].n_unique() == 4
    assert json.loads((out / "meta.json").read_text())["inputs"]["problems"] == f"{single}, {folder}"


def test_validate_takes_a_single_task_file(capsys):
    assert main(["validate", "--problems", str(ORBIT)]) == 0
    assert "1 of 1 problems valid" in capsys.readouterr().out


def test_a_missing_problem_path_is_named(tmp_path, capsys):
    assert main(["validate", "--problems", str(tmp_path / "nope.yaml")]) == 2
    assert capsys.readouterr().err.strip() == (f"fastscore validate: error: {tmp_path / 'nope.yaml'}: "
                                               "problem file or directory not found")


def test_prepare_keeps_a_non_empty_output_unless_forced(tmp_path, capsys):
    out = tmp_path / "public"
    out.mkdir()
    assert main(["prepare", "--problems", str(ORBIT), "--out", str(out)]) == 0  # empty: fine
    capsys.readouterr()
    assert main(["prepare", "--problems", str(ORBIT), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--out {out} is not empty" in err and "--force" in err
    assert main(["prepare", "--problems", str(ORBIT), "--out", str(out), "--force"]) == 0


def test_a_setting_out_of_range_is_one_line_naming_its_flag(tmp_path, capsys):
    assert main(["data", "--problems", str(ORBIT), "--out", str(tmp_path / "splits"), "--n-samples", "0"]) == 2
    assert capsys.readouterr().err == ("fastscore data: error: --n-samples must be an integer in "
                                       "[1, 10000000], got 0\n")


def test_a_setting_that_is_no_number_is_refused_by_its_flag(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["data", "--problems", str(ORBIT), "--out", str(tmp_path / "splits"), "--n-samples", "ten"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "argument --n-samples" in err and "must be an integer, got 'ten'" in err
    assert "n_samples" not in err


def test_a_missing_tasks_file_is_one_clear_line(tmp_path, capsys):
    missing = tmp_path / "core.txt"
    assert main(["score", "--problems", str(PROBLEMS), "--sweep", str(SWEEP), "--out", str(tmp_path / "out"),
                 "--tasks", str(missing), "--no-progress"]) == 2
    assert capsys.readouterr().err == f"fastscore score: error: --tasks {missing}: file not found\n"


def test_a_missing_file_is_not_a_bare_errno(tmp_path, capsys):
    assert main(["feedback", "--task", str(tmp_path), "--submission", str(tmp_path / "none.txt")]) == 2
    err = capsys.readouterr().err
    assert "Errno" not in err and err.count("\n") == 1


def test_every_commands_help_has_an_example_and_cites_no_spec():
    parser = _parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert set(commands) == set(EXAMPLES)
    for name, command in commands.items():
        text = command.format_help()
        assert "SPEC" not in text and "§" not in text
        assert f"example:\n  {EXAMPLES[name]}" in text
        assert EXAMPLES[name].startswith(f"fastscore {name} ")
    assert "SPEC" not in parser.format_help()


def test_the_example_commands_parse():
    parser = _parser()
    for example in EXAMPLES.values():
        words = example.split("#")[0].split()[1:]
        assert parser.parse_args(words).command == words[0]


def _without_timing(frame: pl.DataFrame) -> pl.DataFrame:
    """A table without its timings and row digests (a digest hashes the row as its
    format gives it: a number read from JSON and from Parquet may differ in type)."""
    return frame.drop("parse_solve_seconds", "submission_sha", strict=False)


@pytest.mark.slow
def test_the_api_scores_rows_in_memory_as_it_scores_the_file(tmp_path):
    on_disk = tmp_path / "out"
    score_sweep(PROBLEMS, SWEEP, on_disk, executor="local", progress=False)
    rows = [json.loads(line) for line in SWEEP.read_text().splitlines()]
    for sweep in (rows, pl.read_ndjson(SWEEP)):  # dict rows (probes a dict, some keys absent), a Polars frame
        tables = score_sweep(PROBLEMS, sweep, executor="local", progress=False)
        assert set(tables) == {"scores", "probes", "summary", "strata", "meta"}
        assert tables["meta"]["inputs"]["sweep"] == "<in memory>"
        for name in ("scores", "probes", "summary", "strata"):
            expected = _without_timing(pl.read_parquet(on_disk / f"{name}.parquet"))
            assert _without_timing(tables[name]).equals(expected), name


def test_the_api_rejects_a_sweep_of_the_wrong_kind():
    with pytest.raises(TypeError, match="dict rows"):
        score_sweep(PROBLEMS, ["not a row"], progress=False)
    with pytest.raises(TypeError, match="a path, a DataFrame or a list of dict rows"):
        score_sweep(PROBLEMS, 42, progress=False)
