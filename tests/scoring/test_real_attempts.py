"""Real agents' attempts (``tests/data/real``): each is scored within the ordinary
budgets and gets the verdicts MechBench's harness gave it.

The corpus keeps what real agents write and planted studies do not: fitted decimal
exponents (``h = 1.4043639781269934``), dozens of fitted decimal constants, a
79-equation mechanism, empty probe replies, replies that are prose.  The harness's
verdicts come from its own records (``make_corpus.py`` there rebuilds the file).
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from fastscore.run.job import score_sweep

CORPUS = Path(__file__).resolve().parents[1] / "data" / "real"
ATTEMPTS = [json.loads(line) for line in (CORPUS / "attempts.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    out = tmp_path_factory.mktemp("real") / "out"
    score_sweep(CORPUS / "tasks", CORPUS / "attempts.jsonl", out, executor="local", progress=False)
    scores = pl.read_parquet(out / "scores.parquet").filter(pl.col("status") != "missing")
    probes = pl.read_parquet(out / "probes.parquet")
    return {(r["config"], r["task"]): r for r in scores.iter_rows(named=True)}, probes


AS_RUN = [a for a in ATTEMPTS if a["task_file_as_run"]]
"""The attempts whose task file here is the one they ran against (the same sha256 as
their record names): the others ran against an earlier version of the task."""


@pytest.mark.slow
def test_every_attempt_is_scored_within_the_ordinary_budgets(scored):
    scores, _ = scored
    assert len(scores) == len(ATTEMPTS) and len(AS_RUN) >= 35
    statuses = {key: (row["status"], row["error"]) for key, row in scores.items()}
    as_run = {(a["config"], a["task"]) for a in AS_RUN}
    assert all(status == "ok" for key, (status, _) in statuses.items() if key in as_run), statuses
    # against another version of the task an attempt may name what this one lacks: a
    # solve error, never a timeout or a crash
    assert {status for status, _ in statuses.values()} <= {"ok", "solve_error"}


@pytest.mark.parametrize("attempt", AS_RUN, ids=lambda a: f"{a['config'][-22:]}/{a['task']}")
def test_the_law_verdict_is_the_harness_s(scored, attempt):
    row = scored[0][(attempt["config"], attempt["task"])]
    harness = all(attempt["harness_law_numeric_id_ood"])
    assert row["p_equivalent"] is harness, (row["p_verdict"], row["p_reason"])
    if attempt["harness_law_symbolic"]:  # what the harness proves exactly, fastscore proves
        assert row["p_verdict"] == "proven"
    if not harness:
        assert row["p_verdict"] == "different" and row["p_counterexample"] is not None


def test_each_probe_verdict_is_the_harness_s(scored):
    _, probes = scored
    judged = expected = 0
    for attempt in AS_RUN:
        harness = json.loads(attempt["harness_probes_numeric_id_ood"] or "{}")
        expected += len(harness)
        mine = probes.filter((pl.col("config") == attempt["config"]) & (pl.col("task") == attempt["task"]))
        for row in mine.iter_rows(named=True):
            if row["probe"] in harness:
                assert row["probe_equivalent"] is harness[row["probe"]], (attempt["task"], row)
                judged += 1
    assert judged == expected >= 50


def test_an_empty_reply_fails_its_probe_alone(scored):
    _, probes = scored
    empty = [(a["config"], a["task"], name) for a in ATTEMPTS
             for name, reply in json.loads(a["probe_replies"]).items() if not reply.strip()]
    assert empty
    for config, task, name in empty:
        rows = probes.filter((pl.col("config") == config) & (pl.col("task") == task))
        for row in rows.iter_rows(named=True):
            if row["probe"] == name:
                assert row["probe_verdict"] == "undecided" and "no equation" in row["probe_reason"]
            else:  # the other probes are judged on their own replies
                assert f"'{name} =" not in (row["probe_reason"] or "")


def test_the_longest_real_mechanism_is_read_whole(scored):
    scores, _ = scored
    longest = max(ATTEMPTS, key=lambda a: len([line for line in a["mechanism"].splitlines() if line.strip()]))
    assert len([line for line in longest["mechanism"].splitlines() if line.strip()]) > 64  # the old limit
    row = scores[(longest["config"], longest["task"])]
    assert row["status"] == "ok" and row["p_verdict"] == "different"
