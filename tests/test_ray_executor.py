"""The Ray executor gives the in-process executor's tables and loses no row when a
worker dies mid-run."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import polars as pl
import pytest

ray = pytest.importorskip("ray")

from fastscore.executors.local import LocalExecutor  # noqa: E402
from fastscore.executors.ray import RayExecutor  # noqa: E402
from fastscore.problems import load_problems  # noqa: E402
from fastscore.run import _Tally, _units, score_sweep  # noqa: E402
from fastscore.settings import DEFAULT_SETTINGS  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "problems" / "example"
SWEEP = ROOT / "problems" / "example-sweep.jsonl"
TIMINGS = ["parse_solve_seconds"]


@pytest.fixture(scope="module", autouse=True)
def ray_session():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


def test_ray_and_local_executors_write_identical_tables(tmp_path):
    score_sweep(PROBLEMS, SWEEP, tmp_path / "local", executor="local", progress=False)
    score_sweep(PROBLEMS, SWEEP, tmp_path / "ray", executor="ray", workers=2, progress=False)
    for table in ("scores", "probes", "summary", "strata"):
        local = pl.read_parquet(tmp_path / "local" / f"{table}.parquet")
        remote = pl.read_parquet(tmp_path / "ray" / f"{table}.parquet")
        if table == "scores":
            local, remote = local.drop(TIMINGS), remote.drop(TIMINGS)
        assert remote.equals(local), table


def _verdicts(results) -> dict:
    return {(r["config"], r["run"], r["task"]): (r["status"], r["p_verdict"], r["m_correct"])
            for scores, _ in results for r in scores}


def test_killing_a_worker_mid_run_loses_no_row():
    problems = {p.task_id: p for p in load_problems(PROBLEMS)}
    units = list(_units(SWEEP, problems, _Tally(), {}))
    expected = _verdicts(LocalExecutor(problems, DEFAULT_SETTINGS).map(units))
    executor = RayExecutor(problems, DEFAULT_SETTINGS, workers=2, batch_rows=1)
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
