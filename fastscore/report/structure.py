"""The report's structure section: the law-without-mechanism gap made visible.

Per configuration, the structure scores of mechanism submissions whose law is judged
right versus wrong (a table and a figure), and for a few tasks the reference graph
beside the most common wrong submitted graph (a submitted graph is wrong when its
graph score is below 1; submissions are grouped by ``fastscore.structure.graphs.fingerprint``,
i.e. up to renaming). The graphs need the problems and the sweep named in
``meta.json``; without them that part is skipped with a note.
"""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from fastscore.outputs.tables import OUTPUT
from fastscore.problems.formats import load_problems
from fastscore.sweeps.read import read_sweep

FIGURE = "structure_by_law.png"
GRAPH_FIGURE = "structure_graph_{}.png"
MAX_TASKS = 3
MAX_TEXTS = 500  # distinct submitted texts per task looked at for the most common wrong graph
_COLUMNS = ("config", "run", "task", "kind", "p_equivalent", "structure_graph_score", "structure_ast_score",
            "n_quantities_recovered", "n_reference_quantities")


def structure_section(document, directory: Path, out: Path) -> None:
    """Append the structure section to ``document`` (a ``fastscore.report.document`` document),
    writing its figures into ``out``."""
    for stale in [out / FIGURE, *out.glob(GRAPH_FIGURE.format("*"))]:
        stale.unlink(missing_ok=True)
    document.heading(2, "Structure recovery")
    scores = _mechanisms(directory / OUTPUT.scores)
    if scores is None or scores.is_empty():
        document.text("No mechanism submission with structure scores: no structure section.")
        return
    document.text(
        "Mechanism submissions only. Graph: dependency-graph similarity to the reference mechanism up to "
        "renaming internal quantities (1 − normalised graph edit distance); AST: formula-tree similarity of "
        "the paired equations, names and numbers ignored; recovered: reference internal quantities some "
        "submitted quantity equals by value, over the reference quantities (mechanisms that solve). "
        "Law right / wrong: `p_equivalent`. A right law with a low graph score is the law recovered "
        "without the mechanism.")
    table = gap_table(scores)
    document.table(["config", "law", "n", "graph mean", "graph median", "graph = 1", "AST mean", "recovered"],
                   [[row["config"], row["law"], str(row["n"]), _number(row["graph_mean"]),
                     _number(row["graph_median"]), _number(row["graph_exact"]), _number(row["ast_mean"]),
                     _number(row["recovered"])] for row in table.iter_rows(named=True)])
    plot_gap(scores, out / FIGURE)
    document.image(FIGURE, "Structure scores of mechanism submissions, law right versus wrong, per configuration")
    _graphs_part(document, directory, scores, out)


def _mechanisms(path: Path) -> pl.DataFrame | None:
    if not path.is_file():
        return None
    schema = pl.read_parquet_schema(path)
    if "structure_graph_score" not in schema:
        return None
    scores = pl.read_parquet(path, columns=[c for c in _COLUMNS if c in schema])
    return scores.filter(pl.col("structure_graph_score").is_not_null())


def gap_table(scores: pl.DataFrame) -> pl.DataFrame:
    """Per config and law (right/wrong): count, graph mean/median/share equal to 1,
    AST mean, and recovered / reference quantities (over the rows with values)."""
    valued = pl.col("n_quantities_recovered").is_not_null()
    reference = pl.col("n_reference_quantities").filter(valued).sum()
    return scores.with_columns(
        pl.when(pl.col("p_equivalent").fill_null(False)).then(pl.lit("right")).otherwise(pl.lit("wrong"))
        .alias("law")).group_by("config", "law").agg(
        pl.len().alias("n"), pl.col("structure_graph_score").mean().alias("graph_mean"),
        pl.col("structure_graph_score").median().alias("graph_median"),
        (pl.col("structure_graph_score") == 1.0).mean().alias("graph_exact"),
        pl.col("structure_ast_score").mean().alias("ast_mean"),
        pl.when(reference > 0).then(pl.col("n_quantities_recovered").filter(valued).sum() / reference)
        .alias("recovered")).sort("config", "law")


def plot_gap(scores: pl.DataFrame, path: Path) -> None:
    """Box plots (with the points) of the graph and AST scores per config, law right
    beside law wrong."""
    configs = sorted(scores["config"].unique().to_list())
    figure = Figure(figsize=(max(7.0, 1.6 * len(configs) + 3), 4), layout="constrained")
    rng = np.random.default_rng(0)
    colours = {"right": "#31a354", "wrong": "#de2d26"}
    for axes, column, title in zip(figure.subplots(1, 2, sharey=True), ("structure_graph_score", "structure_ast_score"),
                                   ("graph score", "AST score")):
        labelled = set()
        for i, config in enumerate(configs):
            for offset, law in ((-0.18, "right"), (0.18, "wrong")):
                mine = scores.filter((pl.col("config") == config)
                                     & (pl.col("p_equivalent").fill_null(False) == (law == "right")))[column]
                values = mine.to_numpy()
                if not values.size:
                    continue
                axes.boxplot([values], positions=[i + offset], widths=0.3, showfliers=False,
                             medianprops={"color": colours[law]})
                axes.scatter(i + offset + rng.uniform(-0.08, 0.08, values.size), values, s=8, alpha=0.5,
                             color=colours[law], label=None if law in labelled else f"law {law}")
                labelled.add(law)
        axes.set_xticks(range(len(configs)), configs, rotation=30 if len(configs) > 3 else 0,
                        ha="right" if len(configs) > 3 else "center")
        axes.set_title(title)
        axes.set_ylim(-0.05, 1.05)
        axes.grid(axis="y", alpha=0.3)
    figure.axes[0].set_ylabel("score (mechanism submissions)")
    handles, labels = figure.axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside right upper")
    figure.savefig(path, dpi=110)


def _graphs_part(document, directory: Path, scores: pl.DataFrame, out: Path) -> None:
    document.heading(3, "Reference versus the most common wrong graph")
    wrong = scores.filter(pl.col("structure_graph_score") < 1.0)
    if wrong.is_empty():
        document.text("Every mechanism submission has the reference's graph: nothing to show.")
        return
    meta_path = directory / OUTPUT.meta
    inputs = json.loads(meta_path.read_text()).get("inputs", {}) if meta_path.is_file() else {}
    problems_dir, sweep = Path(str(inputs.get("problems", ""))), Path(str(inputs.get("sweep", "")))
    if not inputs or not problems_dir.is_dir() or not sweep.exists():
        document.text("The problems and sweep named in `meta.json` are not at hand: graphs skipped.")
        return
    counts = wrong.group_by("task").len().sort(["len", "task"], descending=[True, False])
    tasks = counts["task"].head(MAX_TASKS).to_list()
    by_task = {p.task_id: p for p in load_problems(problems_dir) if p.task_id in tasks}
    texts = _texts(sweep, set(by_task))
    for k, task in enumerate(t for t in tasks if t in by_task):
        shown = _pair_figure(by_task[task], texts.get(task, Counter()), out / GRAPH_FIGURE.format(k + 1))
        if shown is None:
            document.text(f"`{task}`: no wrong submitted graph could be rebuilt from the sweep.")
            continue
        count, total, score = shown
        document.image(GRAPH_FIGURE.format(k + 1), f"{task}: reference (left) and the most common wrong graph "
                                                    f"(right: {count} of {total} wrong mechanism submissions, "
                                                    f"graph score {score:.2f})")


def _texts(sweep: Path, tasks: set[str]) -> dict[str, Counter]:
    """Mechanism texts submitted to ``tasks``, counted, read from the sweep."""
    out: dict[str, Counter] = {}
    for batch in read_sweep(sweep):
        if "mechanism" not in batch.columns:
            continue
        rows = batch.filter(pl.col("task").is_in(list(tasks)) & pl.col("mechanism").is_not_null())
        for task, text in rows.select("task", "mechanism").iter_rows():
            out.setdefault(task, Counter())[text] += 1
    return out


def _pair_figure(problem, texts: Counter, path: Path) -> tuple[int, int, float] | None:
    """Draw the reference beside the most common wrong graph; (its count, the count of
    wrong submissions, its graph score), or None when there is none.  The graph
    machinery (parser, solver and with it the kernels) is loaded here, so a report that
    draws no graph does not load Numba."""
    from fastscore.report.task_graph import reference_graph
    from fastscore.scoring.reference import constant_substitutions
    from fastscore.scoring.structure import compared_graph, parse_submitted, roles_of
    from fastscore.structure.drawing import draw, figure_size, legend_handles
    from fastscore.structure.graph_score import graph_similarity
    from fastscore.structure.graphs import fingerprint, mechanism_graph
    from fastscore.text.tokens import ParseError
    reference = reference_graph(problem).graph
    compared, _ = compared_graph(problem, reference.equations)
    constants = constant_substitutions(problem)
    groups: dict[tuple, list] = {}
    for text, count in texts.most_common(MAX_TEXTS):
        try:
            equations = parse_submitted(problem, constants, text)
        except (ParseError, ValueError):
            continue
        graph = mechanism_graph(equations, problem.known_names, problem.target.name, roles_of(problem))
        score = graph_similarity(compared, compared_graph(problem, equations)[0]).score  # as the score columns
        if score < 1.0:
            group = groups.setdefault(fingerprint(graph), [0, graph, score])
            group[0] += count
    if not groups:
        return None
    count, graph, score = max(groups.values(), key=lambda g: g[0])
    left, right = figure_size(reference), figure_size(graph)
    figure = Figure(figsize=(left[0] + right[0], max(left[1], right[1]) + 0.6), layout="constrained")
    axes = figure.subplots(1, 2, width_ratios=[left[0], right[0]])
    draw(reference, axes[0], title=f"{problem.task_id}: reference")
    draw(graph, axes[1], title=f"most common wrong graph ({count} submissions, graph score {score:.2f})")
    handles = {h.get_label(): h for g in (reference, graph) for h in legend_handles(g)}
    figure.legend(handles=list(handles.values()), loc="outside lower center", ncols=4, fontsize=8, frameon=False)
    figure.savefig(path, dpi=100)
    return count, sum(g[0] for g in groups.values()), score


def _number(value) -> str:
    return "—" if value is None or (isinstance(value, float) and np.isnan(value)) else f"{value:.3f}"
