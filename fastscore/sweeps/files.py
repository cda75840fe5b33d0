"""Sweep files: Parquet, CSV and JSONL (or NDJSON) read as frames of raw rows, after
checking what can be checked up front (a readable file, the required columns); a bad
file raises ``SweepError`` with one line.  ``fastscore.sweeps.read`` registers them.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from fastscore.sweeps.rows import _TEXT_COLUMNS, COLUMNS, READ_ERROR, SweepError, _check_columns

_CSV_BLOCK = 4 << 20


def _parquet_frames(path: Path, batch_size: int) -> Iterator[pl.DataFrame]:
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as exc:
        raise SweepError(f"{path}: not a readable Parquet file: {exc}") from None
    _check_columns(parquet.schema_arrow.names, path)
    return _frames(parquet, parquet.iter_batches(batch_size=batch_size), (pa.ArrowException, OSError),  # a corrupt page
                   f"{path}: unreadable Parquet data")


def _frames(source, batches, errors: tuple, failure: str) -> Iterator[pl.DataFrame]:
    """The Arrow ``batches`` of an open ``source`` as frames, the source closed at the end;
    a read error in ``errors`` is a ``SweepError`` saying ``failure``."""
    with source:
        try:
            for batch in batches:
                yield pl.from_arrow(batch)
        except errors as exc:
            raise SweepError(f"{failure}: {exc}") from None


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
    return _frames(reader, reader, (pa.ArrowException,), f"{path}: unreadable CSV")


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


def _lines(path: Path) -> int:
    """Lines of a text file (the row count of a JSONL file without blank lines, one more
    than it for a CSV file without quoted line breaks), counted without decoding."""
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            count += chunk.count(b"\n")
            last = chunk[-1:]
    return count + (last != b"\n")
