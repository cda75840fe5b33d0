"""Benchmark: what one bomb costs a batch on the Ray executor.

One Ray worker scores one batch of ``--rows`` distinct submissions to the example's
``michaelis-menten-rate`` task, twice: clean, then with one row that never finishes
its solve (a mechanism, planted in the worker, as in ``tests/run/test_ray_executor.py``: a regular
expression that backtracks without end, holding the worker's interpreter).  Prints the
wall time of each, their ratio, and the statuses of the bomb run.

Usage (repository root)::

    .venv/bin/python bench/bench_ray_bomb.py --rows 200 --row-timeout 5
"""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

import ray

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from fastscore.problems.formats import load_problems  # noqa: E402
from fastscore.run.executors.ray import RayExecutor  # noqa: E402
from fastscore.settings import Settings  # noqa: E402
from tests.run.test_ray_executor import _plant_bomb  # noqa: E402

TASK = "michaelis-menten-rate"


def _timed(executor: RayExecutor, rows: list[dict]) -> tuple[float, list]:
    started = time.perf_counter()
    results = list(executor.map([(TASK, rows)]))
    return time.perf_counter() - started, results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200)
    parser.add_argument("--row-timeout", type=float, default=5.0)
    args = parser.parse_args()
    problems = {problem.task_id: problem for problem in load_problems(ROOT / "problems" / "example")}
    rows = [{"config": "c", "run": run, "task": TASK,
             "phenomenal": f"v = k3*E_T*S/((k2 + k3)/k1 + S + {run})", "submission_sha": f"sha{run}"}
            for run in range(args.rows)]
    ray.cloudpickle.register_pickle_by_value(sys.modules["tests.run.test_ray_executor"])
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    executor = RayExecutor(problems, Settings(row_timeout=args.row_timeout), workers=1)
    try:
        list(executor.map([(TASK, rows[:1])]))  # the worker builds the reference
        clean, _ = _timed(executor, [{**row, "phenomenal": row["phenomenal"].replace(" + S + ", " + S + 1000")}
                                     for row in rows])  # other texts: the worker's memo does not serve the bomb run
        with tempfile.TemporaryDirectory() as calls:
            ray.get(executor._actors[0].__ray_call__.remote(_plant_bomb, str(Path(calls) / "calls")))
            bombed, results = _timed(executor, [{**row, "phenomenal": None, "mechanism": "v = bomb"} if row["run"] == 3 else row
                                                for row in rows])
    finally:
        executor.close()
        ray.shutdown()
    statuses = collections.Counter(row["status"] for scores, _ in results for row in scores)
    print(f"{args.rows} rows, row_timeout {args.row_timeout:g} s: clean {clean:.1f} s, one bomb {bombed:.1f} s "
          f"(x{bombed / clean:.1f}); results {len(results)}, statuses {dict(statuses)}")


if __name__ == "__main__":
    main()
