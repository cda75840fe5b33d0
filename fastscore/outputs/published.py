"""MechBench's published numeric rates, P% and M% (``docs/results-layer.md``).

Per attempt (score columns, ``numeric_columns``):

- ``p_num``: fastscore's own evaluation of the law agrees with the reference on both the
  ID and the OOD split within the harness's numeric rule (max relative error <=
  ``NUMERIC_RTOL``, the harness's ``allclose`` rtol with atol 0; a non-finite prediction
  fails the split).  It is numeric, as the published P% is: fastscore's equivalence
  verdict (``p_equivalent``, SA(P)) is its own column and is not OR-ed in;
- ``m_num``: every planned probe of the task equivalent by fastscore's verdict
  (``m_correct``: a proof, or agreement at random points within fastscore's rtol);
  fastscore does not evaluate probe answers on the task data, so this is the nearest
  numeric measure it has;
- both null (unknown, out of "judged") for a cell with no submission (``missing``), one
  whose scoring timed out, whose record was not read (``record_error``) or whose task
  is not in the problem set (``no_task``); false for a submission fastscore cannot parse,
  solve or evaluate (a validation error makes P and M wrong); ``m_num`` null for a task
  without probes; both null for a non-law benchmark's row (``fastscore.benchmarks``),
  which ``published`` leaves out.

``harness_p_num`` / ``harness_m_num`` come from the records (``fastscore.sweeps.results.decide``).

``published`` pools a configuration's runs as the authors' tables do: per config,
domain (or ``all``) and variant class (``original``: no mutation, ``single``: one,
``multi``: several, or ``all``), for P and M from fastscore's and the harness's
verdicts: ``passed`` (true), ``judged`` (not null), ``planned`` (rows), ``missing``
(planned - judged), ``rate`` = passed / judged and ``confirmed_lower_bound`` = passed /
planned.  fastscore's side counts only the tasks of the problem set.
"""
from __future__ import annotations

import polars as pl

from fastscore.benchmarks import declared as _benchmarks

__all__ = ["NUMERIC_RTOL", "numeric_columns", "published", "variant_class", "PUBLISHED_SCHEMA"]

NUMERIC_RTOL = 1e-6
_FAILED = ("parse_error", "solve_error", "eval_error")
PUBLISHED_SCHEMA = {"config": pl.Utf8, "domain": pl.Utf8, "variant": pl.Utf8, "measure": pl.Utf8,
                    "source": pl.Utf8, "passed": pl.UInt32, "judged": pl.UInt32, "planned": pl.UInt32,
                    "missing": pl.UInt32, "rate": pl.Float64, "confirmed_lower_bound": pl.Float64,
                    "n_runs": pl.UInt32, "unique_tasks": pl.UInt32, "posthoc_runs": pl.UInt32}
SOURCES = {"fastscore": ("p_num", "m_num"), "harness": ("harness_p_num", "harness_m_num")}
_BENCHMARK_ROWS = pl.col("domain").is_in(list(_benchmarks.names())).fill_null(False)
"""A non-law benchmark's rows (GRN, LLEMA, DiscoverPhysics): no law, so no P or M."""


def numeric_columns(schema) -> list[pl.Expr]:
    """``p_num`` and ``m_num`` of every score row, from the columns ``schema`` has."""
    unknown = ~pl.col("status").is_in(["ok", *_FAILED]) | _BENCHMARK_ROWS
    if "record_error" in schema:
        unknown = unknown | pl.col("record_error").is_not_null()
    within = ((pl.col("id_max_rel_err") <= NUMERIC_RTOL) & (pl.col("ood_max_rel_err") <= NUMERIC_RTOL)).fill_null(False)
    p = pl.when(unknown).then(None).when(pl.col("status") == "ok").then(within).otherwise(False)
    m = (pl.when(unknown | (pl.col("n_probes").fill_null(0) == 0)).then(None)
         .when(pl.col("status") == "ok").then(pl.col("m_correct").fill_null(False)).otherwise(False))
    return [p.cast(pl.Boolean).alias("p_num"), m.cast(pl.Boolean).alias("m_num")]


def variant_class(n_mutations: pl.Expr) -> pl.Expr:
    """``original`` (0 mutations), ``single`` (1), ``multi`` (2 or more), else null."""
    return (pl.when(n_mutations == 0).then(pl.lit("original")).when(n_mutations == 1).then(pl.lit("single"))
            .when(n_mutations >= 2).then(pl.lit("multi")).otherwise(None))


def _counts(frame: pl.DataFrame, keys: list[str], column: str) -> pl.DataFrame:
    value = pl.col(column)
    posthoc = pl.col("harness_posthoc").fill_null(False).sum() if "harness_posthoc" in frame.columns \
        else pl.lit(0, dtype=pl.UInt32)
    return frame.group_by(keys, maintain_order=True).agg(
        (value == True).sum().cast(pl.UInt32).alias("passed"),  # noqa: E712 (null is not true)
        value.is_not_null().sum().cast(pl.UInt32).alias("judged"),
        pl.len().cast(pl.UInt32).alias("planned"),
        pl.col("run").n_unique().cast(pl.UInt32).alias("n_runs"),
        pl.col("task").n_unique().cast(pl.UInt32).alias("unique_tasks"),
        posthoc.cast(pl.UInt32).alias("posthoc_runs"))


def published(scores: pl.DataFrame) -> pl.DataFrame:
    """The pooled P and M counts (see module doc) of a scores table."""
    domain = pl.col("domain")
    if "results_domain" in scores.columns:
        domain = pl.coalesce(pl.col("domain"), pl.col("results_domain"))
    base = scores.filter(~_BENCHMARK_ROWS) if "domain" in scores.columns else scores
    base = base.with_columns(domain.cast(pl.Utf8).alias("_domain"),
                             variant_class(pl.col("n_mutations")).alias("_variant"))
    frames = []
    for source, (p_column, m_column) in SOURCES.items():
        if p_column not in base.columns:
            continue
        rows = base.filter(pl.col("status").ne_missing("no_task")) if source == "fastscore" else base
        if source == "harness" and rows.select(pl.col(p_column).is_not_null().any() |
                                               pl.col(m_column).is_not_null().any()).item() is not True:
            continue  # the sweep carried no harness records
        for measure, column in (("P", p_column), ("M", m_column)):
            for by_domain in (False, True):
                for by_variant in (False, True):
                    part = rows
                    if by_domain:
                        part = part.filter(pl.col("_domain").is_not_null())
                    if by_variant:
                        part = part.filter(pl.col("_variant").is_not_null())
                    part = part.with_columns(
                        (pl.col("_domain") if by_domain else pl.lit("all")).alias("domain_key"),
                        (pl.col("_variant") if by_variant else pl.lit("all")).alias("variant_key"))
                    counted = _counts(part.sort("config", "run", "task"), ["config", "domain_key", "variant_key"],
                                      column)
                    frames.append(counted.with_columns(pl.lit(measure).alias("measure"),
                                                       pl.lit(source).alias("source")))
    if not frames:
        return pl.DataFrame(schema=PUBLISHED_SCHEMA)
    out = pl.concat(frames, how="vertical_relaxed").rename({"domain_key": "domain", "variant_key": "variant"})
    out = out.with_columns(
        (pl.col("planned") - pl.col("judged")).alias("missing"),
        pl.when(pl.col("judged") > 0).then(pl.col("passed") / pl.col("judged")).alias("rate"),
        pl.when(pl.col("planned") > 0).then(pl.col("passed") / pl.col("planned")).alias("confirmed_lower_bound"))
    return out.select(list(PUBLISHED_SCHEMA)).cast(PUBLISHED_SCHEMA).sort(
        "source", "config", "domain", "variant", "measure")
