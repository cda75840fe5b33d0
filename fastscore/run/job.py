"""The main job: score a sweep against a problem set and write the tables.

``score_sweep`` streams the sweep in batches, groups each batch by task into work
units, hands them to an executor, and writes results in parts (``OUT/.parts/``) as
they arrive, so memory does not grow with the number of submissions held at once.

Resume: the parts are kept.  Re-running on the same ``--out`` skips every cell whose
submission (hashed with all its columns: ``submission_sha``) was already scored under
the same problem set, settings and fastscore version; an interrupted run (Ctrl-C,
kill -9) loses at most the rows not yet written to a part.  A changed problem set or
setting rescores everything; a changed sweep rescores only the cells that changed.
Delete ``OUT/.parts`` to force a full rescore.  A row the executor could not score
(a ``timeout`` or a worker that died: ``submission_sha`` null) is scored again on resume.

Safety of the output: a run holds an exclusive lock on ``OUT/.lock`` (a second run on
the same ``--out`` stops at once), and every table is written to a temporary file
that replaces the old one only when complete (a full disk leaves no truncated table).
Sweep rows without a ``config`` or ``task`` are skipped, and sweep columns that mix
numbers and text are left out of the cost figures; both are counted in ``meta.json``
and reported on stderr.  So are rows naming a task that is not in the problem set (a
typo in a task name would otherwise silently lower nothing but the denominator): a
warning with their count and first names (`unknown_task_warning`), or, with
``strict=True``, an `UnknownTasks` error before any table is written.  Rows of tasks in
the problem set but outside ``tasks`` (a Core set) are counted, not warned about.
"""
from __future__ import annotations

import json
import platform
import sys
import tempfile
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Iterator, Mapping, Sequence

import polars as pl

from fastscore import __version__
from fastscore.outputs import tables
from fastscore.outputs.passk import PASSK_FILE, passk_summary, read_passk
from fastscore.outputs.published import numeric_columns, published
from fastscore.problems.formats import digest_problems, load_problems, problem_paths, select_tasks
from fastscore.problems.model import Problem
from fastscore.run import in_memory
from fastscore.run.executors import ExecutorName, make_executor
from fastscore.run.executors.base import Executor, WorkUnit
from fastscore.run.parts import PartStore, atomically
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.support.extras import has_extra
from fastscore.support.lifeline import LockBusy, RunLock
from fastscore.sweeps.mechbench_runs import ExperimentNames
from fastscore.sweeps.read import READ_ERROR, SweepError, approximate_rows, read_sweep, submission_sha, sweep_digest
from fastscore.sweeps.results import NO_TASK, no_task_row, triage

PART_ROWS = 20_000
_PACKAGES = ("numpy", "numba", "symengine", "sympy", "polars", "pyarrow", "ray", "mpmath", "scipy")


@dataclass
class _Tally:
    """What the reader saw: grid axes, cells and their submission hashes, rows set aside."""

    config_runs: set = field(default_factory=set)
    cells: dict = field(default_factory=dict)
    rows: int = 0
    resumed: int = 0
    unknown_tasks: Counter = field(default_factory=Counter)
    duplicates: int = 0
    unlabelled: int = 0  # rows without a config or task: skipped
    unread: list = field(default_factory=list)  # rows of a tree whose files were not read: (row, reason)
    set_aside: list = field(default_factory=list)  # results-layer rows not scored: no_task / missing rows
    task_digests: dict = field(default_factory=dict)  # task file -> its sha256 digests (fastscore.sweeps.results)
    task_sha_mismatch: int = 0
    no_task: Counter = field(default_factory=Counter)  # results-layer attempts of tasks not in the problem set

    def passed(self) -> int:
        """Rows read but not sent to be scored: resumed, duplicate, unlabelled, of unknown
        tasks, or with files not read."""
        return (self.resumed + self.duplicates + self.unlabelled + sum(self.unknown_tasks.values())
                + len(self.unread))


class OutputBusy(ValueError):
    """Another run holds the lock on the output directory."""


class UnknownTasks(SweepError):
    """``strict``: sweep rows name tasks that are not in the problem set."""


UNKNOWN_TASK_EXAMPLES = 3
"""How many of the unknown task names a warning shows."""


def unknown_task_warning(counts: Mapping[str, int], *, what: str = "sweep row(s)",
                         outcome: str = "they were skipped") -> str | None:
    """One line on rows naming a task outside the problem set (task -> rows), with the
    count and the first names (most rows first), or None when there are none.  Shared
    by every reader that sets such rows aside, so the wording is the same."""
    if not counts:
        return None
    names = sorted(counts, key=lambda name: (-counts[name], str(name)))
    shown = ", ".join(repr(name) for name in names[:UNKNOWN_TASK_EXAMPLES])
    more = f" and {len(names) - UNKNOWN_TASK_EXAMPLES} more" if len(names) > UNKNOWN_TASK_EXAMPLES else ""
    return (f"{sum(counts.values())} {what} name {len(names)} task(s) not in the problem set "
            f"({shown}{more}): {outcome}")


def score_sweep(problems: str | Path | Sequence[str | Path] | Sequence[Problem], sweep, out: str | Path | None = None,
                *, tasks: Sequence[str] | None = None, executor: ExecutorName | str = "auto",
                address: str | None = None, workers: int | None = None, settings: Settings = DEFAULT_SETTINGS,
                progress: bool | None = None, experiments: ExperimentNames | None = None, strict: bool = False):
    """Score every submission of ``sweep`` against ``problems`` (a problem file or
    directory, several of them, or ``Problem`` objects; restricted to the task ids
    ``tasks`` when given, e.g. a Core set); write ``scores``, ``probes``, ``summary``,
    ``strata`` Parquet tables and ``meta.json`` to ``out``, resuming from earlier parts
    in ``out`` where the inputs allow (see module doc).  ``sweep``: a sweep file or
    folder, or the rows themselves (a Polars or pandas DataFrame, a list of dict rows:
    ``fastscore.run.in_memory``).  ``experiments`` maps the experiment names of MechBench
    run folders to (config, run) (``fastscore.sweeps.mechbench_runs.ExperimentNames``; default: its
    documented rule).  ``strict``: rows naming a task that is not in the problem set
    raise `UnknownTasks` (else they are skipped with a warning).  Returns the summary
    table; with no ``out``, scores in a
    temporary folder and returns every table in memory: a dict of frames ``scores``,
    ``probes``, ``summary``, ``strata`` and ``meta`` (a dict)."""
    started = time.perf_counter()
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    problem_list = load_problems(problems) if problem_paths(problems) is not None else list(problems)
    by_task = select_tasks({p.task_id: p for p in problem_list}, tasks)
    known = frozenset(p.task_id for p in problem_list)
    options = dict(executor=executor, address=address, workers=workers, settings=settings, progress=progress,
                   started=started, experiments=experiments or ExperimentNames(), known=known, strict=strict)
    if out is not None and in_memory.is_sweep_path(sweep):
        if not Path(sweep).exists():
            raise SweepError(f"{sweep}: sweep not found")
        with _locked(Path(out)):
            return _score_sweep(problems, by_task, sweep, Path(out), **options)
    with tempfile.TemporaryDirectory(prefix="fastscore-") as folder:
        label = str(sweep) if in_memory.is_sweep_path(sweep) else in_memory.IN_MEMORY
        if not in_memory.is_sweep_path(sweep):
            sweep = in_memory.write_sweep(sweep, Path(folder))
        elif not Path(sweep).exists():
            raise SweepError(f"{sweep}: sweep not found")
        target = Path(folder) / "out" if out is None else Path(out)
        with _locked(target):
            summary = _score_sweep(problems, by_task, sweep, target, sweep_label=label, **options)
        return summary if out is not None else in_memory.read_tables(target)


def _score_sweep(problems, by_task, sweep, out: Path, *, executor, address, workers, settings, progress,
                 started, experiments: ExperimentNames, sweep_label: str | None = None,
                 known: frozenset = frozenset(), strict: bool = False) -> pl.DataFrame:
    state = {"problems_sha256": digest_problems(problems), "tasks": sorted(by_task), "settings": settings.row_dict(),
             "fastscore_version": __version__}
    parts = PartStore(out / ".parts", state, part_rows=PART_ROWS)
    tally = _Tally()
    bar = _progress(progress, sweep)
    if not bar.disable:  # with the bar only: elsewhere stderr holds warnings and errors alone
        _compiling_notice()
    runner = _executor(executor, by_task, settings, address=address, workers=workers, sweep=sweep)
    try:
        passed = 0  # rows not scored but shown on the bar: resumed and set-aside ones
        for score_rows, probe_rows in runner.map(_units(sweep, by_task, tally, parts.done, experiments)):
            parts.add(score_rows, probe_rows)
            now = tally.passed()
            bar.update(len(score_rows) + now - passed)
            passed = now
        bar.update(tally.passed() - passed)  # rows read after the last result (all of them, on a full resume)
        parts.add([tables.failed_row(row, by_task[row["task"]], status="parse_error", error=reason)
                   for row, reason in tally.unread], [])
        parts.add(tally.set_aside, [])
        parts.flush()
    except KeyboardInterrupt:
        parts.flush()  # Ctrl-C: the rows scored so far are kept for the rerun
        raise
    finally:
        bar.close()
        runner.close()
    unknown = {task: n for task, n in tally.unknown_tasks.items() if task not in known}
    if strict and unknown:
        raise UnknownTasks(unknown_task_warning(unknown, outcome="--strict stops the run"))
    if not tally.cells:
        if tally.unknown_tasks:
            raise SweepError(f"no row of {sweep} names a task of the problem set "
                             f"(e.g. {next(iter(tally.unknown_tasks))!r})")
        raise SweepError(f"{sweep}: the sweep has no submissions")
    # the tables are streamed from the parts to disk; only the columns the summary
    # needs are loaded, so the end of a large sweep holds no full copy of its rows
    missing = tables.frame(_missing_rows(by_task, tally), tables.SCORE_SCHEMA)
    scan = parts.scan("scores", tally.cells, extra=missing)
    atomically(out / tables.OUTPUT.scores, scan.with_columns(numeric_columns(scan.collect_schema())).sink_parquet)
    atomically(out / tables.OUTPUT.probes, parts.scan("probes", tally.cells).sink_parquet)
    parts.compact(out / tables.OUTPUT.scores, out / tables.OUTPUT.probes)
    scores = tables.summary_columns(out / tables.OUTPUT.scores)
    own = scores.filter(pl.col("status").ne_missing(NO_TASK))  # fastscore's rates: the tasks it has
    passk = read_passk(out / tables.OUTPUT.scores)
    summary, strata = tables.summary(own), tables.strata(own)
    summary = summary.join(passk_summary(passk, summary["config"]), on="config", how="left", maintain_order="left")
    atomically(out / tables.OUTPUT.summary, summary.write_parquet)
    atomically(out / tables.OUTPUT.strata, strata.write_parquet)
    atomically(out / tables.OUTPUT.published, published(_published_columns(out / tables.OUTPUT.scores)).write_parquet)
    atomically(out / PASSK_FILE, passk.write_parquet)
    meta = _meta(problems, sweep, settings, tally, runner.name, time.perf_counter() - started, scores,
                 problems_sha256=state["problems_sha256"], known=known)
    if sweep_label is not None:
        meta["inputs"]["sweep"] = sweep_label
    meta["counts"]["extra_columns_with_text"] = mixed = _mixed_columns(out / tables.OUTPUT.scores)
    if experiments.unread:
        meta["counts"]["experiments_unread"] = sorted(set(experiments.unread))
    meta["counts"]["task_sha_mismatches"] = tally.task_sha_mismatch
    meta["warnings"] = _warnings(tally, mixed, sorted(set(experiments.unread)), unknown)
    for warning in meta["warnings"]:
        print(f"fastscore: warning: {warning}", file=sys.stderr)
    meta["task_warnings"] = _task_warnings(out / tables.OUTPUT.scores)
    text = json.dumps(meta, indent=2, sort_keys=True, default=str)
    atomically(out / tables.OUTPUT.meta, lambda path: Path(path).write_text(text))
    return summary


@contextmanager
def _locked(out: Path):
    """Hold an exclusive lock on ``out/.lock`` (creating ``out``) for the block: released
    by the kernel when this process dies; a lock left named by a dead run is taken over
    (``fastscore.support.lifeline.RunLock``)."""
    out.mkdir(parents=True, exist_ok=True)
    try:
        with RunLock(out / ".lock", "another fastscore score run") as lock:
            if lock.taken_over is not None:
                print(f"fastscore: {out}/.lock was left by process {lock.taken_over}, which is no longer running: "
                      "taking it over", file=sys.stderr)
            yield
    except LockBusy as error:
        raise OutputBusy(f"{error}; wait for it to finish or choose another --out") from None


def _mixed_columns(path: Path) -> dict[str, int]:
    """Sweep columns of text that hold numbers too (a late 'n/a' in a cost column):
    column -> how many of its values are not numbers.  Such a column is not numeric,
    so it is left out of the cost figures."""
    schema = pl.read_parquet_schema(path)
    text = [name for name, dtype in schema.items()
            if dtype == pl.String and name not in tables.SCORE_SCHEMA and name != READ_ERROR]
    if not text:
        return {}
    counts = pl.scan_parquet(path).select(
        *(pl.col(name).is_not_null().sum().alias(f"{name}\0all") for name in text),
        *(pl.col(name).cast(pl.Float64, strict=False).is_not_null().sum().alias(f"{name}\0num") for name in text),
    ).collect().row(0, named=True)
    return {name: counts[f"{name}\0all"] - counts[f"{name}\0num"] for name in text
            if 0 < counts[f"{name}\0num"] < counts[f"{name}\0all"]}


def _warnings(tally: _Tally, mixed: Mapping[str, int], unread_experiments: Sequence[str] = (),
              unknown: Mapping[str, int] | None = None) -> list[str]:
    """What was set aside or left out, one line each (also in ``meta.json``)."""
    unknown_line = unknown_task_warning(unknown or {})
    warnings = [unknown_line] if unknown_line else []
    warnings += [f"{len(unread_experiments)} experiment folder(s) whose name the mapping cannot read were skipped "
                f"(e.g. {unread_experiments[0]!r})"] if unread_experiments else []
    warnings += [f"column {name!r} mixes numbers and text ({count} values are not numbers): "
                "it is left out of the cost figures" for name, count in mixed.items()]
    if tally.unlabelled:
        warnings.append(f"{tally.unlabelled} sweep row(s) without a config or task were skipped")
    if tally.unread:
        warnings.append(f"{len(tally.unread)} submission(s) that could not be read (a folder's files, a row's "
                        f"text; e.g. {tally.unread[0][1]}): parse_error rows")
    if tally.no_task:
        warnings.append(f"{sum(tally.no_task.values())} attempt(s) name a task not in the problem set "
                        f"(e.g. {next(iter(tally.no_task))!r}): "
                        "kept as no_task rows with the harness's columns only, left out of fastscore's rates")
    if tally.task_sha_mismatch:
        warnings.append(f"{tally.task_sha_mismatch} attempt(s) ran against another version of their task file "
                        "(task_sha_mismatch)")
    return warnings


def _published_columns(path: Path) -> pl.DataFrame:
    """The score columns the pooled published table reads (``fastscore.outputs.published``)."""
    schema = pl.read_parquet_schema(path)
    wanted = ("config", "run", "task", "status", "domain", "n_mutations", "results_domain", "harness_posthoc",
              "p_num", "m_num", "harness_p_num", "harness_m_num")
    return pl.read_parquet(path, columns=[name for name in wanted if name in schema])


def _units(sweep, by_task, tally: _Tally, done: Mapping[tuple, str],
           experiments: ExperimentNames | None = None) -> Iterator[WorkUnit]:
    """Sweep rows grouped by task, batch by batch; duplicates, unknown tasks and cells
    already scored with the same submission are set aside."""
    for frame in read_sweep(sweep, experiments=experiments, problems=by_task):  # problems: PySR's x0, x1, ...
        groups = defaultdict(list)
        for row in frame.iter_rows(named=True):
            tally.rows += 1
            cell = (row["config"], row["run"], row["task"])
            if cell[0] is None or cell[2] is None:
                tally.unlabelled += 1
                continue
            tally.config_runs.add(cell[:2])
            unread = row.pop(READ_ERROR, None)
            aside = None
            if "result_file" in row and cell not in tally.cells:  # a results-layer attempt (fastscore.sweeps.results)
                aside = triage(row, by_task, tally.task_digests, unread=unread)
                tally.task_sha_mismatch += bool(row.get("task_sha_mismatch"))
            if aside is not None:
                if aside == NO_TASK:  # kept as a row (not skipped): its own count and warning
                    tally.no_task[row["task"]] += 1
                sha = tally.cells[cell] = submission_sha(row)
                if done.get(cell) == sha:
                    tally.resumed += 1
                elif aside == NO_TASK:
                    tally.set_aside.append({**no_task_row(row), "submission_sha": sha})
                else:
                    reason = row.get("harness_error")
                    tally.set_aside.append(tables.failed_row(
                        {**row, "submission_sha": sha}, by_task[row["task"]], status="missing",
                        error="the record has no submission" + (f" ({reason})" if reason else "")))
            elif row["task"] not in by_task:
                tally.unknown_tasks[row["task"]] += 1
            elif cell in tally.cells:
                tally.duplicates += 1
            else:
                sha = submission_sha(row)
                tally.cells[cell] = sha
                if done.get(cell) == sha:
                    tally.resumed += 1
                elif unread is not None:
                    tally.unread.append(({**row, "submission_sha": sha}, unread))
                else:
                    groups[row["task"]].append({**row, "submission_sha": sha})
        yield from groups.items()


def _executor(name: str, by_task, settings, *, address, workers, sweep) -> Executor:
    if name == "auto":
        large = approximate_rows(sweep) >= settings.ray_threshold and has_extra("ray")  # else local, as for a small one
        name = "ray" if address or large else "local"
    return make_executor(name, by_task, settings, address=address, workers=workers)


def _missing_rows(by_task, tally: _Tally) -> list[dict]:
    """A ``missing`` row for every cell of the expected grid with no submission."""
    return [tables.failed_row({"config": config, "run": run, "task": task}, problem,
                              status="missing", error="no submission")
            for config, run in sorted(tally.config_runs) for task, problem in by_task.items()
            if (config, run, task) not in tally.cells]


def _task_warnings(path: Path) -> dict[str, str]:
    """Per task, its problem's warnings (probes the law may give away), from the scores."""
    frame = pl.scan_parquet(path).select("task", "task_warnings").drop_nulls().unique().sort("task").collect()
    return dict(frame.iter_rows())


def _progress(enabled: bool | None, sweep):
    """The progress bar on stderr: its total is the sweep's row count (known, or estimated
    by its reader: ``approximate_rows``), so that it shows a rate and an ETA."""
    from tqdm import tqdm
    if enabled is None:
        enabled = sys.stderr.isatty()
    total = None
    if enabled:
        try:
            total = approximate_rows(sweep) or None
        except Exception:  # noqa: BLE001 - an estimate only; the reader reports a bad sweep itself
            total = None
    return tqdm(total=total, unit="sub", desc="scoring", disable=not enabled, mininterval=0.5)


def _compiling_notice() -> None:
    """Say so on stderr when this run compiles the kernels (an empty or stale Numba
    cache: about 20 s before the first row is scored, with the bar at 0) rather than
    loading them."""
    from fastscore.kernels.jit import cache_is_cold
    if cache_is_cold():
        print("fastscore: compiling kernels (first run, ~20 s)", file=sys.stderr, flush=True)


def _shown_paths(problems) -> str:
    """The problem set as meta.json records it: its path(s), or ``<in memory>``."""
    paths = problem_paths(problems)
    return "<in memory>" if paths is None else ", ".join(map(str, paths))


def _meta(problems, sweep, settings: Settings, tally: _Tally, executor: str, seconds: float,
          scores: pl.DataFrame, *, problems_sha256: str, known: frozenset = frozenset()) -> dict:
    versions = {"fastscore": __version__}
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
        "inputs": {"problems": _shown_paths(problems),
                   "problems_sha256": problems_sha256, "sweep": str(sweep), "sweep_sha256": sweep_digest(sweep)},
        "counts": {"sweep_rows": tally.rows, "scored_cells": len(tally.cells) - tally.resumed,
                   "resumed_cells": tally.resumed,
                   "grid_cells": scores.height, "duplicate_rows_ignored": tally.duplicates,
                   "rows_with_unknown_task": sum(tally.unknown_tasks.values()),
                   "rows_with_unselected_task": sum(n for task, n in tally.unknown_tasks.items()
                                                    if task in known),
                   "rows_without_config_or_task": tally.unlabelled,
                   "folders_with_files_not_read": len(tally.unread),
                   "unknown_tasks": sorted(tally.unknown_tasks)[:50],
                   "attempts_with_no_task": sum(tally.no_task.values()),
                   "status": dict(Counter(scores["status"].to_list()))},
        "timings": {"total_seconds": seconds},
    }
