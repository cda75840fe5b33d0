"""Benchmark: end-to-end sweep scoring throughput and peak memory.

Run: ``python bench/bench_sweep.py --sizes 10000,100000 --executors local,ray``
(writes ``bench/results/sweep.md``).

- Sweeps come from ``scripts/make_sweep.py`` over the 72 MDBench problems (planted
  truth, duplicate rate ``--duplicate-rate``, default 0.6), generated once per
  (size, seed, rate) into ``--workdir`` and reused.
- Each (size, executor) case runs ``fastscore.run.job.score_sweep`` in a fresh Python
  process, so compile/cache-load time, reference building and peak memory are
  those of one real run. Reported: wall time, submissions/s, unique submissions/s
  (distinct (task, phenomenal, mechanism, probes)), peak memory, machine load, and
  the number of rows whose verdict differs from the planted truth.
- Peak memory: the largest sum, over the case process and all its descendants (Ray's
  GCS, raylet and workers), of proportional set size (``/proc/PID/smaps_rollup``,
  shared pages split between the processes that map them), sampled every 0.5 s;
  also ``ru_maxrss`` of the process itself and of its waited-for children.
- ``--profile N`` runs cProfile on an in-process (local) run of N rows and records the
  top functions.

Results accumulate in ``WORKDIR/results.jsonl`` (one line per case; the latest per
(size, executor) is shown, earlier ones in a history table), so a long case can run
later, in the background, and be added to the same table. ``WORKDIR/notes.md``, if
present, is shown as the findings; ``--sizes ""`` only re-renders.
"""
from __future__ import annotations

import argparse
import cProfile
import datetime
import io
import json
import os
import platform
import pstats
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "tests" / "data" / "mdbench-problems"
RESULTS = ROOT / "bench" / "results" / "sweep.md"
sys.path.insert(0, str(ROOT / "scripts"))


# --- memory of a process tree ----------------------------------------------------------------

def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as handle:
            return [int(p) for p in handle.read().split()]
    except OSError:
        return []


def tree_pids(root: int) -> list[int]:
    """``root`` and every descendant process."""
    out, stack = [], [root]
    while stack:
        pid = stack.pop()
        out.append(pid)
        stack.extend(_children(pid))
    return out


def _pss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class TreeMemory:
    """Samples the proportional set size of a process tree in a background thread."""

    def __init__(self, root: int, interval: float = 0.5):
        self.root, self.interval = root, interval
        self.peak_kib, self.peak_processes, self.peak_at, self.loads = 0, 0, 0.0, []
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            pids = tree_pids(self.root)
            total = sum(_pss_kib(pid) for pid in pids)
            if total > self.peak_kib:
                self.peak_kib, self.peak_processes = total, len(pids)
                self.peak_at = time.monotonic() - self._started
            self.loads.append(os.getloadavg()[0])
            self._stop.wait(self.interval)

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


# --- one case, in its own process -------------------------------------------------------------

def sweep_file(workdir: Path, size: int, *, seed: int, duplicate_rate: float, problems: Path) -> tuple[Path, dict]:
    """The benchmark sweep of ``size`` rows (made once) and its description."""
    import polars as pl

    import make_sweep

    path = workdir / f"sweep-{size}-seed{seed}-dup{duplicate_rate:g}.parquet"
    info_path = path.with_suffix(".json")
    if not (path.exists() and info_path.exists()):
        started = time.perf_counter()
        stats = make_sweep.write_sweep(problems, path, rows=size, seed=seed, duplicate_rate=duplicate_rate)
        seconds = time.perf_counter() - started
        unique = pl.scan_parquet(path).select("task", "phenomenal", "mechanism", "probes").unique().select(
            pl.len()).collect().item()
        info = {"rows": stats.rows, "unique": unique, "configs": stats.configs, "runs": stats.runs,
                "tasks": stats.tasks, "duplicate_rate": 1 - unique / stats.rows, "generate_seconds": seconds,
                "kinds": stats.kinds}
        info_path.write_text(json.dumps(info))
    info = json.loads(info_path.read_text())
    if "batch_unique" not in info:
        info["batch_unique"] = batch_unique(path)
        info_path.write_text(json.dumps(info))
    return path, info


def batch_unique(path: Path) -> int:
    """Distinct submissions summed over fastscore's read batches: the work when repeats are
    recognised within a batch only (``score_task`` dedups within its unit)."""
    import inspect

    import polars as pl

    from fastscore.sweeps.read import read_sweep

    size = inspect.signature(read_sweep).parameters["batch_size"].default
    frame = pl.scan_parquet(path).select("task", "phenomenal", "mechanism", "probes").with_row_index()
    return frame.with_columns(batch=pl.col("index") // size).unique(
        ["batch", "task", "phenomenal", "mechanism", "probes"]).select(pl.len()).collect().item()


def planted_disagreements(out: Path) -> int:
    """Scored rows whose status, law verdict or probe verdict differs from the planted truth."""
    import polars as pl

    scores = pl.scan_parquet(out / "scores.parquet").filter(pl.col("status") != "missing")
    bad = scores.filter((pl.col("status") != pl.col("planted_status"))
                        | ((pl.col("status") == "ok") & (pl.col("p_equivalent") != pl.col("planted_p")))
                        | pl.col("m_correct").ne_missing(pl.col("planted_m")))
    return bad.select(pl.len()).collect().item()


def code_version() -> str:
    """The checkout's commit, with ``+dirty`` when fastscore's or the kernels' files differ from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()

    dirty = git("status", "--porcelain", "--", "fastscore", "kernels")
    return git("rev-parse", "--short", "HEAD") + ("+dirty" if dirty else "")


def run_case(sweep: Path, info: dict, executor: str, out: Path, workers: int | None, problems: Path) -> dict:
    """Score ``sweep`` once in this process; the measurements as a dict."""
    from fastscore.run.job import score_sweep

    version = code_version()
    shutil.rmtree(out, ignore_errors=True)  # score_sweep resumes from an earlier run's parts
    load_before = os.getloadavg()
    started = time.perf_counter()
    with TreeMemory(os.getpid()) as memory:
        score_sweep(problems, sweep, out, executor=executor, workers=workers, progress=False)
        seconds = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    meta = json.loads((out / "meta.json").read_text())
    return {
        "size": info["rows"], "executor": executor, "workers": workers, "seconds": seconds,
        "subs_per_s": info["rows"] / seconds, "unique": info["unique"], "unique_per_s": info["unique"] / seconds,
        "batch_unique": info["batch_unique"],
        "duplicate_rate": info["duplicate_rate"], "peak_tree_pss_mib": memory.peak_kib / 1024,
        "peak_tree_processes": memory.peak_processes, "peak_at": memory.peak_at / seconds, "maxrss_self_mib": own / 1024,
        "maxrss_children_mib": children / 1024, "load_before": load_before[0],
        "load_mean": sum(memory.loads) / max(1, len(memory.loads)), "load_after": os.getloadavg()[0],
        "disagreements": planted_disagreements(out), "status": meta["counts"]["status"],
        "scored_cells": meta["counts"]["scored_cells"],
        "generate_seconds": info["generate_seconds"], "commit": version,
        "date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
    }


def run_profile(sweep: Path, out: Path, problems: Path, top: int = 25) -> str:
    """cProfile of an in-process run: the top functions by own time and by cumulative time."""
    from fastscore.run.job import score_sweep

    profile = cProfile.Profile()
    profile.enable()
    score_sweep(problems, sweep, out, executor="local", progress=False)
    profile.disable()
    text = io.StringIO()
    stats = pstats.Stats(profile, stream=text).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return text.getvalue()


# --- the report --------------------------------------------------------------------------------

def _records(path: Path) -> tuple[list[dict], list[dict]]:
    """(the latest record per (size, executor), the earlier ones)."""
    if not path.exists():
        return [], []
    latest, earlier = {}, []
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            key = (record["size"], record["executor"])
            if key in latest:
                earlier.append(latest[key])
            latest[key] = record
    return [latest[key] for key in sorted(latest)], earlier


def _at(record: dict) -> str:
    return f", at {record['peak_at']:.0%}" if "peak_at" in record else ""


def render(workdir: Path) -> str:
    """``sweep.md``: the latest case per (size, executor), the commands, the profile."""
    records, earlier = _records(workdir / "results.jsonl")
    lines = [
        "# Sweep benchmark",
        "",
        f"Cases recorded in `{workdir}/results.jsonl` (the latest per size and executor); commands "
        "below the table.",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other work (load averages below), "
        f"Python {platform.python_version()}. Problems: the 72 MDBench problems. Sweeps from "
        "`scripts/make_sweep.py` (default kind mix, seed 0); duplicate rate = share of rows repeating "
        "an earlier (task, phenomenal, mechanism, probes).",
        "",
        "Target: 1,000,000 submissions in under 15 minutes (1,111 subs/s) with peak memory under 4 GB. "
        "`1M min` is the time 1M rows would take at the measured rate. `peak tree PSS` covers the "
        "case process and all its descendants (Ray's GCS, raylet, workers), with the process count "
        "and the moment of the peak as a share of the wall time; `maxrss children` only "
        "counts children already waited for, so not Ray's workers. `≠ planted`: rows whose status or "
        "verdict differs from the sweep's planted truth. `commit`: the code scored (`+dirty`: with "
        "uncommitted changes to fastscore or the kernels, as others work in the same checkout).",
        "",
        "| rows | executor | unique (per read batch) | dup. rate | wall s | subs/s | unique subs/s | 1M min "
        "| peak tree PSS MiB | maxrss self / children MiB | load before / mean / after | ≠ planted | commit | date |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in records:
        lines.append(
            f"| {r['size']:,} | {r['executor']}{'' if not r.get('workers') else ' ×' + str(r['workers'])} "
            f"| {r['unique']:,} ({r.get('batch_unique', r['unique']):,}) | {r['duplicate_rate']:.2f} | {r['seconds']:.0f} | {r['subs_per_s']:.0f} "
            f"| {r['unique_per_s']:.0f} | {1e6 / r['subs_per_s'] / 60:.0f} | {r['peak_tree_pss_mib']:.0f} ({r['peak_tree_processes']} proc.{_at(r)}) "
            f"| {r['maxrss_self_mib']:.0f} / {r['maxrss_children_mib']:.0f} "
            f"| {r['load_before']:.1f} / {r['load_mean']:.1f} / {r['load_after']:.1f} | {r['disagreements']} "
            f"| {r.get('commit', '?')} | {r['date']} |")
    if earlier:
        lines += ["", "Earlier runs of the same cases (older code; the scorer changes fast):", "",
                  "| rows | executor | wall s | subs/s | peak tree PSS MiB | load mean | ≠ planted | commit | date |",
                  "|---|---|---|---|---|---|---|---|---|"]
        lines += [f"| {r['size']:,} | {r['executor']} | {r['seconds']:.0f} | {r['subs_per_s']:.0f} "
                  f"| {r['peak_tree_pss_mib']:.0f} | {r['load_mean']:.1f} | {r['disagreements']} "
                  f"| {r.get('commit', '?')} | {r['date']} |" for r in earlier]
    commands = sorted({r["command"] for r in records + earlier if r.get("command")})
    if commands:
        lines += ["", "Commands:", ""] + [f"- `{c}`" for c in commands]
    notes = workdir / "notes.md"
    if notes.exists():
        lines += ["", "## Findings", "", notes.read_text().strip()]
    profile = workdir / "profile.txt"
    if profile.exists():
        lines += ["", "## Profile", "", "cProfile of an in-process run "
                  "(`python bench/bench_sweep.py --profile N`), first lines:", "", "```"]
        lines += profile.read_text().strip().splitlines()[:70]
        lines += ["```"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--executors", default="local,ray")
    parser.add_argument("--workers", type=int, default=None, help="Ray workers (default: every core)")
    parser.add_argument("--duplicate-rate", type=float, default=0.6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--problems", type=Path, default=PROBLEMS)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/fastscore-bench-sweep"))
    parser.add_argument("--profile", type=int, default=None, help="profile an in-process run of N rows")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--case", nargs=2, metavar=("SIZE", "EXECUTOR"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    options = dict(seed=args.seed, duplicate_rate=args.duplicate_rate, problems=args.problems)

    if args.case:  # child process: one measured run
        size, executor = int(args.case[0]), args.case[1]
        sweep, info = sweep_file(args.workdir, size, **options)
        record = run_case(sweep, info, executor, args.workdir / f"out-{size}-{executor}", args.workers,
                          args.problems)
        print(json.dumps(record))
        return 0

    if args.profile:
        sweep, _ = sweep_file(args.workdir, args.profile, **options)
        text = run_profile(sweep, args.workdir / f"out-profile-{args.profile}", args.problems)
        (args.workdir / "profile.txt").write_text(f"{args.profile:,} rows, executor local\n{text}")
    shown = " ".join(["python bench/bench_sweep.py", *(argv if argv is not None else sys.argv[1:])])
    for size in [int(s) for s in args.sizes.split(",") if s]:
        sweep_file(args.workdir, size, **options)  # generated outside the measured process
        for executor in [e for e in args.executors.split(",") if e]:
            command = [sys.executable, __file__, "--case", str(size), executor, "--workdir", str(args.workdir),
                       "--seed", str(args.seed), "--duplicate-rate", str(args.duplicate_rate),
                       "--problems", str(args.problems)]
            if args.workers:
                command += ["--workers", str(args.workers)]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                print(result.stderr[-3000:], file=sys.stderr)
                continue
            record = json.loads(result.stdout.strip().splitlines()[-1])
            record["command"] = shown
            with open(args.workdir / "results.jsonl", "a") as handle:
                handle.write(json.dumps(record) + "\n")
            print(json.dumps(record), flush=True)
    args.results.write_text(render(args.workdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
