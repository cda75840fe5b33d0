"""The main job: score a sweep against a problem set and write the tables (SPEC §6).

``score_sweep`` streams the sweep in batches, groups each batch by task into work
units, hands them to an executor, and writes results in parts as they arrive, so
memory does not grow with the number of submissions held at once.
"""
from __future__ import annotations

import hashlib
import json
import platform
import shutil
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Iterator, Sequence

import polars as pl

from fastscore import tables
from fastscore.executors.local import LocalExecutor, WorkUnit
from fastscore.problems import Problem, load_problems, problem_files
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.sweep import SweepError, read_sweep, sweep_digest

PART_ROWS = 20_000
RAY_THRESHOLD = 50_000
_PACKAGES = ("fastscore", "numpy", "numba", "symengine", "sympy", "polars", "pyarrow", "ray", "mpmath", "scipy")


@dataclass
class _Tally:
    """What the reader saw: grid axes, cells scored, rows set aside."""

    config_runs: set = field(default_factory=set)
    cells: set = field(default_factory=set)
    rows: int = 0
    unknown_tasks: Counter = field(default_factory=Counter)
    duplicates: int = 0


def score_sweep(problems: str | Path | Sequence[Problem], sweep: str | Path, out: str | Path, *,
                executor: str = "auto", address: str | None = None, workers: int | None = None,
                settings: Settings = DEFAULT_SETTINGS, progress: bool | None = None) -> pl.DataFrame:
    """Score every submission of ``sweep`` against ``problems``; write ``scores``,
    ``probes``, ``summary``, ``strata`` Parquet tables and ``meta.json`` to ``out``.
    Returns the summary table."""
    started = time.perf_counter()
    problem_list = load_problems(problems) if isinstance(problems, (str, Path)) else list(problems)
    by_task = {p.task_id: p for p in problem_list}
    out = Path(out)
    parts = out / ".parts"
    shutil.rmtree(parts, ignore_errors=True)
    parts.mkdir(parents=True)
    tally = _Tally()
    runner = _executor(executor, by_task, settings, address=address, workers=workers, sweep=sweep)
    writer = _PartWriter(parts)
    bar = _progress(progress, sweep)
    try:
        for score_rows, probe_rows in runner.map(_units(sweep, by_task, tally)):
            writer.add(score_rows, probe_rows)
            bar.update(len(score_rows))
    finally:
        bar.close()
        runner.close()
    writer.flush()
    if not tally.cells:
        shutil.rmtree(parts, ignore_errors=True)
        if tally.unknown_tasks:
            raise SweepError(f"no row of {sweep} names a task of the problem set "
                             f"(e.g. {next(iter(tally.unknown_tasks))!r})")
        raise SweepError(f"{sweep}: the sweep has no submissions")
    scores = _with_missing(writer.read("scores", tables.SCORE_SCHEMA), by_task, tally)
    probes = writer.read("probes", tables.PROBE_SCHEMA)
    summary, strata = tables.summary(scores), tables.strata(scores)
    scores.write_parquet(out / "scores.parquet")
    probes.write_parquet(out / "probes.parquet")
    summary.write_parquet(out / "summary.parquet")
    strata.write_parquet(out / "strata.parquet")
    shutil.rmtree(parts, ignore_errors=True)
    meta = _meta(problems, sweep, settings, tally, runner.name, time.perf_counter() - started, scores)
    (out / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=str))
    return summary


def _units(sweep, by_task, tally: _Tally) -> Iterator[WorkUnit]:
    """Sweep rows grouped by task, batch by batch; duplicates and unknown tasks set aside."""
    for frame in read_sweep(sweep):
        groups = defaultdict(list)
        for row in frame.iter_rows(named=True):
            tally.rows += 1
            cell = (row["config"], row["run"], row["task"])
            tally.config_runs.add(cell[:2])
            if row["task"] not in by_task:
                tally.unknown_tasks[row["task"]] += 1
            elif cell in tally.cells:
                tally.duplicates += 1
            else:
                tally.cells.add(cell)
                groups[row["task"]].append(row)
        yield from groups.items()


def _executor(name: str, by_task, settings, *, address, workers, sweep):
    if name == "auto":
        name = "ray" if address or _approximate_rows(sweep) >= RAY_THRESHOLD else "local"
    if name == "local":
        return LocalExecutor(by_task, settings)
    if name == "ray":
        from fastscore.executors.ray import RayExecutor
        return RayExecutor(by_task, settings, address=address, workers=workers)
    raise ValueError(f"unknown executor {name!r}; expected local, ray or auto")


def _approximate_rows(sweep) -> int:
    path = Path(sweep)
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq
        return pq.ParquetFile(path).metadata.num_rows
    if path.is_file():
        return path.stat().st_size // 200
    return sum(1 for _ in path.rglob("submission.txt"))


class _PartWriter:
    """Buffers result rows and writes them as numbered Parquet parts."""

    def __init__(self, folder: Path):
        self.folder, self.count = folder, 0
        self.buffers = {"scores": [], "probes": []}

    def add(self, score_rows, probe_rows) -> None:
        self.buffers["scores"].extend(score_rows)
        self.buffers["probes"].extend(probe_rows)
        if len(self.buffers["scores"]) >= PART_ROWS:
            self.flush()

    def flush(self) -> None:
        schemas = {"scores": tables.SCORE_SCHEMA, "probes": tables.PROBE_SCHEMA}
        for kind, rows in self.buffers.items():
            if rows:
                tables.frame(rows, schemas[kind]).write_parquet(self.folder / f"{kind}-{self.count:06d}.parquet")
                rows.clear()
        self.count += 1

    def read(self, kind: str, schema) -> pl.DataFrame:
        files = sorted(self.folder.glob(f"{kind}-*.parquet"))
        if not files:
            return tables.frame([], schema)
        return pl.concat([pl.read_parquet(f) for f in files], how="diagonal_relaxed")


def _with_missing(scores: pl.DataFrame, by_task, tally: _Tally) -> pl.DataFrame:
    """Add a ``missing`` row for every cell of the expected grid with no submission."""
    missing = []
    for config, run in sorted(tally.config_runs):
        for task, problem in by_task.items():
            if (config, run, task) not in tally.cells:
                missing.append(tables.missing_row(config, run, task, family=problem.family,
                                                  domain=problem.domain, n_mutations=problem.n_mutations,
                                                  n_probes=len(problem.probes)))
    if missing:
        scores = pl.concat([scores, tables.frame(missing, tables.SCORE_SCHEMA)], how="diagonal_relaxed")
    return scores.sort("config", "run", "task")


def _progress(enabled: bool | None, sweep):
    from tqdm import tqdm
    if enabled is None:
        enabled = sys.stderr.isatty()
    return tqdm(total=None, unit="sub", desc="scoring", disable=not enabled, mininterval=0.5)


def _digest_problems(problems) -> str:
    digest = hashlib.sha256()
    if isinstance(problems, (str, Path)):
        root = Path(problems)
        for path in problem_files(root):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
    else:
        for problem in problems:
            digest.update(repr(problem).encode())
    return digest.hexdigest()


def _meta(problems, sweep, settings: Settings, tally: _Tally, executor: str, seconds: float,
          scores: pl.DataFrame) -> dict:
    versions = {}
    for package in _PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "fastscore_version": versions["fastscore"],
        "versions": versions,
        "python": platform.python_version(),
        "settings": settings.as_dict(),
        "executor": executor,
        "inputs": {"problems": str(problems) if isinstance(problems, (str, Path)) else "<in memory>",
                   "problems_sha256": _digest_problems(problems),
                   "sweep": str(sweep), "sweep_sha256": sweep_digest(sweep)},
        "counts": {"sweep_rows": tally.rows, "scored_cells": len(tally.cells),
                   "grid_cells": scores.height, "duplicate_rows_ignored": tally.duplicates,
                   "rows_with_unknown_task": sum(tally.unknown_tasks.values()),
                   "unknown_tasks": sorted(tally.unknown_tasks)[:50],
                   "status": dict(Counter(scores["status"].to_list()))},
        "timings": {"total_seconds": seconds},
    }
