"""Unbiased pass@k of binary per-attempt outcomes (a table, columns of the summary and a
report figure).

For one task attempted ``n`` times (runs) by one configuration with ``c`` successes,
the unbiased estimator of the chance that at least one of ``k`` attempts drawn
without replacement succeeds is ``pass@k = 1 - C(n - c, k) / C(n, k)`` (1 when
``n - c < k``); a configuration's pass@k is its mean over tasks, for ``k = 1 .. n``.

Rules chosen here (documented in docs/benchmarks.md):
- the attempts of a task are its score rows over runs, ``missing`` cells included
  (a run that did not submit failed), so ``n`` is the number of runs;
- a task with ``n < k`` has no pass@k at that ``k``: a configuration whose tasks do
  not all reach ``k`` has a null pass@k there (``n_tasks_defined`` says how many did);
  averaging the others would change the denominator;
- an outcome (``PassOutcome``) names a boolean score column and the rows it counts
  over (SA(M): tasks with probes; a benchmark's outcome: its own tasks); a null
  outcome in such a row is a failure.

``register_outcome`` adds one (the benchmarks in ``fastscore.benchmarks`` do).
``passk_summary`` gives the summary its ``pass_at_k_<outcome>`` columns (a list per
configuration: pass@1, pass@2, ..., the same values as ``passk.parquet``).
This module loads neither SymEngine nor Numba.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from math import comb

import polars as pl

from fastscore.benchmarks import declared as _benchmarks

_LAW_TASKS = pl.col("domain").is_null() | ~pl.col("domain").is_in(list(_benchmarks.names()))
"""Law tasks' cells (as ``fastscore.outputs.tables.LAW_TASKS``; this module does not import the tables)."""
PASSK_FILE = "passk.parquet"
PASSK_SCHEMA = {"config": pl.Utf8, "outcome": pl.Utf8, "label": pl.Utf8, "k": pl.Int64,
                "pass_at_k": pl.Float64, "n_tasks": pl.Int64, "n_tasks_defined": pl.Int64}


@dataclass(frozen=True)
class PassOutcome:
    """A binary per-attempt outcome: ``column`` (a boolean score column), ``label``
    (its name in the report) and ``rows`` (which score rows are attempts of it)."""

    name: str
    label: str
    column: str
    rows: pl.Expr = pl.lit(True)


OUTCOMES: list[PassOutcome] = [
    PassOutcome("sa_p", "SA(P)", "p_equivalent", _LAW_TASKS),
    PassOutcome("sa_m", "SA(M)", "m_correct", _LAW_TASKS & (pl.col("n_probes") > 0)),
]
"""The outcomes pass@k is computed for, in table order (``register_outcome`` adds one)."""
OUTCOMES += [PassOutcome(*outcome) for outcome in _benchmarks.outcomes()]  # ``fastscore.benchmarks``


def register_outcome(outcome: PassOutcome) -> None:
    """Add an outcome (after those there are); its name must be new."""
    if any(o.name == outcome.name for o in OUTCOMES):
        raise ValueError(f"pass@k outcome {outcome.name!r} is taken")
    OUTCOMES.append(outcome)


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k of one task: ``1 - C(n-c, k) / C(n, k)``; None when ``n < k``
    (undefined) or ``k < 1``; ``c`` must be in ``[0, n]``."""
    if not 0 <= c <= n:
        raise ValueError(f"successes c={c} must be in [0, n={n}]")
    if k < 1 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def task_counts(scores: pl.DataFrame, outcome: PassOutcome) -> pl.DataFrame:
    """Per (config, task): ``n`` attempts (rows over runs) and ``c`` successes."""
    if outcome.column not in scores.columns:
        return pl.DataFrame(schema={"config": pl.Utf8, "task": pl.Utf8, "n": pl.Int64, "c": pl.Int64})
    if any(name not in scores.columns for name in outcome.rows.meta.root_names()):
        rows = scores.clear()  # the columns that pick its rows are absent: no row is an attempt
    else:
        rows = scores.filter(outcome.rows.fill_null(False))
    return rows.group_by("config", "task").agg(
        pl.len().cast(pl.Int64).alias("n"),
        pl.col(outcome.column).fill_null(False).cast(pl.Int64).sum().alias("c")).sort("config", "task")


def passk_table(scores: pl.DataFrame, outcomes: Iterable[PassOutcome] | None = None) -> pl.DataFrame:
    """Per config, outcome and ``k = 1 .. max n``: pass@k averaged over the tasks
    (null when a task has fewer than ``k`` attempts), ``n_tasks``, ``n_tasks_defined``."""
    out = []
    for outcome in OUTCOMES if outcomes is None else outcomes:
        counts = task_counts(scores, outcome)
        for (config,), group in counts.group_by("config", maintain_order=True):
            ns, cs = group["n"].to_list(), group["c"].to_list()
            for k in range(1, max(ns) + 1):
                values = [pass_at_k(n, c, k) for n, c in zip(ns, cs)]
                defined = [v for v in values if v is not None]
                mean = sum(defined) / len(defined) if len(defined) == len(values) else None
                out.append({"config": config, "outcome": outcome.name, "label": outcome.label, "k": k,
                            "pass_at_k": mean, "n_tasks": len(values), "n_tasks_defined": len(defined)})
    return pl.DataFrame(out, schema=PASSK_SCHEMA).sort("outcome", "config", "k")


SUMMARY_PREFIX = "pass_at_k_"
"""The summary's pass@k columns are ``pass_at_k_<outcome name>``."""


def passk_summary(passk: pl.DataFrame, configs: Iterable[str]) -> pl.DataFrame:
    """Per config of ``configs``: one ``pass_at_k_<outcome>`` column per outcome, the list
    of its pass@k for ``k = 1 .. n`` in order (index ``k - 1``; an undefined value is
    null); null where the config has no attempt of the outcome."""
    lists = {(config, outcome): group.sort("k")["pass_at_k"].to_list()
             for (config, outcome), group in passk.group_by("config", "outcome")}
    configs = list(configs)
    return pl.DataFrame({"config": configs, **{
        SUMMARY_PREFIX + outcome.name: pl.Series([lists.get((config, outcome.name)) for config in configs],
                                                 dtype=pl.List(pl.Float64)) for outcome in OUTCOMES}},
        schema_overrides={"config": pl.Utf8})


def passk_columns() -> tuple[str, ...]:
    """The score columns ``passk_table`` reads: the cell, every outcome's column and rows."""
    return tuple(dict.fromkeys(("config", "run", "task", *(name for o in OUTCOMES
                                                            for name in (o.column, *o.rows.meta.root_names())))))


def read_passk(scores_path) -> pl.DataFrame:
    """``passk_table`` of a scores Parquet file (only the columns it reads are loaded)."""
    present = pl.read_parquet_schema(scores_path)
    return passk_table(pl.read_parquet(scores_path, columns=[c for c in passk_columns() if c in present]))
