"""A sweep as a directory tree SWEEP/<config>/<run>/<task>/ of ``submission.txt`` and
``probes.txt`` files, read as untrusted input: only regular files inside the tree are
read (symbolic links, FIFOs and devices are not, nor are symlinked folders walked),
each at most ``MAX_FILE_BYTES``; a file that is not read gives its row the reason in
``READ_ERROR`` (the caller scores such a row as a ``parse_error``).  MechBench run
folders (``fastscore.sweeps.mechbench_runs``) are read the same way.
"""
from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import polars as pl

from fastscore.sweeps.rows import READ_ERROR, ROW_SCHEMA, SweepError, _probes_text, batched_frames, run_index

MAX_FILE_BYTES = 1 << 20  # a submission, probes or reply file larger than this is not read
SUBMISSION_FILE, PROBES_FILE = "submission.txt", "probes.txt"


def _subdirs(folder: Path) -> list[Path]:
    """Sub-folders, not symbolic links to folders (which may point outside the tree)."""
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".") and p.is_dir() and not p.is_symlink())


class _Unread(Exception):
    """A tree file that is not read; ``str`` is the reason, one line."""


def _read_text(folder: str, name: str, files: list[str]) -> str | None:
    """The text of a regular file of the tree, at most ``MAX_FILE_BYTES`` (never a link:
    O_NOFOLLOW; never blocking on a FIFO: O_NONBLOCK, then only a regular file is read)."""
    if name not in files:
        return None
    try:
        fd = os.open(os.path.join(folder, name), os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        reason = "a symbolic link" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
        raise _Unread(f"{name} is {reason}: not read") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _Unread(f"{name} is not a regular file: not read")
        if info.st_size > MAX_FILE_BYTES:
            raise _Unread(f"{name} is {info.st_size} bytes, more than {MAX_FILE_BYTES}: not read")
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _Unread(f"{name} is more than {MAX_FILE_BYTES} bytes: not read")
    return data.decode("utf-8", errors="replace").strip()


def _submission_row(text: str | None) -> dict:
    """submission.txt: one equation a line or ';'-separated; one equation is a phenomenal law."""
    equations = [part.strip() for line in (text or "").splitlines() for part in line.split(";")]
    equations = [equation for equation in equations if equation]
    if len(equations) == 1:
        return {"phenomenal": equations[0], "mechanism": None}
    return {"phenomenal": None, "mechanism": "\n".join(equations) or None}


def _tree_rows(root: Path) -> Iterator[dict]:
    for config_dir in _subdirs(root):
        for run_dir in _subdirs(config_dir):
            run = run_index(run_dir.name)
            if run is None:
                raise SweepError(f"{run_dir}: run folder name has no run index (expected e.g. 0, run-2, run3)")
            for folder, subfolders, files in os.walk(run_dir):
                subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
                if SUBMISSION_FILE not in files and PROBES_FILE not in files:
                    continue
                task = os.path.relpath(folder, run_dir)
                if task == os.curdir:
                    raise SweepError(f"{folder}: submission files must sit in a task folder below the run folder")
                cell = {"config": config_dir.name, "run": run, "task": task.replace(os.sep, "/")}
                try:
                    yield {**cell, **_submission_row(_read_text(folder, SUBMISSION_FILE, files)),
                           "probes": _probes_text(_read_text(folder, PROBES_FILE, files)), READ_ERROR: None}
                except _Unread as unread:
                    yield {**cell, "phenomenal": None, "mechanism": None, "probes": None, READ_ERROR: str(unread)}


def _tree_frames(root: Path, batch_size: int) -> Iterator[pl.DataFrame]:
    return batched_frames(_tree_rows(root), batch_size, ROW_SCHEMA)
