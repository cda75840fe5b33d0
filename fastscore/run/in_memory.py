"""Sweeps and results held in memory, for the Python API (``fastscore.score_sweep``):
a sweep given as a Polars or pandas DataFrame or a list of dict rows is written to a
Parquet file in a temporary folder (and then read like any sweep file), and a run
given no ``out`` folder scores into a temporary one and returns its tables as frames."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from fastscore.outputs import tables

IN_MEMORY = "<in memory>"


def is_sweep_path(sweep) -> bool:
    """Whether ``sweep`` names a file or folder (rather than holding the rows)."""
    return isinstance(sweep, (str, Path))


def sweep_frame(sweep) -> pl.DataFrame:
    """The rows of an in-memory sweep as a Polars frame: a Polars frame as is, a pandas
    frame converted, a list (or other iterable) of dict rows read with every value's type
    (columns mixing numbers and text are kept as text, as a sweep file's would be)."""
    if isinstance(sweep, pl.DataFrame):
        return sweep
    if type(sweep).__module__.split(".")[0] == "pandas" and hasattr(sweep, "to_dict"):
        return pl.from_pandas(sweep)
    if isinstance(sweep, dict) or not hasattr(sweep, "__iter__"):
        raise TypeError(f"sweep must be a path, a DataFrame or a list of dict rows, got {type(sweep).__name__}")
    rows = list(sweep)
    if not all(isinstance(row, dict) for row in rows):
        raise TypeError("a sweep given as a list must hold dict rows (column name -> value)")
    names = list(dict.fromkeys(name for row in rows for name in row))
    columns = {name: [row.get(name) for row in rows] for name in names}
    return pl.DataFrame({name: _column(values) for name, values in columns.items()})


def _column(values: list) -> pl.Series:
    """One column: as Polars infers it when its values share a type, else as text."""
    try:
        return pl.Series(values, strict=True)
    except (TypeError, pl.exceptions.PolarsError):
        return pl.Series([None if v is None else v if isinstance(v, str) else json.dumps(v) if isinstance(v, (dict, list))
                          else str(v) for v in values], dtype=pl.String)


def write_sweep(sweep, folder: Path) -> Path:
    """An in-memory sweep written as ``folder/sweep.parquet``."""
    path = Path(folder) / "sweep.parquet"
    sweep_frame(sweep).write_parquet(path)
    return path


def read_tables(out: str | Path) -> dict:
    """The tables of a scored folder as frames (``scores``, ``probes``, ``summary``,
    ``strata``) and its ``meta`` as a dict."""
    out = Path(out)
    frames = {name: pl.read_parquet(out / getattr(tables.OUTPUT, name)) for name in ("scores", "probes", "summary", "strata")}
    return {**frames, "meta": json.loads((out / tables.OUTPUT.meta).read_text())}
