"""Statistics of the report (``fastscore.report.document``): paired tests between configurations
on task-level outcomes (Wilcoxon signed-rank, McNemar's exact test, Cochran's Q, with
Holm's correction) and Kruskal–Wallis across domains.  A task-level outcome is a
binary score column averaged over runs, or its majority over runs (``task_outcomes``).
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import polars as pl
from scipy import stats

from fastscore.outputs import passk as _passk
from fastscore.outputs.tables import HAS_PROBES, LAW_TASKS
from fastscore.outputs.tables import OUTCOMES as LAW_OUTCOMES

EXACT_WILCOXON_MAX = 50


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values, in input order: the i-th smallest of m
    p-values becomes max over j <= i of min(1, (m - j + 1) p_(j)). NaNs stay NaN and
    do not count in m."""
    p = np.asarray(pvalues, dtype=float)
    adjusted = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = (order.size - np.arange(order.size)) * p[order]
    adjusted[order] = np.minimum(1.0, np.maximum.accumulate(scaled))
    return adjusted


def _paired(a, b) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired samples must be two 1-d arrays of one length, got {a.shape} and {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    return a[keep], b[keep]


def wilcoxon_signed_rank(a, b) -> float:
    """Two-sided p-value of the paired Wilcoxon signed-rank test of ``a`` against ``b``
    (pairs with a NaN dropped; zero differences dropped; 1 when all differences are
    zero). Exact when at most 50 non-zero differences without ties in their sizes,
    normal approximation with tie correction otherwise."""
    a, b = _paired(a, b)
    nonzero = (a - b)[a != b]
    if nonzero.size == 0:
        return 1.0
    sizes = np.abs(nonzero)
    exact = nonzero.size <= EXACT_WILCOXON_MAX and np.unique(sizes).size == sizes.size
    return float(stats.wilcoxon(nonzero, zero_method="wilcox", method="exact" if exact else "asymptotic").pvalue)


def mcnemar_exact(a, b) -> float:
    """Exact two-sided McNemar p-value of paired binary outcomes: a binomial test of the
    discordant pairs (solved by ``a`` only vs by ``b`` only) against 1/2; 1 when there
    are none. Pairs with a NaN are dropped."""
    a, b = _paired(a, b)
    a, b = a != 0, b != 0
    only_a, only_b = int(np.sum(a & ~b)), int(np.sum(~a & b))
    if only_a + only_b == 0:
        return 1.0
    return float(stats.binomtest(only_a, only_a + only_b, 0.5).pvalue)


def cochran_q(outcomes) -> tuple[float, float]:
    """Cochran's Q of k >= 2 related binary outcomes (rows: tasks, columns:
    configurations; rows with a NaN dropped) and its chi-square(k - 1) p-value;
    (0, 1) when every task has the same outcome under every configuration."""
    x = np.asarray(outcomes, dtype=float)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"Cochran's Q needs a (tasks × configurations) array with >= 2 columns, got {x.shape}")
    solved = x[~np.isnan(x).any(axis=1)] != 0
    k = solved.shape[1]
    columns, rows = solved.sum(axis=0), solved.sum(axis=1)
    total = rows.sum()
    # Cochran (1950), Biometrika 37(3/4): 256-266:
    #   Q = (k - 1) [k Σ_j C_j² - N²] / [k N - Σ_i R_i²]
    # with C_j the column (configuration) totals, R_i the row (task) totals and N the
    # grand total; under H0 (equal success rates) Q ~ chi-square with k - 1 df.
    denominator = k * total - np.sum(rows ** 2)
    if denominator == 0:
        return 0.0, 1.0
    q = (k - 1) * (k * np.sum(columns ** 2) - total ** 2) / denominator
    return float(q), float(stats.chi2.sf(q, k - 1))


def kruskal_wallis(samples: Sequence) -> tuple[float, float]:
    """Kruskal–Wallis H and its p-value across independent samples (NaNs dropped, empty
    samples ignored); (0, 1) when all values are equal, (NaN, NaN) with fewer than two
    non-empty samples."""
    groups = [g[~np.isnan(g)] for g in (np.asarray(s, dtype=float).ravel() for s in samples)]
    groups = [g for g in groups if g.size]
    if len(groups) < 2:
        return float("nan"), float("nan")
    if np.ptp(np.concatenate(groups)) == 0:
        return 0.0, 1.0
    h, p = stats.kruskal(*groups)
    return float(h), float(p)


_LAW_ROWS = {"p_equivalent": LAW_TASKS, "m_correct": HAS_PROBES, "id_acc": LAW_TASKS, "ood_acc": LAW_TASKS}


def outcomes() -> dict[str, tuple[str, pl.Expr]]:
    """The task-level outcomes the tests compare, score column -> (label, the rows it counts
    over): the law outcomes (SA(P), SA(M) over tasks with probes, Acc ID / OOD; law tasks
    only), then every other pass@k outcome (``fastscore.outputs.passk``: the benchmarks'
    over their own tasks, and any registered one)."""
    out = {column: (label, _LAW_ROWS[column]) for column, label in LAW_OUTCOMES.items()}
    for outcome in _passk.OUTCOMES:
        out.setdefault(outcome.column, (outcome.label, outcome.rows))
    return out


def shown_outcomes(scores: pl.DataFrame) -> dict[str, str]:
    """column -> label of the outcomes a report of ``scores`` tests: the law outcomes when
    the scores have a law task (SA(M) too, with or without probes), the others where some
    row is an attempt of them."""
    laws = "domain" not in scores.columns or not scores.filter(LAW_TASKS.fill_null(True)).is_empty()
    return {column: label for column, (label, _) in outcomes().items()
            if (laws and column in LAW_OUTCOMES) or not task_outcomes(scores, column).is_empty()}


def task_outcomes(scores: pl.DataFrame, outcome: str) -> pl.DataFrame:
    """Per (config, task): ``domain``, ``rate`` (the binary ``outcome`` averaged over
    runs, null counting as failed) and ``majority`` (solved in more than half of the
    runs), over the rows the outcome counts (``outcomes``: SA(M) the law tasks with
    probes, a benchmark's outcome its own tasks); empty when the scores lack its columns."""
    known = outcomes()
    if outcome not in known:
        raise ValueError(f"unknown outcome {outcome!r}; expected one of {', '.join(known)}")
    _, selected = known[outcome]
    if outcome not in scores.columns or any(name not in scores.columns for name in selected.meta.root_names()):
        rows = scores.clear()
    else:
        rows = scores.filter(selected.fill_null(False))
    if outcome not in rows.columns:
        rows = rows.with_columns(pl.lit(None, dtype=pl.Boolean).alias(outcome))
    return rows.group_by("config", "task").agg(
        pl.col("domain").first(),
        pl.col(outcome).fill_null(False).cast(pl.Float64).mean().alias("rate"),
    ).with_columns((pl.col("rate") > 0.5).cast(pl.Float64).alias("majority")).sort("config", "task")


def _wide(outcomes: pl.DataFrame, value: str) -> tuple[list[str], np.ndarray]:
    """The sorted configs and the (tasks × configs) matrix of ``value`` (NaN where a
    config lacks the task)."""
    configs = sorted(outcomes["config"].unique().to_list())
    # pivoted on the config's position, so no config name can clash with the index column
    slots = [str(i) for i in range(len(configs))]
    slot = pl.col("config").replace_strict(configs, slots, return_dtype=pl.Utf8).alias("slot")
    wide = outcomes.with_columns(slot).pivot(on="slot", index="task", values=value)
    return configs, wide.select(slots).cast(pl.Float64).to_numpy() if wide.height else np.empty((0, len(configs)))


def paired_comparisons(scores: pl.DataFrame, *, outcome: str = "p_equivalent",
                       baseline: str | None = None) -> pl.DataFrame:
    """Every pair of configurations on the task-level ``outcome`` (tasks both have), or
    with a ``baseline`` each other configuration against it (``config_a``: the
    baseline): rates, the better config, Wilcoxon and McNemar p-values with their Holm
    adjustments (over the pairs of the table: k(k-1)/2, or k-1 against a baseline)."""
    outcomes = task_outcomes(scores, outcome)
    configs, rates = _wide(outcomes, "rate")
    _, majority = _wide(outcomes, "majority")
    if baseline is not None and baseline not in configs:
        raise ValueError(f"baseline {baseline!r} is not a configuration of the scores "
                         f"({', '.join(configs[:5])}{', ...' if len(configs) > 5 else ''})")
    pairs = (itertools.combinations(range(len(configs)), 2) if baseline is None else
             ((configs.index(baseline), j) for j in range(len(configs)) if configs[j] != baseline))
    rows = []
    for i, j in pairs:
        both = ~(np.isnan(rates[:, i]) | np.isnan(rates[:, j]))
        a, b = rates[both, i], rates[both, j]
        solved_a, solved_b = majority[both, i] != 0, majority[both, j] != 0
        rate_a, rate_b = (float(a.mean()), float(b.mean())) if a.size else (float("nan"),) * 2
        rows.append({
            "config_a": configs[i], "config_b": configs[j], "n_tasks": int(a.size), "rate_a": rate_a,
            "rate_b": rate_b, "better": configs[i] if rate_a > rate_b else configs[j] if rate_b > rate_a else "=",
            "wilcoxon_p": wilcoxon_signed_rank(a, b), "only_a": int(np.sum(solved_a & ~solved_b)),
            "only_b": int(np.sum(~solved_a & solved_b)), "mcnemar_p": mcnemar_exact(solved_a, solved_b),
        })
    schema = {"config_a": pl.Utf8, "config_b": pl.Utf8, "n_tasks": pl.Int64, "rate_a": pl.Float64,
              "rate_b": pl.Float64, "better": pl.Utf8, "wilcoxon_p": pl.Float64, "only_a": pl.Int64,
              "only_b": pl.Int64, "mcnemar_p": pl.Float64}
    table = pl.DataFrame(rows, schema=schema)
    return table.with_columns(
        pl.Series("wilcoxon_holm", holm(table["wilcoxon_p"].to_numpy()), dtype=pl.Float64),
        pl.Series("mcnemar_holm", holm(table["mcnemar_p"].to_numpy()), dtype=pl.Float64),
    ).select(*schema, "wilcoxon_holm", "mcnemar_holm")


def cochran_across(scores: pl.DataFrame, *, outcome: str = "p_equivalent") -> dict | None:
    """Cochran's Q across every configuration (majority outcomes on the tasks all of
    them have): ``q``, ``df``, ``p``, ``n_tasks``; None with fewer than 3 configs."""
    configs, matrix = _wide(task_outcomes(scores, outcome), "majority")
    if len(configs) < 3:
        return None
    matrix = matrix[~np.isnan(matrix).any(axis=1)]
    q, p = cochran_q(matrix) if matrix.shape[0] else (float("nan"), float("nan"))
    return {"q": q, "df": len(configs) - 1, "p": p, "n_tasks": matrix.shape[0]}


def domain_tests(scores: pl.DataFrame, *, outcome: str = "p_equivalent") -> pl.DataFrame:
    """Per configuration: Kruskal–Wallis across domains of the per-task ``outcome``
    averaged over runs (tasks without a domain left out): ``n_domains``, ``h``, ``p``."""
    outcomes = task_outcomes(scores, outcome).filter(pl.col("domain").is_not_null())
    rows = []
    for config in sorted(outcomes["config"].unique().to_list()):
        mine = outcomes.filter(pl.col("config") == config)
        samples = [group["rate"].to_numpy() for _, group in mine.group_by("domain")]
        h, p = kruskal_wallis(samples)
        rows.append({"config": config, "n_domains": len(samples), "h": h, "p": p})
    return pl.DataFrame(rows, schema={"config": pl.Utf8, "n_domains": pl.Int64, "h": pl.Float64, "p": pl.Float64})
