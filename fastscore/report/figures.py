"""The report's figures (``fastscore.report.document``): rates against the number of mutations
and accuracy by domain, one colour (and past 20 configurations a marker and a hatch)
per configuration, from the strata table.  A figure is sized to its content up to
``MAX_WIDTH``; error bars (± std over runs) are clipped to the [0, 1] of a rate."""
from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import polars as pl
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from fastscore.outputs.tables import get_rate, stratum_rows

_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_HATCHES = ("", "//", "..", "xx", "\\\\", "++", "oo", "--")
LEGEND_COLUMNS = 6
"""Legend entries per row, below the plots (the figure grows a row at a time)."""
MAX_WIDTH = 16.0
"""The widest a figure gets, in inches (1,760 px at the report's 110 dpi): past it, bars
get thinner and the panels of the domain figure are stacked."""
BAR_WIDTH = 0.12
"""Inches per bar that the domain figure asks for, up to ``MAX_WIDTH``."""


def _styles(configs: Sequence[str]) -> dict[str, dict]:
    """Per config: a colour (tab10, or tab20 for more configs), and past 20 configs a
    marker and a hatch too, so no two configs look alike."""
    from matplotlib import colormaps
    palette = colormaps["tab10"] if len(configs) <= 10 else colormaps["tab20"]
    return {config: {"color": palette(i % palette.N), "marker": _MARKERS[(i // palette.N) % len(_MARKERS)],
                     "hatch": _HATCHES[(i // palette.N) % len(_HATCHES)]} for i, config in enumerate(configs)}


LABEL_CHARS = 40
"""Longest legend label shown (a longer config name is cut, with an ellipsis)."""
_CHAR_INCHES, _ENTRY_INCHES, _ROW_INCHES = 0.075, 0.6, 0.3
"""Legend layout: width of a label character and of an entry's marker and padding,
height of a row (at the legend's font size)."""


def _label(config: str) -> str:
    """A config name on one line, at most ``LABEL_CHARS`` characters, with ``$``
    escaped, so matplotlib shows it as it is (a ``$`` pair would be parsed as mathtext:
    ``$\\frac{$`` failed with an empty error)."""
    text = " ".join(str(config).split())
    if len(text) > LABEL_CHARS:
        text = text[:LABEL_CHARS - 1] + "\u2026"
    return text.replace("$", r"\$")


def _columns(configs: Sequence[str], width: float) -> int:
    """Legend columns that fit ``width`` inches with the longest label."""
    longest = max((len(_label(c)) for c in configs), default=1)
    fit = int(width // (_ENTRY_INCHES + _CHAR_INCHES * longest))
    return max(1, min(len(configs), LEGEND_COLUMNS, fit))


def _legend(figure, handles: list, configs: Sequence[str]) -> None:
    """The legend of every config, below the plots: handles and labels are given
    explicitly, so labels starting with ``_`` are kept (matplotlib drops them when it
    collects the labels itself)."""
    figure.legend(handles, [_label(c) for c in configs], loc="outside lower center",
                  ncols=_columns(configs, figure.get_figwidth()))


def _height(base: float, configs: Sequence[str], width: float) -> float:
    """Figure height with room for the legend rows below the plots."""
    return base + _ROW_INCHES * -(-len(configs) // _columns(configs, width))


def clipped_errors(values: np.ndarray, spread: np.ndarray) -> np.ndarray:
    """Error bars of rates as (below, above) lengths: ``spread`` either side of
    ``values``, clipped to [0, 1] (a rate of 0.9 ± 0.2 draws from 0.7 to 1); 0 where the
    value or its spread is unknown."""
    values, spread = np.asarray(values, dtype=float), np.nan_to_num(np.asarray(spread, dtype=float))
    known = ~np.isnan(values)
    below = np.where(known, np.minimum(spread, np.clip(values, 0, 1)), 0.0)
    above = np.where(known, np.minimum(spread, 1 - np.clip(values, 0, 1)), 0.0)
    return np.vstack([below, above])


def _configs(rows: pl.DataFrame) -> tuple[list[str], dict[str, dict]]:
    """The configs of a stratum's rows, sorted, and their styles."""
    configs = sorted(rows["config"].unique().to_list())
    return configs, _styles(configs)


def _of_config(rows: pl.DataFrame, config: str, column: str, values: list) -> pl.DataFrame:
    """One config's rows at every value of ``column`` (nulls where it has none)."""
    return pl.DataFrame({column: values}).join(rows.filter(pl.col("config") == config), on=column, how="left")


def plot_mutations(strata: pl.DataFrame, path: Path) -> bool:
    """SA(P), SA(M) and 1−(M|P) against the number of mutations, one line per config
    (error bars: ± std over runs; configs offset slightly along x). False (nothing
    written) when there are no mutation counts."""
    rows = stratum_rows(strata, "n_mutations")
    rows = rows.with_columns(pl.col("value").cast(pl.Int64, strict=False).alias("x")).drop_nulls("x")
    if rows.is_empty():
        return False
    xs = sorted(rows["x"].unique().to_list())
    configs, styles = _configs(rows)
    jitter = 0.25 / len(configs)
    figure = Figure(figsize=(13, _height(4, configs, 13)), layout="constrained")
    handles = []
    for axes, rate in zip(figure.subplots(1, 3, sharex=True), ("sa_p", "sa_m", "cond_fail")):
        handles.clear()
        for i, config in enumerate(configs):
            mine = _of_config(rows, config, "x", xs)
            values = mine[rate].cast(pl.Float64).to_numpy()
            handles.append(axes.errorbar(np.asarray(xs) + (i - (len(configs) - 1) / 2) * jitter, values,
                                         yerr=clipped_errors(values, mine[f"{rate}_std"].cast(pl.Float64).to_numpy()),
                                         marker=styles[config]["marker"], capsize=3, color=styles[config]["color"]))
        axes.set_title(get_rate(rate).label + (" = P(M wrong | P right)" if rate == "cond_fail" else ""))
        axes.set_xlabel("number of mutations")
        axes.set_xticks(xs)
        axes.set_ylim(-0.05, 1.05)
        axes.grid(alpha=0.3)
    figure.axes[0].set_ylabel("rate (mean over runs)")
    _legend(figure, handles, configs)
    figure.savefig(path, dpi=110)
    return True


def plot_domain_accuracy(strata: pl.DataFrame, path: Path) -> bool:
    """Acc ID and Acc OOD by domain, grouped bars (one per config, ± std over runs).
    False (nothing written) when there are no domains."""
    rows = stratum_rows(strata, "domain")
    if rows.is_empty():
        return False
    domains = sorted(rows["value"].unique().to_list())
    configs, styles = _configs(rows)
    width = 0.8 / len(configs)
    positions = np.arange(len(domains))
    panel = max(4.0, BAR_WIDTH * len(domains) * len(configs) + 0.3 * len(domains))  # inches the bars ask for
    stacked = 2 * panel > MAX_WIDTH
    shape = (2, 1) if stacked else (1, 2)
    across = min(MAX_WIDTH, panel) if stacked else 2 * panel
    figure = Figure(figsize=(across, _height(7 if stacked else 4, configs, across)), layout="constrained")
    handles = []
    for axes, rate in zip(figure.subplots(*shape, sharey=True).ravel(), ("acc_id", "acc_ood")):
        handles.clear()
        for i, config in enumerate(configs):
            mine = _of_config(rows, config, "value", domains)
            values = mine[rate].cast(pl.Float64).fill_null(0.0).to_numpy()
            handles.append(axes.bar(positions + (i - (len(configs) - 1) / 2) * width, values, width,
                                    yerr=clipped_errors(values, mine[f"{rate}_std"].cast(pl.Float64).to_numpy()),
                                    color=styles[config]["color"], hatch=styles[config]["hatch"], capsize=2))
        axes.set_title(get_rate(rate).label)
        tilted = len(domains) > 4
        axes.set_xticks(positions, domains, rotation=30 if tilted else 0, ha="right" if tilted else "center")
        axes.set_ylim(0, 1.05)
        axes.grid(axis="y", alpha=0.3)
    for axes in figure.axes if stacked else figure.axes[:1]:
        axes.set_ylabel("share of tasks (mean over runs)")
    _legend(figure, handles, configs)
    figure.savefig(path, dpi=110)
    return True


def plot_passk(passk: pl.DataFrame, path: Path) -> bool:
    """pass@k against k, one panel per outcome (``fastscore.outputs.passk``), one line per
    config (k where pass@k is undefined is left out).  False (nothing written) when
    no outcome has a defined value."""
    rows = passk.drop_nulls(["pass_at_k", "config"])
    if rows.is_empty():
        return False
    outcomes = list(dict.fromkeys(rows["outcome"].to_list()))
    configs, styles = _configs(rows)
    across = max(5.0, 4.2 * len(outcomes))
    figure = Figure(figsize=(across, _height(3.6, configs, across)), layout="constrained")
    panels = figure.subplots(1, len(outcomes), sharey=True, squeeze=False)[0]
    handles: dict[str, object] = {}
    for axes, outcome in zip(panels, outcomes):
        mine = rows.filter(pl.col("outcome") == outcome)
        for config in configs:
            line = mine.filter(pl.col("config") == config).sort("k")
            if line.is_empty():
                continue
            handles[config], = axes.plot(line["k"].to_numpy(), line["pass_at_k"].to_numpy(),
                                          marker=styles[config]["marker"], color=styles[config]["color"])
        axes.set_title(f"pass@k: {mine['label'][0]}")
        axes.set_xlabel("k")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.set_ylim(-0.05, 1.05)
        axes.grid(alpha=0.3)
    panels[0].set_ylabel("pass@k (mean over tasks)")
    shown = [c for c in configs if c in handles]
    _legend(figure, [handles[c] for c in shown], shown)
    figure.savefig(path, dpi=110)
    return True
