"""A sweep over the MechBench Core set scores end to end (``--tasks core-set.txt``)."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from fastscore.cli import main
from fastscore.problems.formats import load_problems, read_task_list

LIBRARY = Path(__file__).resolve().parents[2] / "problems" / "mechbench"
CORE = LIBRARY / "core-set.txt"


@pytest.mark.slow
def test_core_set_sweep_scores_end_to_end(tmp_path):
    problems = {p.task_id: p for p in load_problems(LIBRARY)}
    core = read_task_list(CORE)
    assert len(core) == 80
    sweep = tmp_path / "core.jsonl"
    with sweep.open("w") as f:
        for task in core:
            problem = problems[task]
            probes = {q.name: q.formula.split("=", 1)[1] for q in problem.probes}
            f.write(json.dumps({"config": "law", "run": 0, "task": task, "phenomenal": problem.law,
                                "probes": probes}) + "\n")
            # the reference mechanism, equations reversed: its law is derived by elimination
            mechanism = "\n".join(e.text for e in reversed(problem.mechanism))
            f.write(json.dumps({"config": "mechanism", "run": 0, "task": task, "mechanism": mechanism}) + "\n")
    out = tmp_path / "out"
    assert main(["score", "--problems", str(LIBRARY), "--tasks", str(CORE), "--sweep", str(sweep),
                 "--out", str(out), "--executor", "local", "--no-progress"]) == 0
    scores = pl.read_parquet(out / "scores.parquet")
    assert scores.height == 160 and set(scores["task"]) == set(core)
    assert scores["p_equivalent"].all() and scores["id_acc"].all() and scores["ood_acc"].all()
    laws = scores.filter(pl.col("config") == "law")
    assert laws["m_correct"].all()
    mechanisms = scores.filter(pl.col("config") == "mechanism")
    assert (mechanisms["n_probes_in_mechanism"] == mechanisms["n_probes"]).all()
    strata = pl.read_parquet(out / "strata.parquet")
    assert sorted(strata.filter(pl.col("stratum") == "n_mutations")["value"].unique()) == list("012345")


@pytest.mark.slow
def test_unknown_task_in_the_list_is_unusable_input(tmp_path, capsys):
    listing = tmp_path / "tasks.txt"
    listing.write_text("circular-orbit/original\nno-such/task\n")
    code = main(["score", "--problems", str(LIBRARY), "--tasks", str(listing),
                 "--sweep", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")])
    assert code == 2 and "not in the problem set" in capsys.readouterr().err
