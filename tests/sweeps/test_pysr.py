"""PySR's output as a sweep: its operators in the grammar, its hall-of-fame files read
as rows (x0, x1, ... named by the task's data columns), its own choice of equation."""
from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest

from fastscore.run.job import score_sweep
from fastscore.sweeps.pysr import law_text, read_hall_of_fame
from fastscore.sweeps.read import SweepError, read_sweep

ORBIT = "circular-orbit-period"  # data columns T, r, M, m: x0 = r, x1 = M, x2 = m

# PySR's file (``Complexity,Loss,Equation``, equations quoted) for T = 2 pi sqrt(r^3/(G M))
HALL_OF_FAME = """Complexity,Loss,Equation
1,2.5e7,"x0"
3,4.0e5,"square(x0)"
5,3.9e5,"(cube(x0) * 1.0e-9)"
8,1.0e-10,"(6.283185307179586 * sqrt(cube(x0) / (x1 * 6.6743e-11)))"
10,0.9e-10,"((6.283185307179586 * sqrt(cube(x0) * inv(x1 * 6.6743e-11))) + (x2 * 0.0))"
"""


def test_pysrs_score_and_choice_follow_its_rule():
    rows = read_hall_of_fame("Complexity,Loss,Equation\n1,10,x0\n3,1,x1\n5,0.011,x2\n9,0.01,x3\n")
    assert [r["complexity"] for r in rows] == [1, 3, 5, 9]
    expected = [0.0, math.log(10) / 2, math.log(1 / 0.011) / 2, math.log(0.011 / 0.01) / 4]
    assert [r["score"] for r in rows] == pytest.approx(expected, rel=1e-12)
    assert [r["best"] for r in rows] == [False, False, True, False]  # loss <= 0.015: c5 and c9; c5 scores more


def test_the_highest_score_is_not_chosen_when_its_loss_is_too_high():
    rows = read_hall_of_fame("Complexity,Loss,Equation\n1,100,a\n2,1,b\n3,0.5,c\n")
    assert max(rows, key=lambda r: r["score"])["equation"] == "b"  # the steepest drop...
    assert [r["equation"] for r in rows if r["best"]] == ["c"]  # ...but only c has loss <= 1.5 * 0.5


def test_older_pipe_separated_files_with_mse_and_a_zero_loss():
    rows = read_hall_of_fame("Complexity|MSE|Equation\n3|0.5|x0\n1|2.0|x1\n5|0.0|x0 + x1\n")
    assert [r["complexity"] for r in rows] == [1, 3, 5]
    assert rows[2]["score"] == math.inf and rows[2]["best"]


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("Complexity,Equation\n1,x0\n", "expected columns Complexity, Loss and Equation"),
    ("Complexity,Loss,Equation\n", "no equations"),
    ("Complexity,Loss,Equation\none,1,x0\n", "line 2: complexity and loss must be numbers"),
    ("Complexity,Loss,Equation\n1,-1,x0\n", "line 2: a loss must be a number >= 0"),
])
def test_a_malformed_file_is_one_clear_error(text, message):
    with pytest.raises(ValueError, match=message):
        read_hall_of_fame(text)


def test_variables_are_named_by_column_order_and_only_whole_names_change():
    columns = ["T", "r", "M", "m"]
    assert law_text("x0 * x1 + x2^2", columns) == "T = r * M + m^2"
    assert law_text("x10 + x01 + x1x + 2.5e-3*x0", columns) == "T = x10 + x01 + x1x + 2.5e-3*r"


def _tree(tmp_path: Path, text: str = HALL_OF_FAME) -> Path:
    folder = tmp_path / "sweep" / "PySR" / "run1" / ORBIT
    folder.mkdir(parents=True)
    (folder / "hall_of_fame.csv").write_text(text)
    return tmp_path / "sweep"


def test_a_hall_of_fame_tree_reads_as_rows_with_the_best_flagged(tmp_path, example_problems):
    by_task = example_problems
    frame = pl.concat(read_sweep(_tree(tmp_path), problems=by_task))
    assert frame["config"].to_list() == ["PySR@c1", "PySR@c3", "PySR@c5", "PySR", "PySR@c8", "PySR@c10"]
    assert set(frame["run"]) == {1} and set(frame["task"]) == {ORBIT}
    best = frame.filter(pl.col("config") == "PySR").row(0, named=True)
    assert best["pysr_best"] and best["pysr_complexity"] == 8 and best["pysr_loss"] == 1.0e-10
    assert best["phenomenal"] == "T = (6.283185307179586 * sqrt(cube(r) / (M * 6.6743e-11)))"
    assert frame.filter(pl.col("pysr_best"))["config"].to_list() == ["PySR", "PySR@c8"]


def test_a_hall_of_fame_needs_the_problem_set(tmp_path):
    with pytest.raises(SweepError, match="need the problem set"):
        list(read_sweep(_tree(tmp_path)))


@pytest.mark.slow
def test_a_hall_of_fame_is_scored_and_pysrs_choice_is_its_configs_answer(tmp_path, example_dir):
    out = tmp_path / "out"
    score_sweep(example_dir, _tree(tmp_path), out, tasks=[ORBIT], executor="local", progress=False)
    scores = pl.read_parquet(out / "scores.parquet").filter(pl.col("task") == ORBIT)
    by_config = {row["config"]: row for row in scores.iter_rows(named=True)}
    assert by_config["PySR"]["p_equivalent"] and by_config["PySR@c8"]["p_equivalent"]
    assert by_config["PySR@c10"]["p_equivalent"]  # inv() and a 0 * m term: the same law
    assert not by_config["PySR@c3"]["p_equivalent"] and by_config["PySR@c3"]["status"] == "ok"
    assert by_config["PySR"]["pysr_complexity"] == 8


def test_an_unreadable_hall_of_fame_is_a_parse_error_row(tmp_path, example_dir):
    out = tmp_path / "out"
    score_sweep(example_dir, _tree(tmp_path, "Complexity,Loss\n1,2\n"), out, tasks=[ORBIT], executor="local",
                progress=False)
    row = pl.read_parquet(out / "scores.parquet").filter(pl.col("config") == "PySR").row(0, named=True)
    assert row["status"] == "parse_error" and "expected columns Complexity, Loss and Equation" in row["error"]
