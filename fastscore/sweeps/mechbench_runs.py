"""MechBench run folders as a sweep.

One agent run leaves ``<save_dir>/<exp_name>/<task_name>/`` with ``submission.txt`` (the
frozen mechanism: one equation a line, ``#`` comments, ``;`` separators), the probe
replies ``probe/<NNN>-<probe>/reply.txt`` and the harness's own ``performance.json``.
``read_runs(DIR)`` turns a tree of them (``DIR/<exp_name>/<task_name>/``, or one
experiment folder ``DIR/<task_name>/``) into sweep rows:

- ``config`` / ``run`` from ``exp_name`` (`ExperimentNames`): by default a name ending in
  ``_`` or ``-``, then ``run``, ``seed``, ``rep`` or ``r``, then a number (``gpt-4_run2``,
  ``codex-seed-3``, ``glm-coreset-r2``) is that config and run, and any other name is a config of its own,
  run 0; a pattern such as ``{config}_run{run}`` or a mapping file says otherwise;
- ``task`` = the task folder's name (MechBench writes ``task_name`` there);
- ``mechanism`` = ``submission.txt`` without comments; ``probe_replies`` = a JSON object
  {probe: reply text} scored by the harness's rule (exactly one equation ``probe = expr``);
- the harness's verdicts (``harness_*``) and timings (``agent_seconds``,
  ``evaluation_seconds``); per-probe verdicts go to ``probe_columns``.

A file that is missing, not a regular file (symlinks and FIFOs are never followed or
opened), larger than ``MAX_FILE_BYTES`` or not UTF-8 gives the row a
``READ_ERROR`` (or the probe no reply), never a traceback; nothing outside the
tree is read.
"""
from __future__ import annotations

import csv
import json
import math
import os
import re
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from fastscore.sweeps.read import TREE, SweepReader, register_sweep_reader
from fastscore.sweeps.rows import READ_ERROR, ROW_SCHEMA
from fastscore.sweeps.tree import MAX_FILE_BYTES, PROBES_FILE, SUBMISSION_FILE
from fastscore.text.tokens import comment_free_lines

__all__ = ["ExperimentNames", "harness_verdicts", "is_run_tree", "read_runs", "submission_text"]

PERFORMANCE = "performance.json"
PROBE_FOLDERS = ("probe", "probes")  # the harness's newer and older names
REPLY = "reply.txt"
DATA_FOLDER = "dataest"  # the harness's copy of the task data (sic)
MAX_PERFORMANCE_BYTES = 16 << 20
_PROBE_FOLDER = re.compile(r"(\d+)-(.+)")
_DEFAULT_NAME = re.compile(r"(?P<config>.+?)[_-](?:run|seed|rep|r)[_-]?(?P<run>\d+)")
HARNESS_COLUMNS = ("harness_ok", "harness_error", "harness_p_ok", "harness_p_equivalent", "harness_train_numeric",
                   "harness_id_numeric", "harness_ood_numeric", "harness_m_correct")
HARNESS_PROBE_COLUMNS = ("harness_probe_ok", "harness_probe_equivalent", "harness_probe_error")
_SPLITS = {"train": "harness_train_numeric", "id_test": "harness_id_numeric", "ood_test": "harness_ood_numeric"}


MAX_RUN = 2**63 - 1
"""The largest run number (the ``run`` column is Int64): a folder naming a larger one
is a name that cannot be read."""


class RunTreeError(ValueError):
    """An unusable run tree or experiment-name mapping (one line)."""


@dataclass
class ExperimentNames:
    """How an ``exp_name`` maps to (config, run): a ``pattern`` with ``{config}`` and
    ``{run}`` placeholders, or a ``mapping`` {exp_name: (config, run)}, or the default
    (see module doc).  Names neither reads are counted in ``unread``."""

    pattern: str | None = None
    mapping: Mapping[str, tuple[str, int]] | None = None
    unread: list[str] = field(default_factory=list)

    def __post_init__(self):
        self._regex = None
        if self.pattern is not None:
            if "{config}" not in self.pattern:
                raise RunTreeError(f"experiment pattern {self.pattern!r} has no {{config}} placeholder")
            parts = re.split(r"(\{config\}|\{run\})", self.pattern)
            regex = "".join({"{config}": "(?P<config>.+?)", "{run}": "(?P<run>[0-9]+)"}.get(p, re.escape(p))
                            for p in parts)
            self._regex = re.compile(regex)

    @classmethod
    def from_file(cls, path: str | Path) -> ExperimentNames:
        """A mapping file: CSV or TSV rows ``exp_name,config[,run]`` (a header row
        ``exp_name,config,run`` is allowed; run defaults to 0)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RunTreeError(f"{path}: cannot read the experiment mapping: {exc}") from None
        delimiter = "\t" if "\t" in text.partition("\n")[0] else ","
        mapping = {}
        for number, row in enumerate(csv.reader(text.splitlines(), delimiter=delimiter), start=1):
            row = [cell.strip() for cell in row]
            if not any(row) or row[0].startswith("#") or (number == 1 and row[:2] == ["exp_name", "config"]):
                continue
            if len(row) not in (2, 3) or not row[0] or not row[1]:
                raise RunTreeError(f"{path}:{number}: expected 'exp_name,config[,run]', got {','.join(row)!r}")
            run = row[2] if len(row) == 3 else "0"
            if not run.isdigit() or int(run) > MAX_RUN:
                raise RunTreeError(f"{path}:{number}: run {run[:40]!r} is not an integer in [0, {MAX_RUN}]")
            if row[0] in mapping:
                raise RunTreeError(f"{path}:{number}: experiment {row[0]!r} is mapped twice")
            mapping[row[0]] = (row[1], int(run))
        return cls(mapping=mapping)

    def read(self, name: str) -> tuple[str, int] | None:
        """(config, run) of an experiment name, or None when it cannot be read."""
        if self.mapping is not None:
            found = self.mapping.get(name)
        elif self._regex is not None:
            match = self._regex.fullmatch(name)
            found = None if match is None else (match["config"], int(match.groupdict().get("run") or 0))
        else:
            match = _DEFAULT_NAME.fullmatch(name)
            found = (name, 0) if match is None else (match["config"], int(match["run"]))
        if found is not None and found[1] > MAX_RUN:  # not a run the tables can hold (Int64)
            found = None
        if found is None:
            self.unread.append(name)
        return found


# --- safe reading ------------------------------------------------------------------------

def _entries(folder: str) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)
    except OSError:
        return []


def _folders(folder: str) -> list[os.DirEntry]:
    """Sub-folders, never through a symlink."""
    return [e for e in _entries(folder) if e.is_dir(follow_symlinks=False)]


def _read(path: str, limit: int = MAX_FILE_BYTES) -> tuple[str | None, str | None]:
    """(text, None) for a regular UTF-8 file of at most ``limit`` bytes, else (None, why)."""
    name = os.path.basename(path)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, f"no {name}"
    except OSError as exc:
        return None, f"{name} cannot be read: {exc.strerror}"
    if not stat.S_ISREG(info.st_mode):
        kind = "a symlink" if stat.S_ISLNK(info.st_mode) else "not a regular file"
        return None, f"{name} is {kind}; only regular files inside the tree are read"
    if info.st_size > limit:
        return None, f"{name} is {info.st_size} bytes, limit {limit}"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return None, f"{name} cannot be read: {exc.strerror}"
    if len(data) > limit:
        return None, f"{name} is over {limit} bytes"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"{name} is not UTF-8 text (byte {exc.start})"


def submission_text(text: str) -> str:
    """A MechBench submission without ``#`` comments (``fastscore.text.tokens.comment_free_lines``):
    one equation a line, stripped, empty lines dropped (``;`` kept)."""
    lines = (line.strip() for line in comment_free_lines(text))
    return "\n".join(line for line in lines if line)


# --- the tree ------------------------------------------------------------------------------

def _is_task_folder(folder: str) -> bool:
    names = {e.name for e in _entries(folder)}
    return SUBMISSION_FILE in names or PERFORMANCE in names


def is_run_tree(root: str | Path) -> bool:
    """Whether ``root`` holds MechBench run folders: ``root/<exp>/<task>/`` (or one
    experiment ``root/<task>/``) with a ``submission.txt`` or ``performance.json``, and no
    submission file three or more folders down, as in fastscore's ``<config>/<run>/<task>/``."""
    root = os.path.abspath(root)
    found = False
    for folder, subfolders, files in os.walk(root):
        depth = 0 if folder == root else os.path.relpath(folder, root).count(os.sep) + 1
        subfolders[:] = [name for name in subfolders if not name.startswith(".")
                         and name not in (*PROBE_FOLDERS, DATA_FOLDER) and depth < 4]
        if depth >= 3 and (SUBMISSION_FILE in files or PROBES_FILE in files):
            return False
        if depth in (1, 2) and (SUBMISSION_FILE in files or PERFORMANCE in files):
            found = True
    return found


def read_runs(root: str | Path, names: ExperimentNames | None = None) -> Iterator[dict]:
    """Sweep rows of every task folder of a run tree (see module doc)."""
    names = names or ExperimentNames()
    root = str(root)
    children = _folders(root)
    if any(_is_task_folder(child.path) for child in children):
        experiments = [(os.path.basename(os.path.abspath(root)), children)]  # one experiment folder
    else:
        experiments = [(e.name, _folders(e.path)) for e in children]
    for experiment, tasks in experiments:
        cell = names.read(experiment)
        if cell is None:
            continue
        for task in tasks:
            if _is_task_folder(task.path):
                yield {"config": cell[0], "run": cell[1], "task": task.name, **_task_row(task.path)}


def _task_row(folder: str) -> dict:
    text, error = _read(os.path.join(folder, SUBMISSION_FILE))
    row = {"phenomenal": None, "mechanism": None, "probes": None, READ_ERROR: None}
    if text is not None:
        row["mechanism"] = submission_text(text) or None
        if row["mechanism"] is None:
            row[READ_ERROR] = "submission.txt holds no equation"
    else:
        row[READ_ERROR] = error if error != f"no {SUBMISSION_FILE}" else "the run left no submission.txt"
    replies = _replies(folder)
    row["probe_replies"] = json.dumps(replies, sort_keys=True, ensure_ascii=False) if replies else None
    harness, per_probe = _performance(folder)
    row["probe_columns"] = json.dumps(per_probe, sort_keys=True, ensure_ascii=False) if per_probe else None
    row.update(harness)
    return row


def _replies(folder: str) -> dict[str, str | None]:
    """{probe: reply text, or None when unreadable} from ``probe/<NNN>-<probe>/reply.txt``."""
    replies: dict[str, str | None] = {}
    for probes in PROBE_FOLDERS:
        for entry in _folders(os.path.join(folder, probes)):
            match = _PROBE_FOLDER.fullmatch(entry.name)
            if match is None or match.group(2) in replies:
                continue
            text, _ = _read(os.path.join(entry.path, REPLY))
            replies[match.group(2)] = text
    return replies


def _flag(value) -> bool | None:
    return value if isinstance(value, bool) else None


def _seconds(value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _performance(folder: str) -> tuple[dict, dict]:
    """The harness's own verdicts and timings from ``performance.json``."""
    text, error = _read(os.path.join(folder, PERFORMANCE), MAX_PERFORMANCE_BYTES)
    if text is None:
        row = harness_verdicts({})[0]
        row["harness_ok"] = None
        if error != f"no {PERFORMANCE}":
            row["harness_error"] = error
        return row, {}
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        row = harness_verdicts({})[0]
        row["harness_error"] = f"performance.json is not JSON: {getattr(exc, 'msg', 'nested too deeply')}"
        return row, {}
    if not isinstance(data, Mapping):
        row = harness_verdicts({})[0]
        row["harness_error"] = "performance.json is not a JSON object"
        return row, {}
    return harness_verdicts(data)


def harness_verdicts(data: Mapping) -> tuple[dict, dict]:
    """The harness's verdicts and timings of one ``performance.json`` object (also the
    core of a published results-layer record, ``fastscore.sweeps.results``): the row's
    ``HARNESS_COLUMNS``, ``agent_seconds`` and ``evaluation_seconds``, and per probe
    ``HARNESS_PROBE_COLUMNS``.  Missing or mistyped fields give nulls."""
    row = dict.fromkeys(HARNESS_COLUMNS)
    row.update(harness_ok=_flag(data.get("ok")), agent_seconds=_seconds(data.get("agent_seconds")),
               evaluation_seconds=_seconds(data.get("evaluation_seconds")))
    evaluation = data.get("evaluation") if isinstance(data.get("evaluation"), Mapping) else {}
    phenomenal = evaluation.get("phenomenal") if isinstance(evaluation.get("phenomenal"), Mapping) else {}
    errors = [data.get("error"), phenomenal.get("error")]
    row["harness_error"] = next((str(e)[:500] for e in errors if isinstance(e, str) and e), None)
    row["harness_p_ok"] = _flag(phenomenal.get("ok"))
    symbolic = []
    for split, column in _SPLITS.items():
        scores = phenomenal.get(split) if isinstance(phenomenal.get(split), Mapping) else {}
        row[column] = _flag(scores.get("numerically_equivalent"))
        symbolic.append(_flag(scores.get("symbolically_equivalent")))
    known = [s for s in symbolic if s is not None]
    row["harness_p_equivalent"] = all(known) if known else (False if row["harness_p_ok"] is False else None)
    per_probe = {}
    probes = evaluation.get("mechanism_probes")
    for item in probes if isinstance(probes, list) else []:
        if not isinstance(item, Mapping) or not isinstance(item.get("probe"), str):
            continue
        ok = _flag(item.get("ok"))
        scores = item.get("scores") if isinstance(item.get("scores"), Mapping) else {}
        flags = [_flag(s.get("symbolically_equivalent")) for s in scores.values() if isinstance(s, Mapping)]
        equivalent = bool(ok and flags and all(flags)) if ok is not None else None
        per_probe[item["probe"]] = {"harness_probe_ok": ok, "harness_probe_equivalent": equivalent,
                                    "harness_probe_error": str(item["error"])[:500]
                                    if isinstance(item.get("error"), str) else None}
    if per_probe:
        row["harness_m_correct"] = all(p["harness_probe_equivalent"] for p in per_probe.values())
    return row, per_probe


def _run_frames(root: Path, batch_size: int, options: Mapping) -> Iterator[pl.DataFrame]:
    """The run tree as sweep frames (``options["experiments"]``: how its experiment names read)."""
    rows: list[dict] = []
    for row in read_runs(root, options.get("experiments")):
        rows.append(row)
        if len(rows) == batch_size:
            yield pl.DataFrame(rows, schema_overrides=_RUN_SCHEMA, infer_schema_length=None)
            rows = []
    if rows:
        yield pl.DataFrame(rows, schema_overrides=_RUN_SCHEMA, infer_schema_length=None)


_RUN_SCHEMA = {**ROW_SCHEMA, "probe_replies": pl.String, "probe_columns": pl.String,
               "harness_error": pl.String, "agent_seconds": pl.Float64, "evaluation_seconds": pl.Float64,
               **{name: pl.Boolean for name in HARNESS_COLUMNS if name != "harness_error"}}


register_sweep_reader(SweepReader("MechBench run folders", lambda path: path.is_dir() and is_run_tree(path),
                                  _run_frames), before=TREE)
