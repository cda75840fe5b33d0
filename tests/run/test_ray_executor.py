"""The Ray executor gives the in-process executor's tables and loses no row when a
worker dies mid-run."""
from __future__ import annotations

import os
import signal
import sys
import time

import polars as pl
import pytest

ray = pytest.importorskip("ray")

from fastscore.run.executors.local import LocalExecutor  # noqa: E402
from fastscore.run.executors.ray import RayExecutor  # noqa: E402
from fastscore.run.job import _Tally, _units, score_sweep  # noqa: E402
from fastscore.settings import DEFAULT_SETTINGS, Settings  # noqa: E402

pytestmark = pytest.mark.slow

TIMINGS = ["parse_solve_seconds"]


@pytest.fixture(scope="module", autouse=True)
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def test_ray_and_local_executors_write_identical_tables(tmp_path, example_dir, example_sweep):
    score_sweep(example_dir, example_sweep, tmp_path / "local", executor="local", progress=False)
    score_sweep(example_dir, example_sweep, tmp_path / "ray", executor="ray", workers=2, progress=False)
    for table in ("scores", "probes", "summary", "strata"):
        local = pl.read_parquet(tmp_path / "local" / f"{table}.parquet")
        remote = pl.read_parquet(tmp_path / "ray" / f"{table}.parquet")
        if table == "scores":
            local, remote = local.drop(TIMINGS), remote.drop(TIMINGS)
        assert remote.equals(local), table


def _verdicts(results) -> dict:
    return {(r["config"], r["run"], r["task"]): (r["status"], r["p_verdict"], r["m_correct"])
            for scores, _ in results for r in scores}


def test_killing_a_worker_mid_run_loses_no_row(example_sweep, example_problems):
    problems = example_problems
    units = list(_units(example_sweep, problems, _Tally(), {}))
    local = LocalExecutor(problems, DEFAULT_SETTINGS)
    try:
        expected = _verdicts(local.map(units))
    finally:
        local.close()
    executor = RayExecutor(problems, Settings(batch_rows=1), workers=2)
    try:
        results = executor.map(units)
        first = [next(results)]
        os.kill(executor.worker_pids()[0], signal.SIGKILL)
        rest = list(results)
    finally:
        executor.close()
    rows = [r for scores, _ in first + rest for r in scores]
    assert len(rows) == len(expected)  # every row exactly once
    assert _verdicts(first + rest) == expected  # retried rows scored as if nothing happened


class _Slow(str):
    """A phenomenal text that takes ``seconds`` to read in ``score_task`` (read twice
    there), or kills its worker (``seconds`` < 0)."""

    def __new__(cls, text: str, seconds: float):
        value = super().__new__(cls, text)
        value.seconds = seconds
        return value

    def __reduce__(self):
        return _Slow, (str.__str__(self), self.seconds)

    def __str__(self):
        if self.seconds < 0:
            os._exit(1)
        time.sleep(self.seconds)
        return str.__str__(self)


def test_limits_count_a_rows_own_work_and_only_the_running_row_is_charged_with_a_death(example_problems):
    """A killer row, then two slow correct rows (7 s and 5 s of their own, limit 10 s, so
    that a replacement actor's start on a busy machine is not mistaken for the killer's
    own time):
    retried one at a time, each waits behind another; before, the wait counted (one of
    them became ``timeout``) and a row queued behind the killer was charged with the
    death."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    problems = example_problems
    law = "v = k3*E_T*S/((k2 + k3)/k1 + S)"
    rows = [{"config": "c", "run": run, "task": "michaelis-menten-rate", "phenomenal": _Slow(law, seconds),
             "submission_sha": f"sha{run}"} for run, seconds in enumerate([-1, 3.5, 2.5])]
    executor = RayExecutor(problems, Settings(row_timeout=10.0, batch_rows=3), workers=1)
    try:
        scores = {r["run"]: r for batch, _ in executor.map([("michaelis-menten-rate", rows)]) for r in batch}
    finally:
        executor.close()
    assert (scores[0]["status"], scores[0]["error"]) == ("eval_error", "the worker died while scoring this submission")
    assert [scores[run]["status"] for run in (1, 2)] == ["ok", "ok"]
    assert scores[0]["submission_sha"] is None and [scores[run]["submission_sha"] for run in (1, 2)] == ["sha1", "sha2"]


def _plant_bomb(worker, calls: str) -> None:
    """In a worker actor: the mechanism ``v = bomb`` takes forever to solve, holding the
    interpreter (a regular expression that backtracks without end), and says so in ``calls``."""
    import re

    import fastscore.scoring.candidates as candidates_module
    original = candidates_module.build_candidate

    def build(reference, submission, **kwargs):
        if submission.mechanism == "v = bomb":
            with open(calls, "a") as f:
                f.write("x")
            re.match(r"(a+)+$", "a" * 80 + "b")
        return original(reference, submission, **kwargs)
    candidates_module.build_candidate = build


def test_a_bomb_in_a_batch_costs_its_own_row(tmp_path, example_problems):
    """One mechanism whose solve never ends (and never lets its worker's interpreter run
    another thread), among laws and mechanisms: it becomes a timeout row, solved once
    (not again alone), and the rest of its batch is scored as one batch, with the local
    executor's values (a batch of 150 rows: its time limit, 9 s, is far from 3 s)."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    task = "michaelis-menten-rate"
    mechanism = "r_on = k1*E_free*S\nr_off = k2*C\nr_cat = k3*C\nr_on = r_off + r_cat\nE_T = E_free + C\nv = r_cat"
    texts = [("phenomenal", "v = k3*E_T*S/((k2 + k3)/k1 + S)"), ("mechanism", mechanism),
             ("phenomenal", "v = E_T*S"), ("mechanism", "v = k3*E_T*S/(k2/k1 + S)")]
    rows = [{"config": "c", "run": run, "task": task, "submission_sha": f"sha{run}",
             **dict([("mechanism", "v = bomb") if run == 3 else texts[run % 4]])} for run in range(150)]
    settings = Settings(row_timeout=3.0)
    local = LocalExecutor(example_problems, settings)
    try:
        expected = {r["run"]: r for scores, _ in local.map([(task, rows[:3] + rows[4:])]) for r in scores}
    finally:
        local.close()
    calls = tmp_path / "calls"
    executor = RayExecutor(example_problems, settings, workers=1)
    try:
        list(executor.map([(task, rows[:1])]))  # the actor's first batch builds the reference
        ray.get([watch.__ray_ready__.remote() for watch in executor._watches])  # a busy machine starts them late
        ray.get(executor._actors[0].__ray_call__.remote(_plant_bomb, str(calls)))
        results = list(executor.map([(task, rows)]))
    finally:
        executor.close()
    scores = {row["run"]: row for batch, _ in results for row in batch}
    assert sorted(scores) == list(range(150))
    assert (scores[3]["status"], scores[3]["error"], scores[3]["submission_sha"]) == \
        ("timeout", "scoring took longer than 3 s", None)
    def untimed(row):
        return {key: value for key, value in row.items() if key not in TIMINGS}
    assert {run: untimed(row) for run, row in scores.items() if run != 3} == \
        {run: untimed(row) for run, row in expected.items()}  # the same rows, every one scored
    assert {row["status"] for run, row in scores.items() if run != 3} == {"ok"}
    assert calls.read_text() == "x"  # stopped once, not retried alone (the new actor has no bomb)
    assert len(results) == 2  # the bomb's row, then the rest of the batch in one result
