"""Sweeps: read Parquet, CSV, JSONL or a directory tree as batches of normalised rows.

Every batch is a Polars frame with the columns `config` (str), `run` (Int64), `task` (str),
`phenomenal`, `mechanism`, `probes` (str or null), followed by every other column of the
input unchanged. Inputs are streamed, so memory stays bounded by the batch size.

This module owns the reader registry (``SweepReader``, ``register_sweep_reader``), the
streaming of a sweep through it (``read_sweep``), and the digests and row estimate of a
sweep.  The rows and their normalisation are ``fastscore.sweeps.rows``; the file
formats ``fastscore.sweeps.files`` (Parquet, CSV, JSONL) and ``fastscore.sweeps.tree``
(a directory tree, read as untrusted input).
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

from fastscore.support.registry import Builtins
from fastscore.sweeps.files import _csv_frames, _jsonl_frames, _lines, _parquet_frames
from fastscore.sweeps.rows import COLUMNS, READ_ERROR, REQUIRED, SUBMISSION_COLUMNS, SweepError, _normalise, run_index
from fastscore.sweeps.tree import MAX_FILE_BYTES, SUBMISSION_FILE, _tree_frames

__all__ = ["SweepError", "SweepReader", "REQUIRED", "COLUMNS", "SUBMISSION_COLUMNS", "READ_ERROR", "MAX_FILE_BYTES",
           "read_sweep", "register_sweep_reader", "sweep_readers", "sweep_digest", "run_index"]


def _rebatch(frames: Iterable[pl.DataFrame], size: int) -> Iterator[pl.DataFrame]:
    """Regroup frames into frames of exactly `size` rows (the last may be shorter)."""
    pending: list[pl.DataFrame] = []
    count = 0
    for frame in frames:
        while frame.height:
            take = min(size - count, frame.height)
            pending.append(frame.slice(0, take))
            frame, count = frame.slice(take), count + take
            if count == size:
                yield pl.concat(pending, how="vertical_relaxed")
                pending, count = [], 0
    if pending:
        yield pl.concat(pending, how="vertical_relaxed")


def _batches(frames: Iterator[pl.DataFrame], batch_size: int, source: Path) -> Iterator[pl.DataFrame]:
    rows = 0
    for batch in _rebatch((_normalise(frame, source) for frame in frames), batch_size):
        rows += batch.height
        yield batch
    if rows == 0:
        raise SweepError(f"{source}: empty sweep (no submissions)")


def read_sweep(path: str | Path, *, batch_size: int = 50_000, **options) -> Iterator[pl.DataFrame]:
    """Stream a sweep as normalised frames of at most `batch_size` rows, read by the first
    registered reader that accepts the path (`sweep_readers`): .parquet, .csv,
    .jsonl/.ndjson, MechBench run folders SWEEP/<exp_name>/<task_name>/ (``options``:
    ``experiments``, a ``fastscore.sweeps.mechbench_runs.ExperimentNames``), or a
    SWEEP/<config>/<run>/<task>/ tree.

    The path, format and (for Parquet and CSV) the required columns are checked on the call;
    other problems raise SweepError while iterating.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    path = Path(path)
    if not path.exists():
        raise SweepError(f"{path}: sweep not found")
    readers = sweep_readers()
    reader = next((r for r in readers if r.accepts(path)), None)
    if reader is None:
        raise SweepError(f"{path}: unknown sweep format '{path.suffix}'; expected "
                         f"{', '.join(r.name for r in readers)}")
    return _batches(reader.frames(path, batch_size, options), batch_size, path)


@dataclass(frozen=True)
class SweepReader:
    """A sweep format (an extension point: `register_sweep_reader`).

    ``accepts(path)``: whether this reader reads the path (a file or a directory);
    ``frames(path, batch_size, options)``: the sweep as Polars frames of raw rows (any
    size; `read_sweep` normalises and rebatches them), which must hold ``config`` and
    ``task``; ``options`` are the keyword options of `read_sweep` (a reader ignores the
    ones it does not know); a bad file raises `SweepError` (one line); ``rows(path)``
    (optional): about how many rows the sweep holds, without reading it (for the
    ``auto`` executor's choice and the progress bar's total; else a file's size / 200, a
    tree's submission files)."""

    name: str
    accepts: Callable[[Path], bool]
    frames: Callable[[Path, int, Mapping], Iterator[pl.DataFrame]]
    rows: Callable[[Path], int] | None = None


TREE = "a <config>/<run>/<task>/ directory tree"


def _suffix(*suffixes: str) -> Callable[[Path], bool]:
    return lambda path: path.is_file() and path.suffix.lower() in suffixes


SWEEP_READERS: list[SweepReader] = [
    SweepReader(".parquet", _suffix(".parquet"), lambda path, size, options: _parquet_frames(path, size),
                rows=lambda path: pq.ParquetFile(path).metadata.num_rows),
    SweepReader(".csv", _suffix(".csv"), lambda path, size, options: _csv_frames(path, size),
                rows=lambda path: max(0, _lines(path) - 1)),
    SweepReader(".jsonl/.ndjson", _suffix(".jsonl", ".ndjson"), lambda path, size, options: _jsonl_frames(path, size),
                rows=lambda path: _lines(path)),
    SweepReader(TREE, lambda path: path.is_dir(), lambda path, size, options: _tree_frames(path, size)),
]
"""The readers, asked in order; built-in readers of other modules are added on first use."""
_BUILTIN_READERS = Builtins("fastscore.sweeps.mechbench_runs", "fastscore.sweeps.results", "fastscore.sweeps.pysr")


def register_sweep_reader(reader: SweepReader, *, before: str | None = None) -> None:
    """Add a sweep reader, asked before the reader named ``before``, else before all."""
    names = [r.name for r in SWEEP_READERS]
    SWEEP_READERS.insert(names.index(before) if before in names else 0, reader)


def sweep_readers() -> list[SweepReader]:
    """The registered readers, the built-in ones included."""
    _BUILTIN_READERS.load()
    return SWEEP_READERS


def sweep_digest(path: str | Path) -> str:
    """SHA-256 of a sweep: a file's bytes, or a directory's sorted relative paths with their bytes."""
    path = Path(path)
    if not path.exists():
        raise SweepError(f"{path}: sweep not found")
    digest = hashlib.sha256()
    if path.is_file():
        files = [(None, str(path))]
    else:
        files = sorted((os.path.relpath(os.path.join(folder, name), path).replace(os.sep, "/"),
                        os.path.join(folder, name))
                       for folder, _, names in os.walk(path) for name in names)
    for relative, file in files:
        if relative is not None and not stat.S_ISREG(os.lstat(file).st_mode):
            # a link, FIFO or device is never opened: its name and kind (and a link's target text)
            name = relative.encode("utf-8")
            target = os.readlink(file).encode("utf-8", "replace") if os.path.islink(file) else b""
            digest.update(len(name).to_bytes(8, "little") + name + b"\0special\0" + target)
            continue
        with open(file, "rb") as handle:
            if relative is not None:  # length-prefixed, so path and content boundaries are unambiguous
                name = relative.encode("utf-8")
                size = os.fstat(handle.fileno()).st_size
                digest.update(len(name).to_bytes(8, "little") + name + size.to_bytes(8, "little"))
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()


def submission_sha(row: dict) -> str:
    """Digest of a sweep row: every column, so a changed extra column rescores too."""
    return hashlib.sha256(json.dumps(row, sort_keys=True, default=str).encode()).hexdigest()[:32]


def approximate_rows(sweep: str | Path) -> int:
    """About how many rows a sweep holds, without reading it: its reader's estimate
    (``SweepReader.rows``; a Parquet file's row count), else a file's size / 200, a
    directory's ``submission.txt`` files."""
    path = Path(sweep)
    reader = next((r for r in sweep_readers() if r.accepts(path)), None)
    if reader is not None and reader.rows is not None:
        return reader.rows(path)
    if path.is_file():
        return path.stat().st_size // 200
    return sum(1 for _ in path.rglob(SUBMISSION_FILE))
