"""The local executor's supervised child: a row that overruns, kills the child or
raises becomes its own row (timeout / eval_error, no submission_sha, retried on
resume); every other row comes out as when scored alone."""
from __future__ import annotations

import json
import os
import time

import polars as pl
import pytest

import fastscore.run.executors.local as local
from fastscore.problems.formats import load_problems
from fastscore.run.executors.local import LocalExecutor
from fastscore.run.job import score_sweep
from fastscore.settings import DEFAULT_SETTINGS, Settings

TASK = "michaelis-menten-rate"
LAW = "v = k3*E_T*S/((k2 + k3)/k1 + S)"
VERDICT = ("status", "error", "p_verdict", "p_reason", "derived_formula", "submission_sha")


class Hostile(str):
    """A phenomenal text whose reading (``str()`` in ``score_task``) stalls, kills the
    process, raises or exhausts memory: a stand-in for a row SymEngine cannot finish."""

    def __new__(cls, action: str):
        return super().__new__(cls, LAW)

    def __init__(self, action: str):
        self.action = action

    def __reduce__(self):
        return Hostile, (self.action,)

    def __str__(self):
        if self.action == "stall":
            time.sleep(3600)
        elif self.action == "die":
            os._exit(1)
        elif self.action == "raise":
            raise RecursionError("maximum recursion depth exceeded")
        elif self.action == "memory":
            bytearray(6 << 30)  # more than the 4 GiB the test allows the child
        return LAW


def _row(run: int, phenomenal) -> dict:
    return {"config": "c", "run": run, "task": TASK, "phenomenal": phenomenal, "submission_sha": f"sha{run}"}


def _fields(scores: list[dict]) -> dict:
    return {row["run"]: tuple(row.get(k) for k in VERDICT) for row in scores}


@pytest.fixture(scope="module")
def problems(example_dir):
    return {p.task_id: p for p in load_problems(example_dir)}


@pytest.mark.slow
def test_hostile_rows_are_their_own_rows_and_neighbours_are_unaffected(problems):
    rows = [_row(0, LAW), _row(1, Hostile("stall")), _row(2, "v = k3*E_T"), _row(3, Hostile("die")),
            _row(4, Hostile("raise")), _row(5, Hostile("memory")), _row(6, LAW + " + 0")]
    executor = LocalExecutor(problems, Settings(row_timeout=2.0), memory_limit=4 << 30)
    try:
        results = list(executor.map([(TASK, rows), (TASK, [_row(7, LAW)])]))
    finally:
        executor.close()
    scores = _fields([r for batch, _ in results for r in batch])
    assert sorted(scores) == list(range(8))  # every row exactly once
    assert scores[1][:2] == ("timeout", "scoring took longer than 2 s")
    assert scores[3][:2] == ("eval_error", "the worker died while scoring this submission")
    assert scores[4][:2] == ("eval_error", "scoring raised RecursionError: maximum recursion depth exceeded")
    assert scores[5][:2] == ("eval_error", "scoring raised MemoryError")
    assert all(scores[run][-1] is None for run in (1, 3, 4, 5))  # scored again on resume
    alone = LocalExecutor(problems, DEFAULT_SETTINGS)
    try:
        expected = _fields(next(alone.map([(TASK, [rows[0], rows[2], rows[6]])]))[0])
    finally:
        alone.close()
    assert {run: scores[run] for run in expected} == expected
    assert scores[7] == scores[0][:-1] + ("sha7",)


@pytest.mark.slow
def test_a_batch_waiting_behind_a_slow_one_is_not_charged_for_the_wait(problems, monkeypatch):
    """The clock of a batch starts when the child starts it: three batches of 1.2 s
    each, limit 2 x 1 s each, all come out scored."""
    original = local.score_task

    def slow(reference, rows, **kwargs):
        time.sleep(1.2)
        return original(reference, rows, **kwargs)
    monkeypatch.setattr(local, "score_task", slow)
    executor = LocalExecutor(problems, Settings(row_timeout=1.0))
    try:
        results = list(executor.map([(TASK, [_row(run, LAW)]) for run in range(3)]))
    finally:
        executor.close()
    assert [row["status"] for batch, _ in results for row in batch] == ["ok"] * 3


def test_ctrl_c_leaves_the_child_alone_and_close_stops_it(problems):
    executor = LocalExecutor(problems, DEFAULT_SETTINGS)
    results = executor.map([(TASK, [_row(0, LAW)]), (TASK, [_row(1, LAW)])])
    next(results)
    pid = executor.worker_pid()
    os.kill(pid, 2)  # SIGINT, as Ctrl-C sends to the whole process group
    assert [row["status"] for row in next(results)[0]] == ["ok"]
    executor.close()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.slow
def test_a_resumed_run_scores_the_rows_the_executor_failed_again(tmp_path, monkeypatch, example_dir):
    sweep = tmp_path / "sweep.jsonl"
    rows = [{"config": "c", "run": run, "task": TASK, "phenomenal": text}
            for run, text in enumerate([LAW, "v = k3*E_T*S/(k1 + S)", LAW + " + 0"])]
    sweep.write_text("".join(json.dumps(row) + "\n" for row in rows))
    original = local.score_task

    def stall_on_run_1(reference, batch, **kwargs):
        if any(row["run"] == 1 for row in batch):
            time.sleep(3600)
        return original(reference, batch, **kwargs)
    monkeypatch.setattr(local, "score_task", stall_on_run_1)
    out = tmp_path / "out"
    score_sweep(example_dir, sweep, out, executor="local", progress=False, settings=Settings(row_timeout=1.0))
    first = pl.read_parquet(out / "scores.parquet").filter(pl.col("task") == TASK).sort("run")
    assert first["status"].to_list() == ["ok", "timeout", "ok"]
    monkeypatch.setattr(local, "score_task", original)
    score_sweep(example_dir, sweep, out, executor="local", progress=False)
    meta = json.loads((out / "meta.json").read_text())
    assert (meta["counts"]["scored_cells"], meta["counts"]["resumed_cells"]) == (1, 2)
    second = pl.read_parquet(out / "scores.parquet").filter(pl.col("task") == TASK).sort("run")
    assert second["status"].to_list() == ["ok", "ok", "ok"] and second["submission_sha"].is_not_null().all()
