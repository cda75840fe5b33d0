"""What the tables read of the built-in benchmarks without loading a scorer: their
score columns, summary rates, strata and pass@k outcomes.  Each benchmark module
declares them as module constants (``NAME``, ``COLUMNS``, ``RATES``, ``OUTCOMES``: an
outcome's optional fourth entry picks the rows it counts among the benchmark's)
and keeps its heavy imports (SymEngine, Numba) inside functions, so reading them is cheap.
A further benchmark is one more module named in ``MODULES``."""
from __future__ import annotations

import importlib
from collections.abc import Mapping

import polars as pl

MODULES = ("fastscore.benchmarks.grn", "fastscore.benchmarks.materials", "fastscore.benchmarks.trajectories")
STRATA = {"version": "By benchmark version", "difficulty": "By difficulty"}
"""Strata the benchmarks add (score columns of their rows)."""
SHARED_COLUMNS = {"version": pl.Utf8, "difficulty": pl.Utf8}


def benchmark_modules() -> list:
    """The benchmark modules, imported."""
    return [importlib.import_module(name) for name in MODULES]


def names() -> tuple[str, ...]:
    """The benchmarks' names: the ``domain`` of their problems, which no law problem's
    domain may be (the law rates leave these cells out)."""
    return tuple(module.NAME for module in benchmark_modules())


def columns() -> dict:
    """Every benchmark's score columns (the shared strata first)."""
    out = dict(SHARED_COLUMNS)
    for module in benchmark_modules():
        out.update(module.COLUMNS)
    return out


def rates() -> list[tuple]:
    """Every benchmark's rates as (name, label, expr, higher_is_better)."""
    return [rate for module in benchmark_modules() for rate in module.RATES]


def outcomes() -> list[tuple]:
    """Every benchmark's pass@k outcomes as (name, label, column, rows): its rows are its
    domain's, and of those the ones a fourth entry of the module's outcome picks."""
    return [(*outcome[:3], pl.col("domain") == module.NAME if len(outcome) == 3 else
             (pl.col("domain") == module.NAME) & outcome[3])
            for module in benchmark_modules() for outcome in module.OUTCOMES]


def task_fields_of(problem) -> dict:
    """The fields a benchmark's task gives every row of it, so that a row made without its
    scorer (``missing``) carries them too: the strata (``version``, ``difficulty`` from
    its parsed task) and what the module's optional ``task_fields(task)`` adds (the
    columns its rates select a task's rows by); {} for a law problem."""
    task = getattr(problem, "task", None)
    domain = getattr(problem, "domain", None)
    if domain not in names() or not isinstance(task, Mapping):
        return {}
    module = next(m for m in benchmark_modules() if m.NAME == domain)
    extra = getattr(module, "task_fields", None)
    return {**{name: task.get(name) for name in STRATA}, **(extra(task) if extra is not None else {})}
