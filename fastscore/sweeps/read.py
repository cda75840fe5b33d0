"""Sweeps (SPEC §5): read Parquet, CSV, JSONL or a directory tree as batches of normalised rows.

Every batch is a Polars frame with the columns `config` (str), `run` (Int64), `task` (str),
`phenomenal`, `mechanism`, `probes` (str or null), followed by every other column of the
input unchanged. Inputs are streamed, so memory stays bounded by the batch size.

A directory tree is read as untrusted input: only regular files inside the tree are
read (symbolic links, FIFOs and devices are not, nor are symlinked folders walked),
each at most ``MAX_FILE_BYTES``; a file that is not read gives its row the reason in
``READ_ERROR`` (the caller scores such a row as a ``parse_error``).  MechBench run
folders (``fastscore.sweeps.mechbench_runs``) are read the same way.
"""
from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from fastscore.support.registry import Builtins

__all__ = ["SweepError", "SweepReader", "REQUIRED", "COLUMNS", "SUBMISSION_COLUMNS", "READ_ERROR", "MAX_FILE_BYTES",
           "read_sweep", "register_sweep_reader", "sweep_readers", "sweep_digest", "run_index"]

REQUIRED = ("config", "task")
MAX_FILE_BYTES = 1 << 20  # a submission, probes or reply file larger than this is not read
READ_ERROR = "read_error"
"""The column saying why a row's submission files were not read (null when read): the
caller scores such a row as a ``parse_error`` with that reason."""
SUBMISSION_FILE, PROBES_FILE = "submission.txt", "probes.txt"
_RUN_PATTERN = r"^(?:[A-Za-z][A-Za-z_-]*)?([0-9]+)$"  # "0", "run-2", "run3", "r_4"
_RUN_RE = re.compile(_RUN_PATTERN)
_CSV_BLOCK = 4 << 20


class SweepError(ValueError):
    """An unusable sweep: missing path, unknown format, missing required column, no rows."""


def run_index(label: str) -> int | None:
    """The run index in a run label ('0', 'run-2', 'run3' -> 0, 2, 3), or None if it has none."""
    match = _RUN_RE.match(label.strip())
    return int(match.group(1)) if match else None


# --- cell values --------------------------------------------------------------------------

def _equations_text(value) -> str | None:
    """A phenomenal or mechanism cell as text: a list of equations is joined by newlines."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        value = "\n".join(str(item) for item in value if item is not None)
    text = value if isinstance(value, str) else json.dumps(value)
    return text if text.strip() else None


def _arrow_map(value):
    """An Arrow map cell (a list of ``{key, value}`` entries) as a dict; other values as they are."""
    if isinstance(value, list) and all(isinstance(item, dict) and set(item) == {"key", "value"} for item in value):
        return {item["key"]: item["value"] for item in value}
    return value


def _probes_text(value) -> str | None:
    """A probes cell as text: a mapping becomes a JSON object (sorted keys, null answers dropped)."""
    if value is None:
        return None
    value = _arrow_map(value)
    if isinstance(value, dict):
        answers = {str(name): answer for name, answer in value.items() if answer is not None}
        return json.dumps(answers, sort_keys=True, ensure_ascii=False) if answers else None
    text = value if isinstance(value, str) else json.dumps(value)
    return text if text.strip() else None


def _json_text(value) -> str | None:
    """A JSON-object cell (``probe_replies``, ``probe_columns``) as text; null values kept."""
    if value is None:
        return None
    value = _arrow_map(value)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return text if text.strip() else None


_TEXT_COLUMNS = {"phenomenal": _equations_text, "mechanism": _equations_text, "probes": _probes_text,
                 "probe_replies": _json_text, "probe_columns": _json_text, "submission": _json_text}
"""The submission columns of a normalised batch: ``probe_replies`` (probe -> a reply
``probe = expr``, scored by MechBench's rule) and ``probe_columns`` (probe -> extra
columns of its probe row) come from MechBench run folders (``fastscore.sweeps.mechbench_runs``) and may be
given in any format; ``submission`` carries a non-law benchmark's submission (a
graph, a candidate table, trajectories: ``fastscore.benchmarks``)."""
SUBMISSION_COLUMNS = tuple(_TEXT_COLUMNS)
"""The columns that carry the submission itself (scored, not carried through to the output)."""
COLUMNS = ("config", "run", "task", "phenomenal", "mechanism", "probes")
"""The columns of every normalised batch; then the other submission columns where the
input has them, then every other column of the input."""
NORMALISED = ("config", "run", "task", *SUBMISSION_COLUMNS)


# --- normalisation -------------------------------------------------------------------------

def _check_columns(names: Iterable[str], source) -> None:
    names = list(names)
    if duplicated := sorted({name for name in names if names.count(name) > 1}):
        raise SweepError(f"{source}: duplicate column name(s) {', '.join(map(repr, duplicated))}")
    if missing := [name for name in REQUIRED if name not in names]:
        raise SweepError(f"{source}: missing required column(s) {', '.join(missing)}")


def _labels(series: pl.Series, source) -> pl.Series:
    if series.dtype == pl.String:
        return series
    try:
        return series.cast(pl.String)
    except pl.exceptions.PolarsError:
        raise SweepError(f"{source}: column {series.name} must hold text, got {series.dtype}") from None


def _runs(series: pl.Series | None, height: int, source) -> pl.Series:
    if series is None or series.dtype == pl.Null:
        return pl.Series("run", [0] * height, dtype=pl.Int64)
    if series.dtype == pl.String:
        runs = series.str.strip_chars().str.extract(_RUN_PATTERN, 1).cast(pl.Int64, strict=False)
        bad = series.filter(series.is_not_null() & runs.is_null())
    elif series.dtype.is_integer():  # beyond Int64 (a UInt64 or Int128 column): not a run index
        runs = series.cast(pl.Int64, strict=False)
        bad = series.filter(series.is_not_null() & runs.is_null())
    elif series.dtype.is_float():
        runs = series.cast(pl.Int64, strict=False)
        bad = series.filter(series.is_not_null() & (runs.is_null() | (runs.cast(pl.Float64) != series)))
    else:
        raise SweepError(f"{source}: column run must hold integers, got {series.dtype}")
    if bad.len():
        raise SweepError(f"{source}: column run holds {bad[0]!r}, not a run index")
    return runs.fill_null(0).alias("run")


def _texts(frame: pl.DataFrame, name: str, convert: Callable) -> pl.Series:
    if name not in frame.columns:
        return pl.Series(name, [None] * frame.height, dtype=pl.String)
    series = frame[name]
    if series.dtype == pl.String:  # blank text counts as absent
        return pl.select(pl.when(series.str.strip_chars() != "").then(series)).to_series().alias(name)
    return pl.Series(name, [convert(value) for value in series.to_list()], dtype=pl.String)


def _normalise(frame: pl.DataFrame, source) -> pl.DataFrame:
    """Give a frame of sweep rows the normalised columns, then its other columns unchanged."""
    _check_columns(frame.columns, source)
    columns = [
        _labels(frame["config"], source),
        _runs(frame["run"] if "run" in frame.columns else None, frame.height, source),
        _labels(frame["task"], source),
        *(_texts(frame, name, convert) for name, convert in _TEXT_COLUMNS.items()
          if name in COLUMNS or name in frame.columns),
    ]
    return pl.DataFrame([*columns, *(frame[name] for name in frame.columns if name not in NORMALISED)])


# --- readers: each returns an iterator of raw frames, after checking what it can up front ---

def _parquet_frames(path: Path, batch_size: int) -> Iterator[pl.DataFrame]:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise SweepError(f"{path}: not a readable Parquet file: {exc}") from None
    _check_columns(parquet.schema_arrow.names, path)

    def frames():
        with parquet:
            try:
                for batch in parquet.iter_batches(batch_size=batch_size):
                    yield pl.from_arrow(batch)
            except (pa.ArrowException, OSError) as exc:  # a corrupt page
                raise SweepError(f"{path}: unreadable Parquet data: {exc}") from None
    return frames()


def _open_csv(path: Path, column_types: dict) -> pa_csv.CSVStreamingReader:
    return pa_csv.open_csv(
        path,
        read_options=pa_csv.ReadOptions(block_size=_CSV_BLOCK),
        parse_options=pa_csv.ParseOptions(newlines_in_values=True),  # mechanisms span lines
        convert_options=pa_csv.ConvertOptions(column_types=column_types, strings_can_be_null=True),
    )


def _odd_quotes(path: Path) -> bool:
    """Whether the file holds an odd number of '"': a quoted field is never closed, and
    the reader would take every record after it into that field."""
    count = 0
    with open(path, "rb") as handle:
        while chunk := handle.read(_CSV_BLOCK):
            count += chunk.count(b'"')
    return count % 2 == 1


def _csv_frames(path: Path, batch_size: int) -> Iterator[pl.DataFrame]:
    if path.stat().st_size == 0:
        raise SweepError(f"{path}: empty sweep (no header, no rows)")
    if _odd_quotes(path):
        raise SweepError(f"{path}: unterminated quoted field (an odd number of '\"' characters)")
    labels = dict.fromkeys(COLUMNS, pa.string())  # run too: 'run-2' is a label
    try:
        reader = _open_csv(path, labels)
        # a column empty in the first block would be typed null and fail later: read it as text
        empty = {field.name: pa.string() for field in reader.schema if pa.types.is_null(field.type)}
        if empty:
            reader.close()
            reader = _open_csv(path, labels | empty)
    except (pa.ArrowException, OSError) as exc:
        raise SweepError(f"{path}: not a readable CSV file: {exc}") from None
    _check_columns(reader.schema.names, path)

    def frames():
        with reader:
            try:
                for batch in reader:
                    yield pl.from_arrow(batch)
            except pa.ArrowException as exc:
                raise SweepError(f"{path}: unreadable CSV: {exc}") from None
    return frames()


def _has_surrogate(value) -> bool:
    """Whether a JSON value holds a string with a lone surrogate (JSON escapes allow one)."""
    if isinstance(value, str):
        return not value.isascii() and any("\ud800" <= char <= "\udfff" for char in value)
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return False


def _jsonl_frames(path: Path, batch_size: int) -> Iterator[pl.DataFrame]:
    def row(line: str, number: int) -> dict:
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SweepError(f"{path}:{number}: invalid JSON: {exc.msg}") from None
        except RecursionError:
            raise SweepError(f"{path}:{number}: JSON nested too deeply") from None
        if not isinstance(value, dict):
            raise SweepError(f"{path}:{number}: expected a JSON object, got {type(value).__name__}")
        for name in ("config", "task", "run"):
            cell = value.get(name)
            if isinstance(cell, (list, dict)) or (name == "run" and isinstance(cell, int)
                                                  and not -2**63 <= cell < 2**63):
                raise SweepError(f"{path}:{number}: column {name} holds {_shown(cell)}, "
                                 f"not {'a run index' if name == 'run' else 'text'}")
        for name, convert in _TEXT_COLUMNS.items():
            if name in value:
                value[name] = convert(value[name])
        for name, cell in list(value.items()):
            if _has_surrogate(cell):  # "\ud800": text no table (nor UTF-8) can hold
                if name in ("config", "run", "task") or _has_surrogate(name):
                    raise SweepError(f"{path}:{number}: column {_shown(name)} is not valid Unicode "
                                     "(a lone surrogate such as \\ud800)")
                value[name] = None
                value.setdefault(READ_ERROR, f"line {number}: column {_shown(name)} is not valid Unicode "
                                             "(a lone surrogate such as \\ud800)")
        return value

    def frame(rows: list[dict], number: int) -> pl.DataFrame:
        try:
            return pl.from_dicts(rows, infer_schema_length=None, strict=False)
        except pl.exceptions.PolarsError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SweepError(f"{path}: rows up to line {number} do not form a table: {first}") from None

    def frames():
        rows: list[dict] = []
        number = 0
        with open(path, encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if line.strip():
                    rows.append(row(line, number))
                if len(rows) == batch_size:
                    yield frame(rows, number)
                    rows = []
        if rows:
            yield frame(rows, number)
    return frames()


def _shown(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


ROW_SCHEMA = {  # the types of a directory reader's rows
    "config": pl.String, "run": pl.Int64, "task": pl.String,
                "phenomenal": pl.String, "mechanism": pl.String, "probes": pl.String, READ_ERROR: pl.String}


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


def batched_frames(rows: Iterable[dict], batch_size: int, schema) -> Iterator[pl.DataFrame]:
    """Rows as frames of ``batch_size`` rows (the last one shorter) with ``schema``: a
    reader that yields rows one by one (a tree of files) uses it."""
    batch: list[dict] = []
    for row in rows:
        batch.append(row)
        if len(batch) == batch_size:
            yield pl.DataFrame(batch, schema=schema)
            batch = []
    if batch:
        yield pl.DataFrame(batch, schema=schema)


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


def _lines(path: Path) -> int:
    """Lines of a text file (the row count of a JSONL file without blank lines, one more
    than it for a CSV file without quoted line breaks), counted without decoding."""
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")


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
