"""Benchmark: MechBench's published results layer rescored, beside the harness's own
``evaluation_seconds`` for the same attempts.

    python bench/bench_results.py [--results DIR] [--tasks DIR] [--passes 5]

Input: the sample under ``tests/data/mechbench-results`` (12 attempt records of six
experiments, two real task files).  The harness recorded, per attempt, how long its
evaluation took (``evaluation_seconds``: solving the submitted mechanism, the law's
verdicts on three splits, every probe's).  fastscore rescores the same attempts:

- *end to end*: ``fastscore.run.job.score_sweep`` on the tree (reading the records, the
  reference and data of each task, scoring, writing every table), a fresh output
  folder each pass, the local executor, after a warm-up pass (Numba compiled, caches
  warm);
- *scoring*: ``fastscore.scoring.task.score_task`` on the rows the reader gives, in this
  process, references built beforehand (the part the harness's ``evaluation_seconds``
  measures), caches emptied before each pass.

Median of ``--passes``; the ratio is the harness's total over fastscore's.  The two
ran on different machines: the ratio says how the costs compare, not a controlled
speed-up.  Results go to ``bench/results/results_layer.md``.
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "tests" / "data" / "mechbench-results"
RESULTS = ROOT / "bench" / "results" / "results_layer.md"

from fastscore.problems.formats import load_problems  # noqa: E402
from fastscore.run.job import score_sweep  # noqa: E402
from fastscore.scoring.reference import build_reference  # noqa: E402
from fastscore.scoring.task import score_task  # noqa: E402
from fastscore.settings import DEFAULT_SETTINGS  # noqa: E402
from fastscore.support import caches  # noqa: E402
from fastscore.sweeps.read import READ_ERROR  # noqa: E402
from fastscore.sweeps.results import read_results  # noqa: E402


def harness_seconds(results: Path) -> list[float]:
    """The records' ``evaluation_seconds``."""
    values = []
    for path in sorted(results.rglob("*.json")):
        if path.name == "setup.json":
            continue
        value = json.loads(path.read_text(encoding="utf-8")).get("evaluation_seconds")
        if isinstance(value, (int, float)):
            values.append(float(value))
    return values


def end_to_end(tasks: Path, results: Path, passes: int) -> list[float]:
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        for index in range(passes + 1):  # the first pass warms up
            started = time.perf_counter()
            score_sweep(tasks, results, Path(scratch) / f"out{index}", executor="local", progress=False)
            if index:
                times.append(time.perf_counter() - started)
    return times


def scoring(tasks: Path, results: Path, passes: int) -> tuple[list[float], int]:
    problems = {p.task_id: p for p in load_problems(tasks)}
    references = {task: build_reference(problem, settings=DEFAULT_SETTINGS) for task, problem in problems.items()}
    groups = defaultdict(list)
    for row in read_results(results):
        row.pop(READ_ERROR, None)
        if row["task"] in references:
            groups[row["task"]].append(row)
    n_rows = sum(len(rows) for rows in groups.values())
    times = []
    for index in range(passes + 1):
        caches.clear()
        started = time.process_time()
        for task, rows in groups.items():
            score_task(references[task], rows, settings=DEFAULT_SETTINGS)
        if index:
            times.append(time.process_time() - started)
    return times, n_rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=SAMPLE / "results")
    parser.add_argument("--tasks", type=Path, default=SAMPLE / "tasks")
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    recorded = harness_seconds(args.results)
    harness, n_records = sum(recorded), len(recorded)
    wall = end_to_end(args.tasks, args.results, args.passes)
    cpu, n_rows = scoring(args.tasks, args.results, args.passes)
    e2e, own = statistics.median(wall), statistics.median(cpu)
    source = args.results.relative_to(ROOT) if args.results.is_relative_to(ROOT) else args.results
    wall_passes, cpu_passes = ", ".join(f"{t:.2f}" for t in wall), ", ".join(f"{t:.3f}" for t in cpu)
    lines = [
        "# The published results layer rescored",
        "",
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, Python {platform.python_version()}, "
        f"{platform.machine()}; `python bench/bench_results.py --passes {args.passes}`.",
        "",
        f"{n_records} attempt records ({source}), {n_rows} scored in process.",
        "",
        "| measure | seconds | harness / fastscore |",
        "|---|---:|---:|",
        f"| harness: sum of the records' `evaluation_seconds` | {harness:.2f} | 1 |",
        f"| fastscore end to end (`score_sweep`, wall, median of {args.passes}; passes {wall_passes}) "
        f"| {e2e:.2f} | {harness / e2e:.1f} |",
        f"| fastscore scoring (`score_task`, CPU, median of {args.passes}; passes {cpu_passes}) "
        f"| {own:.3f} | {harness / own:.0f} |",
        f"| per attempt: harness median / fastscore scoring | {statistics.median(recorded):.2f} / "
        f"{own / n_rows:.4f} | {statistics.median(recorded) / (own / n_rows):.0f} |",
        f"| per attempt: harness's fastest record / fastscore scoring | {min(recorded):.2f} / "
        f"{own / n_rows:.4f} | {min(recorded) / (own / n_rows):.0f} |",
        "",
        "The harness's `evaluation_seconds` were measured on its own machines when the attempts ran, and",
        "they include the agent answering the probes (an answer may take up to its 120 s timeout: the",
        "four records with a timeout take 121-246 s), so the ratios overstate the gap in scoring alone; the",
        "fastest record (one probe, answered) bounds the harness's own evaluation of an attempt from above.",
        "End to end includes reading the records, building each task's reference and data, the local",
        "executor's worker and writing every table.",
    ]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
