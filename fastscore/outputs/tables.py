"""Output tables: the expected grid, scores, probes, summary and strata.

Every rate (``RATES``: one ``Rate`` each, with its label and its Polars expression) is
computed per (config, run) over a fixed task denominator, then averaged over runs
(groups keep a fixed row order, so the floats are reproducible); ``*_std`` is the
standard deviation over runs (0 for one run).  ``register_rate`` adds one to the
summary, the strata, the report and the CLI.
- ``sa_p``: share of tasks whose phenomenal law is equivalent (missing = failed);
- ``sa_m``: share of tasks with probes whose probes are all equivalent;
- ``cond_fail``: P(m_correct = false | p_equivalent = true), over tasks with probes and
  an equivalent law (null when a run has none);
- ``acc_id`` / ``acc_ood``: share of tasks with max relative error <= acc_tol;
- ``sa_p_exact`` / ``sa_m_exact``: ``sa_p`` / ``sa_m`` counting only ``proven``
  verdicts (``EXACT_RATES``: exact equivalence, beside the tolerant rates).
Numeric columns carried through from the sweep (wall time, tokens, cost) are the
solver's cost: the summary adds their median, total and total per correct task.
Structure scores, per run over the mechanism submissions that have them,
then averaged over runs like the rates: ``structure_graph_score`` and
``structure_ast_score`` (means; null when a run has no mechanism submission) and
``quantities_recovered`` (reference quantities recovered by value / reference
quantities, over the mechanisms that solved).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Literal, Mapping, NamedTuple, Sequence, get_args

import polars as pl

from fastscore.benchmarks import declared as _benchmarks
from fastscore.sweeps.read import SUBMISSION_COLUMNS

METRICS = ("max_rel_err", "r2", "rmse", "mae", "smape", "pearson_r")
"""The split metrics of a score row, as ``fastscore.kernels.METRICS`` names them (here
without loading Numba; a test checks that the two are equal)."""
class Outputs(NamedTuple):
    """The files of a scored output directory."""

    scores: str = "scores.parquet"
    probes: str = "probes.parquet"
    summary: str = "summary.parquet"
    strata: str = "strata.parquet"
    meta: str = "meta.json"
    published: str = "published.parquet"


OUTPUT = Outputs()

Status = Literal["ok", "parse_error", "solve_error", "eval_error", "timeout", "missing"]
STATUSES: tuple[Status, ...] = get_args(Status)
SubmissionKind = Literal["phenomenal", "mechanism"]
"""The ``kind`` of a score row: what was scored (null when nothing parsed)."""
STRATA = ("domain", "family", "n_mutations", "variant_only", "variant_class")
STRATUM_TITLES = {"domain": "By domain", "family": "By family", "n_mutations": "By number of mutations",
                  "variant_only": "Variants only (n_mutations > 0)",
                  "variant_class": "Original / one mutation / several mutations"}
STRATA += tuple(_benchmarks.STRATA)
STRATUM_TITLES.update(_benchmarks.STRATA)


@dataclass(frozen=True)
class Rate:
    """A rate of the summary and strata: ``expr`` aggregates the score rows of one
    (config, run) into one number; ``label`` heads its column in the report and the
    CLI.  The score columns it reads are the ones ``expr`` names (``inputs``)."""

    name: str
    label: str
    expr: pl.Expr
    higher_is_better: bool

    @property
    def inputs(self) -> tuple[str, ...]:
        """The score columns the rate reads."""
        return tuple(self.expr.meta.root_names())


LAW_TASKS = pl.col("domain").is_null() | ~pl.col("domain").is_in(list(_benchmarks.names()))
"""The cells of law tasks: the law rates leave a non-law benchmark's cells out (its
``domain`` is its name, ``fastscore.benchmarks``), so a mixed problem set's SA(P) is over its laws."""
HAS_PROBES = LAW_TASKS & (pl.col("n_probes") > 0)  # the cells whose task has probes (SA(M), 1-(M|P))
RATES: list[Rate] = [
    Rate("sa_p", "SA(P)", pl.col("p_equivalent").filter(LAW_TASKS).fill_null(False).mean(), True),
    Rate("sa_m", "SA(M)", pl.col("m_correct").filter(HAS_PROBES).fill_null(False).mean(), True),
    Rate("cond_fail", "1−(M|P)",
         (~pl.col("m_correct").fill_null(False)).filter(HAS_PROBES & pl.col("p_equivalent")).mean(), False),
    Rate("acc_id", "Acc ID", pl.col("id_acc").filter(LAW_TASKS).fill_null(False).mean(), True),
    Rate("acc_ood", "Acc OOD", pl.col("ood_acc").filter(LAW_TASKS).fill_null(False).mean(), True),
]
"""The rates, in column order (``register_rate`` adds one): the law rates, their exact
and published counterparts, then the non-law benchmarks' (end of module)."""


def shown_rates(frame: pl.DataFrame) -> list[Rate]:
    """The rates a printed summary shows: those with a value in ``frame``; and, when no
    non-law benchmark's rate has one (a law sweep: its table stays as it was), every
    law rate (the harness's, ``harness_*``, only with a value: they need its records).
    A benchmark-only sweep shows its own rates, not a column of empty law rates."""
    own = {rate[0] for rate in _benchmarks.rates()}

    def valued(rate: Rate) -> bool:
        return rate.name in frame.columns and frame[rate.name].null_count() < frame.height

    benchmarks = any(valued(r) for r in RATES if r.name in own)
    return [r for r in RATES if valued(r) or
            (not benchmarks and r.name not in own and not r.name.startswith("harness_"))]


def get_rate(name: str) -> Rate:
    """The rate called ``name``."""
    for candidate in RATES:
        if candidate.name == name:
            return candidate
    raise ValueError(f"unknown rate {name!r}; expected one of {', '.join(r.name for r in RATES)}")


OUTCOMES = {outcome: get_rate(name).label for outcome, name in
            (("p_equivalent", "sa_p"), ("m_correct", "sa_m"), ("id_acc", "acc_id"), ("ood_acc", "acc_ood"))}
"""Per-task binary outcomes (score columns) the report's tests compare, labelled as the rate of each."""

# ------------------------------------------------- structure scores
# Columns of a mechanism submission (null for phenomenal ones; fastscore.scoring.structure).
STRUCTURE_SCHEMA = {"structure_graph_score": pl.Float64, "structure_ast_score": pl.Float64,
                    "n_quantities_recovered": pl.Int64, "n_reference_quantities": pl.Int64,
                    "structure_note": pl.Utf8}
STRUCTURE_INPUTS = ("structure_graph_score", "structure_ast_score", "n_quantities_recovered",
                    "n_reference_quantities")
STRUCTURE_MEANS = ("structure_graph_score", "structure_ast_score", "quantities_recovered")


def _structure_means() -> list[pl.Expr]:
    """Per run, over the mechanism submissions that have the score: the mean graph and
    AST scores, and the share of reference quantities recovered by value (recovered
    over reference quantities, summed over the submissions that have values)."""
    valued = pl.col("n_quantities_recovered").is_not_null() & (pl.col("n_reference_quantities") > 0)
    reference = pl.col("n_reference_quantities").filter(valued).sum()
    return [pl.col("structure_graph_score").mean().alias("structure_graph_score"),
            pl.col("structure_ast_score").mean().alias("structure_ast_score"),
            pl.when(reference > 0).then(pl.col("n_quantities_recovered").filter(valued).sum() / reference)
            .alias("quantities_recovered")]

BUILTIN_SCORER_COLUMNS = {"structure": STRUCTURE_SCHEMA, "benchmarks": _benchmarks.columns()}
"""The columns of the built-in submission scorers (``fastscore.scoring.scorers``), by scorer
name: declared here, so reading and summarising tables loads no scorer (the
structure scorer loads Numba)."""

SCORE_SCHEMA = {
    "config": pl.Utf8, "run": pl.Int64, "task": pl.Utf8,
    "family": pl.Utf8, "domain": pl.Utf8, "n_mutations": pl.Int64,
    "status": pl.Utf8, "error": pl.Utf8, "kind": pl.Utf8,
    "p_equivalent": pl.Boolean, "p_verdict": pl.Utf8, "p_reason": pl.Utf8, "p_counterexample": pl.Utf8,
    "derived_formula": pl.Utf8,
    "id_acc": pl.Boolean, "ood_acc": pl.Boolean,
    **{f"{split}_{m}": pl.Float64 for split in ("id", "ood") for m in METRICS},
    "m_correct": pl.Boolean, "n_probes": pl.Int64, "n_probes_correct": pl.Int64, "n_probes_in_mechanism": pl.Int64,
    "n_probes_proven": pl.Int64,
    "complexity_mean": pl.Float64, "complexity_max": pl.Int64, "complexity_total": pl.Int64,
    "parse_solve_seconds": pl.Float64, "n_branches": pl.Int64, "task_warnings": pl.Utf8, "submission_sha": pl.Utf8,
    **{name: dtype for columns in BUILTIN_SCORER_COLUMNS.values() for name, dtype in columns.items()},
}
"""The score columns: the scorer's own, then those of the submission scorers (the
built-in ones, then those ``fastscore.scoring.scorers.register_scorer`` adds, in place)."""
PROBE_SCHEMA = {
    "config": pl.Utf8, "run": pl.Int64, "task": pl.Utf8, "probe": pl.Utf8, "answer": pl.Utf8,
    "probe_equivalent": pl.Boolean, "probe_verdict": pl.Utf8, "probe_reason": pl.Utf8,
    "probe_counterexample": pl.Utf8, "probe_in_mechanism": pl.Boolean, "probe_mechanism_quantity": pl.Utf8,
}


def register_rate(new: Rate) -> None:
    """Add a rate (after those there are) to the summary, strata, report and CLI."""
    taken = {r.name for r in RATES} | {*STRUCTURE_MEANS, "n_tasks", "n_runs"}
    if new.name in taken:
        raise ValueError(f"rate name {new.name!r} is taken")
    RATES.append(new)


EXACT_RATES = (
    Rate("sa_p_exact", "SA(P) exact", (pl.col("p_verdict") == "proven").filter(LAW_TASKS).fill_null(False).mean(),
         True),
    Rate("sa_m_exact", "SA(M) exact",
         (pl.col("n_probes_proven").fill_null(0) == pl.col("n_probes")).filter(HAS_PROBES).fill_null(False).mean(),
         True),
)
"""SA(P) and SA(M) counting only exact equivalence: a law only when ``proven``, a task's
probes only when every one is ``proven`` (beside the tolerant rates, where ``numeric``,
equal within ``rtol``, counts too)."""
for _rate in EXACT_RATES:
    register_rate(_rate)


def summary_inputs() -> tuple[str, ...]:
    """The score columns ``summary`` and ``strata`` read: the cell, its strata and
    status, every rate's inputs and the structure scores."""
    return tuple(dict.fromkeys(("config", "run", "task", "family", "domain", "n_mutations", "status", *_benchmarks.STRATA,
                                *(name for r in RATES for name in r.inputs), *STRUCTURE_INPUTS)))


def failed_row(row: Mapping, problem, *, status: Status, error: str) -> dict:
    """The row of a grid cell that was not scored (``missing``, or a submission whose
    worker failed): counted as failed; the sweep row's extra columns are kept."""
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
    n_probes = len(problem.probes)
    kept = {k: v for k, v in row.items() if k not in SUBMISSION_COLUMNS}
    return {**kept, "family": problem.family, "domain": problem.domain, "n_mutations": problem.n_mutations,
            **_benchmarks.task_fields_of(problem), "status": status, "error": error, "p_equivalent": False, "id_acc": False, "ood_acc": False,
            "m_correct": None if n_probes == 0 else False, "n_probes": n_probes, "n_probes_correct": 0,
            "n_probes_proven": 0}


def frame(rows: Iterable[Mapping], schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """Rows → DataFrame with the documented columns first, in schema order; extra
    columns (carried through from the sweep) keep their inferred types."""
    rows = list(rows)
    extras: dict[str, None] = {}
    for row in rows:
        extras.update((k, None) for k in row if k not in schema)
    df = pl.DataFrame(rows, schema_overrides=dict(schema), infer_schema_length=None) if rows else \
        pl.DataFrame(schema=dict(schema))
    for name, dtype in schema.items():
        if name not in df.columns:
            df = df.with_columns(pl.lit(None, dtype=dtype).alias(name))
    return df.select([*schema, *extras]).sort("config", "run", "task", *(["probe"] if "probe" in schema else []))


def _rates() -> list[pl.Expr]:
    return [*(r.expr.alias(r.name) for r in RATES), *_structure_means(), pl.len().alias("n_tasks")]


def _over_runs(per_run: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    aggregations = [pl.col("n_tasks").max().alias("n_tasks"), pl.len().alias("n_runs")]
    for name in (*(r.name for r in RATES), *STRUCTURE_MEANS):
        aggregations += [pl.col(name).mean().alias(name), pl.col(name).std(ddof=0).alias(f"{name}_std")]
    return per_run.sort(*keys, "run").group_by(*keys, maintain_order=True).agg(aggregations).sort(*keys)


def summary(scores: pl.DataFrame) -> pl.DataFrame:
    """Per config: rates over the fixed task denominator, averaged over runs, then the
    solver cost columns (see ``solver_cost``)."""
    per_run = scores.sort("config", "run", "task").group_by("config", "run", maintain_order=True).agg(_rates())
    rates = _over_runs(per_run, ["config"])
    cost = _wide_cost(scores)
    return rates if cost is None else rates.join(cost, on="config", how="left")


def _is_cost(name: str, dtype: pl.DataType) -> bool:
    return name not in SCORE_SCHEMA and dtype.is_numeric()


def cost_columns(scores: pl.DataFrame) -> list[str]:
    """Numeric columns carried through from the sweep (wall time, tokens, cost, ...)."""
    return [name for name, dtype in scores.schema.items() if _is_cost(name, dtype)]


def summary_columns(path: str | Path) -> pl.DataFrame:
    """The columns of a scores table (Parquet) that ``summary`` and ``strata`` read:
    ``summary_inputs()`` and the cost columns."""
    schema, inputs = pl.read_parquet_schema(path), summary_inputs()
    return pl.read_parquet(path, columns=[name for name, dtype in schema.items()
                                          if name in inputs or _is_cost(name, dtype)])


COST_SCHEMA = {"config": pl.Utf8, "column": pl.Utf8, "n": pl.UInt32, "median": pl.Float64,
               "total": pl.Float64, "n_correct": pl.UInt32, "per_correct": pl.Float64}


def solver_cost(scores: pl.DataFrame) -> pl.DataFrame:
    """Per config and cost column (long format): ``n`` (cells with a value), ``median``,
    ``total`` over every run, and ``per_correct`` = total / number of (run, task) cells
    with an equivalent law (null when there are none)."""
    frames = []
    correct = pl.col("p_equivalent").fill_null(False).sum()
    for column in cost_columns(scores):
        value = pl.col(column).cast(pl.Float64)
        frames.append(scores.sort("config", "run", "task").group_by("config", maintain_order=True).agg(
            pl.lit(column).alias("column"), value.count().alias("n"), value.median().alias("median"),
            value.sum().alias("total"), correct.alias("n_correct"),
        ).with_columns(pl.when(pl.col("n_correct") > 0).then(pl.col("total") / pl.col("n_correct"))
                       .alias("per_correct")))
    if not frames:
        return pl.DataFrame(schema=COST_SCHEMA)
    return pl.concat(frames, how="vertical_relaxed").select(list(COST_SCHEMA)).sort("column", "config")


def _wide_cost(scores: pl.DataFrame) -> pl.DataFrame | None:
    """``solver_cost`` as summary columns ``C_median``, ``C_total``, ``C_per_correct``."""
    cost = solver_cost(scores)
    if cost.is_empty():
        return None
    wide = None
    for (column,), group in cost.group_by("column", maintain_order=True):
        part = group.select("config", *(pl.col(k).alias(f"{column}_{k}") for k in ("median", "total", "per_correct")))
        wide = part if wide is None else wide.join(part, on="config", how="full", coalesce=True)
    return wide


def stratum_rows(strata: pl.DataFrame, name: str) -> pl.DataFrame:
    """The rows of one stratum of a ``strata`` table (none when the table has no strata)."""
    return strata.filter(pl.col("stratum") == name) if "stratum" in strata.columns else strata.clear()


def strata(scores: pl.DataFrame) -> pl.DataFrame:
    """The summary's rates by config × stratum (long format: ``stratum``, ``value``)."""
    frames = []
    from fastscore.outputs.published import variant_class
    with_variant = scores.with_columns(
        pl.when(pl.col("n_mutations") > 0).then(pl.lit("variant")).otherwise(None).alias("variant_only"),
        variant_class(pl.col("n_mutations")).alias("variant_class"))
    for stratum in STRATA:
        sub = with_variant.filter(pl.col(stratum).is_not_null())
        if sub.is_empty():
            continue
        sub = sub.with_columns(pl.col(stratum).cast(pl.Utf8).alias("value"))
        per_run = sub.sort("config", "run", "value", "task").group_by(
            "config", "run", "value", maintain_order=True).agg(_rates())
        frames.append(_over_runs(per_run, ["config", "value"]).with_columns(pl.lit(stratum).alias("stratum")))
    if not frames:
        return pl.DataFrame(schema={"config": pl.Utf8, "stratum": pl.Utf8, "value": pl.Utf8})
    out = pl.concat(frames, how="diagonal_relaxed")
    return out.select("config", "stratum", "value", pl.exclude("config", "stratum", "value")).sort(
        "config", "stratum", "value")


# ------------------------------------------------- published numeric rates (fastscore.outputs.published)
NUMERIC_SCHEMA = {"p_num": pl.Boolean, "m_num": pl.Boolean, "harness_p_num": pl.Boolean,
                  "harness_m_num": pl.Boolean}
"""P and M as MechBench's published tables count them, per attempt, from fastscore's
verdicts and from the harness's records (null: unknown, out of the denominator)."""
SCORE_SCHEMA.update(NUMERIC_SCHEMA)
for _name, _label in (("p_num", "P num"), ("m_num", "M num"), ("harness_p_num", "P num (harness)"),
                      ("harness_m_num", "M num (harness)")):
    register_rate(Rate(_name, _label, pl.col(_name).mean(), True))  # over the judged cells (nulls left out)
RATES += [Rate(*rate) for rate in _benchmarks.rates()]  # the non-law benchmarks' (``fastscore.benchmarks``)
