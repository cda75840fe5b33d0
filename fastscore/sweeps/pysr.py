"""PySR's hall-of-fame files as a sweep (a reader registered with
``fastscore.sweeps.read.register_sweep_reader``).

Layout: ``SWEEP/<config>/<run>/<task>/hall_of_fame*.csv``: one PySR search per task
folder (the run folder's name gives the run index, as in a ``<config>/<run>/<task>/``
tree: ``0``, ``run-2``, ``run3``; the task id is the folder's path below the run
folder).  A file has PySR's columns ``Complexity``, ``Loss`` (``MSE`` in older
versions) and ``Equation``, comma- or ``|``-separated; when a folder holds several
hall-of-fame files, the last by name is read (PySR's dated names sort by time).

Each equation is a row: its variables ``x0, x1, ...`` are the task's data columns in
order (``fastscore.problems.mechbench.data_columns``: inputs and auxiliary inputs as declared),
its law is ``<target> = <equation>``, and it carries ``pysr_complexity``,
``pysr_loss``, ``pysr_score`` (PySR's: the negated slope of log(loss) over
complexity from the next simpler equation) and ``pysr_best``: the equation PySR
itself returns (``model_selection="best"``: the highest score among the equations
whose loss is at most 1.5 times the least).  Rows of config ``<config>@c<complexity>``
hold every equation (a level of the Pareto front per config); the best one is also the
row of config ``<config>``, so that ``<config>`` scores what PySR would answer.

An equation is text for fastscore's own parser (never evaluated here); PySR's
operators with an exact meaning (``square``, ``cube``, ``inv``, ``neg``, ``sign``,
``relu``, ``log1p``) are in the grammar (``fastscore.text.functions``).  A file that
cannot be read is one row of config ``<config>`` with the reason (scored as a
``parse_error``).
"""
from __future__ import annotations

import csv
import math
import os
import re
from pathlib import Path
from typing import Iterator, Mapping

import polars as pl

from fastscore.sweeps.files import _lines
from fastscore.sweeps.read import TREE, SweepReader, register_sweep_reader
from fastscore.sweeps.rows import READ_ERROR, ROW_SCHEMA, SweepError, run_index
from fastscore.sweeps.tree import _read_text, _Unread

HALL_OF_FAME = re.compile(r"^hall_of_fame.*\.csv$")
SELECTION_FACTOR = 1.5  # PySR's "best": loss at most 1.5 times the least
PYSR_SCHEMA = {**ROW_SCHEMA, "pysr_complexity": pl.Int64, "pysr_loss": pl.Float64, "pysr_score": pl.Float64,
               "pysr_best": pl.Boolean}
_VARIABLE = re.compile(r"(?<![\w.])x(0|[1-9][0-9]*)(?![\w.])")


def _files(root: Path) -> Iterator[tuple[str, int, str, str, str]]:
    """(config, run, task, folder, file name) of each task folder with a hall of fame."""
    for config_dir in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for run_dir in sorted(p for p in config_dir.iterdir() if p.is_dir() and not p.name.startswith(".")):
            run = run_index(run_dir.name)
            if run is None:
                raise SweepError(f"{run_dir}: run folder name has no run index (expected e.g. 0, run-2, run3)")
            for folder, subfolders, names in os.walk(run_dir):
                subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
                found = sorted(name for name in names if HALL_OF_FAME.match(name))
                task = os.path.relpath(folder, run_dir)
                if found and task != os.curdir:
                    yield config_dir.name, run, task.replace(os.sep, "/"), folder, found[-1]


def is_pysr_tree(path: Path) -> bool:
    """Whether ``path`` is a folder with a hall-of-fame file three or more levels down."""
    return path.is_dir() and next(_hall_of_fame_paths(path), None) is not None


def _hall_of_fame_paths(root: Path) -> Iterator[Path]:
    return (p for p in root.glob("*/*/**/hall_of_fame*.csv") if p.is_file())


def read_hall_of_fame(text: str) -> list[dict]:
    """The equations of a hall-of-fame file's text, simplest first: ``complexity``,
    ``loss``, ``equation``, with PySR's ``score`` and ``best`` (see module doc).
    Raises ValueError (one line) when a column or value is missing or malformed."""
    lines = text.splitlines()
    if not lines:
        raise ValueError("the hall-of-fame file is empty")
    reader = csv.DictReader(lines, delimiter="|" if "|" in lines[0] and "," not in lines[0] else ",")
    fields = {name.strip(): name for name in reader.fieldnames or ()}
    loss_field = fields.get("Loss") or fields.get("MSE")
    if "Complexity" not in fields or "Equation" not in fields or loss_field is None:
        raise ValueError(f"expected columns Complexity, Loss and Equation, found {', '.join(fields) or 'none'}")
    rows = []
    for number, record in enumerate(reader, start=2):
        try:
            complexity = int(record[fields["Complexity"]].strip())
            loss = float(record[loss_field].strip())
        except (TypeError, ValueError, AttributeError):
            raise ValueError(f"line {number}: complexity and loss must be numbers") from None
        equation = (record[fields["Equation"]] or "").strip()
        if math.isnan(loss) or loss < 0 or not equation:
            raise ValueError(f"line {number}: a loss must be a number >= 0 and an equation is needed")
        rows.append({"complexity": complexity, "loss": loss, "equation": equation})
    if not rows:
        raise ValueError("the hall-of-fame file has no equations")
    rows.sort(key=lambda row: row["complexity"])
    _score(rows)
    return rows


def _score(rows: list[dict]) -> None:
    """PySR's score of each equation (0 for the simplest; inf past a zero loss) and its
    choice under ``model_selection="best"``."""
    previous = None
    for row in rows:
        if previous is None or row["complexity"] == previous["complexity"]:
            row["score"] = 0.0
        elif row["loss"] <= 0:
            row["score"] = math.inf
        elif previous["loss"] <= 0:
            row["score"] = -math.inf
        else:
            row["score"] = -math.log(row["loss"] / previous["loss"]) / (row["complexity"] - previous["complexity"])
        previous = row
    threshold = SELECTION_FACTOR * min(row["loss"] for row in rows)
    eligible = [row for row in rows if row["loss"] <= threshold]
    best = max(eligible, key=lambda row: row["score"])  # the first of equal scores, as PySR's idxmax
    for row in rows:
        row["best"] = row is best


def law_text(equation: str, columns: list[str]) -> str:
    """``<target> = <equation>`` with ``x0, x1, ...`` named by ``columns`` (the target
    first, then the data columns PySR's X held); an ``x<k>`` past them is kept."""
    target, inputs = columns[0], columns[1:]

    def name(match: re.Match) -> str:
        index = int(match.group(1))
        return inputs[index] if index < len(inputs) else match.group(0)
    return f"{target} = {_VARIABLE.sub(name, equation)}"


def _rows(root: Path, problems: Mapping) -> Iterator[dict]:
    from fastscore.problems.mechbench import data_columns
    for config, run, task, folder, name in _files(root):
        cell = {"config": config, "run": run, "task": task, "mechanism": None, "probes": None}
        try:
            equations = read_hall_of_fame(_read_text(folder, name, [name]) or "")
        except (_Unread, ValueError) as error:
            yield {**cell, "phenomenal": None, READ_ERROR: f"{name}: {error}"}
            continue
        problem = problems.get(task)
        columns = data_columns(problem) if problem is not None else ["y"]
        for row in equations:
            values = {"phenomenal": law_text(row["equation"], columns), READ_ERROR: None,
                      "pysr_complexity": row["complexity"], "pysr_loss": row["loss"], "pysr_score": row["score"],
                      "pysr_best": row["best"]}
            if row["best"]:
                yield {**cell, **values}
            yield {**cell, **values, "config": f"{config}@c{row['complexity']}"}


def _frames(root: Path, batch_size: int, options: Mapping) -> Iterator[pl.DataFrame]:
    problems = options.get("problems")
    if problems is None:
        raise SweepError(f"{root}: PySR hall-of-fame files need the problem set, whose data columns "
                         "name x0, x1, ... (read_sweep(path, problems={task id: Problem}))")
    rows: list[dict] = []
    for row in _rows(root, problems):
        rows.append(row)
        if len(rows) >= batch_size:
            yield pl.DataFrame(rows, schema=PYSR_SCHEMA)
            rows = []
    if rows:
        yield pl.DataFrame(rows, schema=PYSR_SCHEMA)


def _approximate_rows(root: Path) -> int:
    """Two rows per equation line at most (every equation, and the best again)."""
    return sum(_lines(path) for path in _hall_of_fame_paths(root))


register_sweep_reader(SweepReader("PySR hall-of-fame files", is_pysr_tree, _frames, rows=_approximate_rows),
                      before=TREE)
