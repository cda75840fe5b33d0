"""Benchmark: real agents' attempts beside a planted study over the same tasks, so a
gap between what agents write and what we plant shows in the numbers.

    python bench/bench_real.py [--corpus tests/data/real] [--copies 2] [--passes 3]

Real: the regression corpus (``tests/data/real/attempts.jsonl``, real attempts from
MechBench's published experiments with their task files).  Planted: the same tasks'
planted submissions (``scripts/mechbench_study.py``: the task's own mechanism, renamed,
shuffled, the law alone, a perturbed target equation, wrong and malformed replies).

Two measures of each, in the same run:

1. **per row, in this process**: ``score_task`` on each row alone, after a warm-up,
   caches emptied before each pass (median of ``--passes``): rows per second, the
   median and the slowest row (a row that stalls shows here);
2. **end to end**: ``fastscore score --executor local`` in a fresh process, as an
   operator runs it: wall seconds and the peak resident memory of the largest
   process (the scoring child), read from ``getrusage(RUSAGE_CHILDREN)``.

Results go to ``bench/results/real.md``.
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from fastscore.problems.formats import load_problems  # noqa: E402
from fastscore.scoring.reference import build_reference  # noqa: E402
from fastscore.scoring.task import score_task  # noqa: E402
from fastscore.support import caches  # noqa: E402
from fastscore.support.collector import paused  # noqa: E402
from fastscore.tapes.warm import warm_up  # noqa: E402
from mechbench_study import study  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "real.md"
FASTSCORE = Path(sys.executable).with_name("fastscore")


def real_rows(corpus: Path) -> list[dict]:
    return [json.loads(line) for line in (corpus / "attempts.jsonl").read_text().splitlines()]


def planted_rows(problems, *, copies: int, seed: int = 7) -> list[dict]:
    """Every planted submission of every task, unique by text, as sweep rows."""
    rng, rows, seen = random.Random(seed), [], set()
    for problem in problems:
        for copy in range(copies):
            for planted in study(problem, copy=copy, rng=rng):
                key = (problem.task_id, planted["mechanism"], json.dumps(planted["replies"], sort_keys=True))
                if key in seen:
                    continue
                seen.add(key)
                rows.append({"config": f"{planted['kind']}-{copy}", "run": 0, "task": problem.task_id,
                             "mechanism": planted["mechanism"],
                             "probe_replies": json.dumps(planted["replies"], sort_keys=True)})
    return rows


def per_row(references: dict, rows: list[dict], passes: int) -> dict:
    """Median pass of ``score_task`` on each row alone: per-row seconds (CPU)."""
    for row in rows:  # warm-up: kernels, the references' own work
        score_task(references[row["task"]], [row])
    runs = []
    for _ in range(passes):
        caches.clear()
        seconds = []
        with paused():
            for row in rows:
                started = time.process_time()
                score_task(references[row["task"]], [row])
                seconds.append((time.process_time() - started, row["task"]))
        runs.append(seconds)
    median_pass = sorted(runs, key=lambda s: sum(t for t, _ in s))[len(runs) // 2]
    total = sum(t for t, _ in median_pass)
    slowest = max(median_pass)
    return {"rows": len(rows), "seconds": total, "rows_per_s": len(rows) / total,
            "median_ms": 1e3 * statistics.median(t for t, _ in median_pass),
            "max_ms": 1e3 * slowest[0], "slowest_task": slowest[1]}


def end_to_end(tasks: Path, rows: list[dict]) -> dict:
    """``fastscore score`` in a fresh process: wall seconds and the peak memory of the
    largest process it ran."""
    with tempfile.TemporaryDirectory() as folder:
        sweep = Path(folder) / "sweep.jsonl"
        sweep.write_text("".join(json.dumps(row) + "\n" for row in rows))
        command = [str(FASTSCORE), "score", "--problems", str(tasks), "--sweep", str(sweep),
                   "--out", str(Path(folder) / "out"), "--executor", "local", "--no-progress"]
        done = subprocess.run([sys.executable, "-c", _MEASURED, *command], capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"fastscore score failed: {done.stderr.strip()}")
    wall, peak_kb = map(float, done.stdout.split()[-2:])
    return {"wall_s": wall, "rows_per_s": len(rows) / wall, "peak_mb": peak_kb / 1024}


_MEASURED = """
import resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stderr.write(done.stderr)
print(time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(done.returncode)
"""
"""Runs a command and prints its wall seconds and the peak memory (kB) of the largest
process of its tree (``ru_maxrss`` of the waited-for children, grandchildren included)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "data" / "real")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args()
    tasks = args.corpus / "tasks"
    problems = load_problems(tasks)
    warm_up()
    references = {p.task_id: build_reference(p) for p in problems}
    real = real_rows(args.corpus)
    planted = planted_rows(problems, copies=args.copies)
    e2e = {"planted": end_to_end(tasks, planted), "real": end_to_end(tasks, real)}
    measured = {"planted": per_row(references, planted, args.passes), "real": per_row(references, real, args.passes)}
    lines = [
        "# Real agents' attempts beside a planted study (`python bench/bench_real.py`)",
        "",
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, {platform.machine()}, Python {platform.python_version()}; "
        f"{len(problems)} task files from `{args.corpus.relative_to(ROOT) if args.corpus.is_relative_to(ROOT) else args.corpus}`; "
        f"per row: median of {args.passes} passes, caches emptied, CPU seconds.",
        "",
        "| sweep | rows | rows/s (per row, in process) | median ms a row | slowest ms a row (task) "
        "| end to end wall s | end to end rows/s | peak MB (largest process) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("real", "planted"):
        m, e = measured[name], e2e[name]
        lines.append(f"| {name} | {m['rows']} | {m['rows_per_s']:.0f} | {m['median_ms']:.1f} | "
                     f"{m['max_ms']:.1f} ({m['slowest_task']}) | {e['wall_s']:.1f} | {e['rows_per_s']:.1f} | "
                     f"{e['peak_mb']:.0f} |")
    ratio = measured["planted"]["rows_per_s"] / measured["real"]["rows_per_s"]
    lines += ["", f"Planted rows are scored {ratio:.2f}× as fast as real ones a row (in process); "
                  "the end-to-end times include start-up (imports, kernels loaded from the cache, the child)."]
    text = "\n".join(lines) + "\n"
    RESULTS.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
