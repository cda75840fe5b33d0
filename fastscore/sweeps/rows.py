"""Normalised sweep rows, whatever format they come in: the columns of a normalised batch,
the conversion of cells (a list of equations, a map of probe answers) to text, the run
index of a run label, the normalisation of a frame of raw rows, and ``SweepError``.
The readers (``fastscore.sweeps.files``, ``fastscore.sweeps.tree`` and the other
modules' readers) yield raw frames; ``fastscore.sweeps.read`` normalises them.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator

import polars as pl

REQUIRED = ("config", "task")
READ_ERROR = "read_error"
"""The column saying why a row's submission files were not read (null when read): the
caller scores such a row as a ``parse_error`` with that reason."""
_RUN_PATTERN = r"^(?:[A-Za-z][A-Za-z_-]*)?([0-9]+)$"  # "0", "run-2", "run3", "r_4"
_RUN_RE = re.compile(_RUN_PATTERN)


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


ROW_SCHEMA = {  # the types of a directory reader's rows
    "config": pl.String, "run": pl.Int64, "task": pl.String,
                "phenomenal": pl.String, "mechanism": pl.String, "probes": pl.String, READ_ERROR: pl.String}


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
