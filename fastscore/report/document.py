"""The operator's report (``fastscore report DIR``): the document and its
sections (tables, paired statistics from ``fastscore.report.stats``, figures from
``fastscore.report.figures``) for a scored output directory, written to ``DIR/report/`` as
``report.md``, a self-contained ``report.html`` and PNG figures. How task-level
outcomes are formed for the tests is stated in ``TASK_LEVEL_METHOD``.
"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Sequence

import numpy as np
import polars as pl

from fastscore.outputs.tables import (
    OUTCOMES,
    OUTPUT,
    SCORE_SCHEMA,
    STRATA,
    STRATUM_TITLES,
    shown_rates,
    solver_cost,
    stratum_rows,
    summary_columns,
    summary_inputs,
)
from fastscore.outputs.tables import strata as strata_table
from fastscore.outputs.tables import summary as summary_table
from fastscore.report.figures import plot_domain_accuracy, plot_mutations
from fastscore.report.stats import cochran_across, domain_tests, paired_comparisons, shown_outcomes
from fastscore.report.structure import structure_section

MUTATION_FIGURE = "rates_by_mutations.png"
PAIRWISE_FILE = "pairwise.parquet"
ALL_PAIRS_MAX = 6
"""Up to this many configurations the report tables every pair; past it (or with a
baseline given) each configuration against the baseline, every pair in ``PAIRWISE_FILE``."""
DOMAIN_FIGURE = "accuracy_by_domain.png"
TASK_LEVEL_METHOD = (
    "For each configuration and task, a binary outcome (SA(P): `p_equivalent`; SA(M): `m_correct` over tasks "
    "with probes; Acc ID / OOD: `id_acc` / `ood_acc`, all over law tasks; and each other benchmark's pass@k "
    "outcome over its own tasks, where the scores have some: GRN exact graph `grn_exact`, DiscoverPhysics pass "
    "`dp_pass`, ...) is averaged over runs, a null counting as failed as in the "
    "summary. The paired Wilcoxon signed-rank test compares these per-task averages between two configurations. "
    "McNemar's exact test and Cochran's Q need one binary outcome per task: a task counts as solved when it is "
    "solved in a strict majority of its runs (a tie counts as unsolved; with one run, that run). Holm's "
    "correction is applied within each family: one outcome × one test over all pairs of configurations.")


# ---------------------------------------------------------------- document

def _plain(text: str) -> str:
    """``text`` for Markdown: on one line (line breaks as spaces), HTML escaped."""
    return html.escape(" ".join(str(text).splitlines()), quote=False)


class _Document:
    """Headings, paragraphs, tables and images, rendered to Markdown and to HTML."""

    def __init__(self, title: str):
        self.title = title
        self.blocks: list[tuple] = []

    def heading(self, level: int, text: str) -> None:
        self.blocks.append(("heading", level, text))

    def text(self, text: str) -> None:
        self.blocks.append(("text", text))

    def table(self, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
        self.blocks.append(("table", list(headers), [list(row) for row in rows]))

    def image(self, name: str, alt: str) -> None:
        self.blocks.append(("image", name, alt))

    def markdown(self) -> str:
        """Markdown, with every text on one line and its HTML escaped (a config name
        holding ``<script>`` or a newline is shown as written, and cannot break a table)."""
        lines = [f"# {_plain(self.title)}", ""]
        for kind, *content in self.blocks:
            if kind == "heading":
                lines += ["#" * content[0] + " " + _plain(content[1]), ""]
            elif kind == "text":
                lines += [_plain(content[0]), ""]
            elif kind == "table":
                headers, rows = content
                cell = lambda text: _plain(str(text)).replace("|", "\\|")  # noqa: E731
                lines.append("| " + " | ".join(map(cell, headers)) + " |")
                lines.append("|" + "|".join("---" for _ in headers) + "|")
                lines += ["| " + " | ".join(map(cell, row)) + " |" for row in rows]
                lines.append("")
            else:
                lines += [f"![{_plain(content[1])}]({content[0]})", ""]
        return "\n".join(lines)

    def html(self) -> str:
        def inline(text: str) -> str:
            return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))

        parts = []
        for kind, *content in self.blocks:
            if kind == "heading":
                parts.append(f"<h{content[0]}>{inline(content[1])}</h{content[0]}>")
            elif kind == "text":
                parts.append(f"<p>{inline(content[0])}</p>")
            elif kind == "table":
                headers, rows = content
                head = "".join(f"<th>{inline(str(h))}</th>" for h in headers)
                body = "".join("<tr>" + "".join(f"<td>{inline(str(c))}</td>" for c in row) + "</tr>" for row in rows)
                parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            else:
                parts.append(f'<figure><img src="{html.escape(content[0])}" alt="{html.escape(content[1])}">'
                             f"<figcaption>{inline(content[1])}</figcaption></figure>")
        style = ("body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
                 "table{border-collapse:collapse;margin:0.5em 0 1.5em}th,td{border:1px solid #ccc;"
                 "padding:3px 8px;text-align:right}th{background:#f3f3f3}td:first-child,th:first-child"
                 "{text-align:left}img{max-width:100%}code{background:#f3f3f3;padding:0 3px}")
        return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{html.escape(self.title)}"
                f"</title><style>{style}</style></head><body>\n<h1>{html.escape(self.title)}</h1>\n"
                + "\n".join(parts) + "\n</body></html>\n")


def _number(value, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "—"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def _amount(value) -> str:
    return "—" if value is None or np.isnan(value) else f"{value:.6g}"


def _pvalue(value) -> str:
    if value is None or np.isnan(value):
        return "—"
    return "< 1e-300" if value < 1e-300 else f"{value:.3g}"


def _rate(row: dict, rate: str) -> str:
    value = row.get(rate)
    return "—" if value is None else f"{value:.3f} ± {_number(row.get(f'{rate}_std'))}"


def _rate_table(document: _Document, frame: pl.DataFrame, keys: Sequence[str]) -> None:
    rates = shown_rates(frame)
    headers = [*keys, "n_tasks", "n_runs", *(r.label for r in rates)]
    document.table(headers, [[_number(row[k]) for k in keys] + [str(row["n_tasks"]), str(row["n_runs"])]
                             + [_rate(row, r.name) for r in rates] for row in frame.iter_rows(named=True)])


# ---------------------------------------------------------------- sections

def _read(directory: Path) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, dict]:
    path = directory / OUTPUT.scores
    if not path.is_file():
        raise ValueError(f"{directory}: no scores.parquet (not a fastscore output directory)")
    scores = summary_columns(path).filter(pl.col("status").ne_missing("no_task"))  # fastscore's own tasks
    scores = scores.with_columns(pl.lit(None, dtype=SCORE_SCHEMA[name]).alias(name)
                                 for name in summary_inputs() if name not in scores.columns).drop_nulls(["config", "task"])
    summary = pl.read_parquet(directory / OUTPUT.summary) if (directory / OUTPUT.summary).is_file() \
        else summary_table(scores)
    strata = pl.read_parquet(directory / OUTPUT.strata) if (directory / OUTPUT.strata).is_file() \
        else strata_table(scores)
    meta_path = directory / OUTPUT.meta
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    return scores, summary, strata, meta


def _inputs_section(document: _Document, directory: Path, scores: pl.DataFrame, meta: dict) -> None:
    inputs, settings = meta.get("inputs", {}), meta.get("settings", {})
    facts = [f"Output directory `{directory}`: {scores.height} score rows, "
             f"{scores['config'].n_unique()} configurations, {scores['task'].n_unique()} tasks."]
    if inputs:
        facts.append(f"Problems `{inputs.get('problems')}`, sweep `{inputs.get('sweep')}` "
                     f"(SHA-256 {str(inputs.get('sweep_sha256', ''))[:12]}…).")
    if settings:
        facts.append("Settings: " + ", ".join(f"{key} = {settings[key]}" for key in
                                              ("rtol", "acc_tol", "n_points") if key in settings) + ".")
    if meta.get("fastscore_version"):
        facts.append(f"fastscore {meta['fastscore_version']}, executor `{meta.get('executor')}`.")
    document.text(" ".join(facts))
    counts = scores.group_by("config", "status").len()
    statuses = sorted(counts["status"].drop_nulls().unique().to_list())
    wide = {(c, s): n for c, s, n in counts.iter_rows()}
    document.table(["config", *statuses], [[config, *(str(wide.get((config, s), 0)) for s in statuses)]
                                           for config in sorted(scores["config"].unique().to_list())])


def _strata_section(document: _Document, strata: pl.DataFrame) -> None:
    document.heading(2, "Strata")
    for stratum in STRATA:
        rows = stratum_rows(strata, stratum)
        document.heading(3, STRATUM_TITLES[stratum])
        if rows.is_empty():
            document.text(f"No `{stratum}` in the problems: no table.")
            continue
        order = pl.col("value").cast(pl.Int64, strict=False) if stratum == "n_mutations" else pl.col("value")
        _rate_table(document, rows.sort(order, "config").rename({"value": stratum}), [stratum, "config"])


def _cost_section(document: _Document, scores: pl.DataFrame) -> None:
    document.heading(2, "Solver cost")
    cost = solver_cost(scores)
    if cost.is_empty():
        document.text("The scores carry no numeric columns from the sweep (e.g. `wall_time_s`, `tokens`, "
                      "`cost_usd`): no cost table.")
        return
    document.text("Numeric columns carried through from the sweep, per configuration over every run: "
                  "median, total, and total per correct task (total / number of (run, task) cells with an "
                  "equivalent law).")
    document.table(["column", "config", "n", "median", "total", "n_correct", "per correct task"],
                   [[row["column"], row["config"], str(row["n"]), _amount(row["median"]), _amount(row["total"]),
                     str(row["n_correct"]), _amount(row["per_correct"])] for row in cost.iter_rows(named=True)])


def _pairs_note(document: _Document, scores: pl.DataFrame, configs: Sequence[str], baseline: str | None,
                out: Path, shown: Sequence[str]) -> str | None:
    """Write every pair of every outcome to ``PAIRWISE_FILE``; the baseline the tables
    use (None: every pair), said in the report."""
    every = pl.concat([paired_comparisons(scores if real else scores.clear(), outcome=outcome).with_columns(
        pl.lit(outcome).alias("outcome")) for outcome, real in
        ([(o, True) for o in shown] or [("p_equivalent", False)])])  # none: an empty table
    every.select("outcome", *[c for c in every.columns if c != "outcome"]).write_parquet(out / PAIRWISE_FILE)
    if baseline is None and len(configs) <= ALL_PAIRS_MAX:
        document.text(f"Every pair of the {len(configs)} configurations (also in `{PAIRWISE_FILE}`).")
        return None
    baseline = baseline or configs[0]
    document.text(f"Each configuration against the baseline `{baseline}` (`fastscore report --baseline CONFIG`; "
                  f"default the first configuration); all {len(configs) * (len(configs) - 1) // 2} pairs of the "
                  f"{len(configs)} configurations, with Holm's correction over all of them, in `{PAIRWISE_FILE}`.")
    return baseline


def _tests_section(document: _Document, scores: pl.DataFrame, out: Path, baseline: str | None) -> None:
    document.heading(2, "Paired comparisons")
    document.text(TASK_LEVEL_METHOD)
    configs = sorted(scores["config"].unique().to_list())
    if baseline is not None and baseline not in configs:
        raise ValueError(f"--baseline {baseline}: not a configuration of the scores (e.g. {configs[0]!r})")
    shown = shown_outcomes(scores)  # column -> label of the outcomes compared
    if len(configs) < 2:
        document.text("Fewer than two configurations: nothing to compare.")
    else:
        baseline = _pairs_note(document, scores, configs, baseline, out, list(shown))
        if not shown:
            document.text("These scores have no binary per-task outcome (no law task and no benchmark outcome "
                          "such as GRN exact or DiscoverPhysics pass): no paired comparison.")
        for outcome, label in shown.items():
            document.heading(3, label)
            table = paired_comparisons(scores, outcome=outcome, baseline=baseline)
            if table.is_empty():
                document.text("No tasks with this outcome (e.g. no probes): no comparison.")
                continue
            document.table(["A", "B", "n_tasks", "rate A", "rate B", "better", "Wilcoxon p", "Holm",
                            "A only", "B only", "McNemar p", "Holm"],
                           [[row["config_a"], row["config_b"], str(row["n_tasks"]), _number(row["rate_a"]),
                             _number(row["rate_b"]), row["better"], _pvalue(row["wilcoxon_p"]),
                             _pvalue(row["wilcoxon_holm"]), str(row["only_a"]), str(row["only_b"]),
                             _pvalue(row["mcnemar_p"]), _pvalue(row["mcnemar_holm"])]
                            for row in table.iter_rows(named=True)])
    document.heading(3, "Cochran's Q across all configurations")
    if len(configs) < 3:
        document.text("Fewer than three configurations: Cochran's Q is not computed (see McNemar above).")
    else:
        results = {label: cochran_across(scores, outcome=outcome) for outcome, label in shown.items()}
        document.table(["outcome", "n_tasks", "Q", "df", "p"],
                       [[label, str(r["n_tasks"]), _number(r["q"]), str(r["df"]), _pvalue(r["p"])]
                        for label, r in results.items() if r is not None])
    document.heading(3, "Kruskal–Wallis across domains")
    document.text("Per configuration: do per-task law outcomes (averaged over runs) differ between domains? "
                  "H and p per outcome; tasks without a domain are left out.")
    tests = {label: domain_tests(scores, outcome=outcome) for outcome, label in OUTCOMES.items()}
    by_config = {label: {row["config"]: row for row in table.iter_rows(named=True)} for label, table in tests.items()}
    document.table(["config", "n_domains", *(f"{label} H (p)" for label in OUTCOMES.values())],
                   [[config, str(by_config[OUTCOMES["p_equivalent"]].get(config, {}).get("n_domains", 0)),
                     *(_kruskal_cell(by_config[label].get(config)) for label in OUTCOMES.values())]
                    for config in configs])


def _kruskal_cell(row: dict | None) -> str:
    return "—" if row is None or np.isnan(row["h"]) else f"{row['h']:.2f} ({_pvalue(row['p'])})"


def _figures_section(document: _Document, strata: pl.DataFrame, out: Path) -> None:
    document.heading(2, "Figures")
    if plot_mutations(strata, out / MUTATION_FIGURE):
        document.image(MUTATION_FIGURE, "SA(P), SA(M) and 1−(M|P) against the number of mutations")
    else:
        document.text("No mutation counts in the problems: the figure of rates against mutations is skipped.")
    if plot_domain_accuracy(strata, out / DOMAIN_FIGURE):
        document.image(DOMAIN_FIGURE, "Acc ID and Acc OOD by domain")
    else:
        document.text("No domains in the problems: the figure of accuracy by domain is skipped.")


PASSK_FIGURE = "passk.png"


def _passk_section(document: _Document, directory: Path, out: Path) -> None:
    """pass@k against k per configuration (``fastscore.outputs.passk``), from ``passk.parquet``
    (computed from the scores when an older run has none)."""
    from fastscore.outputs.passk import PASSK_FILE, read_passk
    from fastscore.report.figures import plot_passk
    (out / PASSK_FIGURE).unlink(missing_ok=True)
    path = directory / PASSK_FILE
    passk = pl.read_parquet(path) if path.is_file() else read_passk(directory / OUTPUT.scores)
    document.heading(2, "pass@k")
    document.text("Unbiased pass@k = 1 − C(n−c, k)/C(n, k) per task (n runs, c successes), averaged over "
                  "tasks; a configuration's pass@k is undefined (not drawn) at a k some task has fewer runs than. "
                  "Table: `passk.parquet`.")
    if plot_passk(passk, out / PASSK_FIGURE):
        document.image(PASSK_FIGURE, "pass@k against k per configuration")
    else:
        document.text("No outcome has a defined pass@k.")


AUDIT_FILE = "harness_audit.parquet"
AUDIT_ROWS = 50


def _evidence(verdict, reason, counterexample) -> str:
    text = f"{verdict or '—'}: {reason or ''}".strip()
    return f"{text}; counterexample {counterexample}" if counterexample else text


def _audit_section(document: _Document, directory: Path, out: Path) -> None:
    """Cells where fastscore and MechBench's harness disagree (``fastscore.report.audit``)."""
    from fastscore.report.audit import harness_audit
    (out / AUDIT_FILE).unlink(missing_ok=True)
    audit = harness_audit(directory)
    if audit is None or not (audit.laws_compared or audit.probes_compared):
        document.heading(2, "Audit against MechBench's harness")
        document.text("This sweep carries no verdicts of MechBench's harness, so nothing is compared with them: "
                      "no agreement or disagreement is claimed.")
        return
    document.heading(2, "Audit against MechBench's harness")
    laws, probes = audit.law_disagreements, audit.probe_disagreements
    carried = (f"The sweep carried the harness's own verdicts for {audit.laws_compared} laws and "
               f"{audit.probes_compared} probe answers.")
    if not (laws.height or probes.height):
        document.text(f"{carried} fastscore agrees with every one of them.")
        return
    document.text(f"{carried} They disagree with fastscore on {laws.height} laws and "
                  f"{probes.height} probe answers, listed below (at most {AUDIT_ROWS} of each; all of them in "
                  f"`{AUDIT_FILE}`) with fastscore's evidence: the proof rule of a `proven` verdict, the "
                  "counterexample of a `different` one.")
    kinds = audit.kind_counts()
    document.table(["kind", "laws", "probe answers"],
                   [[f"`{kind}`", str(n_laws), str(n_probes)] for kind, (n_laws, n_probes) in kinds.items()])
    document.text("Kinds (`fastscore.report.audit`): `task_version` the attempt ran against another version of its "
                  "task file (`task_sha_mismatch`); `error` one side could not judge; `constants_within_rtol` "
                  "fastscore equal within rtol, not exactly (the agent's own constants), the harness "
                  "numerically equal but not symbolically; `domain` they differ where one side is undefined; "
                  "`proof` fastscore proved an exact identity the harness did not see; `structure` a "
                  "different formula (fastscore's counterexample).")
    if laws.height:
        document.heading(3, "Laws")
        document.table(["config", "run", "task", "kind", "fastscore", "harness", "fastscore evidence"],
                       [[r["config"], str(r["run"]), r["task"], r["kind"],
                         "equivalent" if r["p_equivalent"] else "not",
                         "equivalent" if r["harness_p_equivalent"] else (r["harness_error"] or "not")[:120],
                         _evidence(r["p_verdict"], r["p_reason"] or r["error"], r["p_counterexample"])[:300]]
                        for r in laws.head(AUDIT_ROWS).iter_rows(named=True)])
    if probes.height:
        document.heading(3, "Probes")
        document.table(["config", "run", "task", "probe", "kind", "fastscore", "harness", "fastscore evidence"],
                       [[r["config"], str(r["run"]), r["task"], r["probe"], r["kind"],
                         "equivalent" if r["probe_equivalent"] else "not",
                         "equivalent" if r["harness_probe_equivalent"] else (r["harness_probe_error"] or "not")[:120],
                         _evidence(r["probe_verdict"], r["probe_reason"], r["probe_counterexample"])[:300]]
                        for r in probes.head(AUDIT_ROWS).iter_rows(named=True)])
    pl.concat([laws.with_columns(pl.lit("law").alias("item")),
               probes.with_columns(pl.lit("probe").alias("item"))], how="diagonal_relaxed").write_parquet(
        out / AUDIT_FILE)


def _published_section(document: _Document, directory: Path) -> None:
    """P and M pooled over a configuration's runs, as MechBench's published tables count
    them (``fastscore.outputs.published``): overall and by domain."""
    path = directory / OUTPUT.published
    if not path.is_file():
        return
    table = pl.read_parquet(path).filter(pl.col("variant") == "all")
    if table.is_empty():
        return
    document.heading(2, "Published numeric rates (pooled over runs)")
    document.text("P: the law numerically equivalent on both ID and OOD; M: every planned probe equivalent. "
                  "passed / judged (unknown cells are left out of judged; planned = judged + missing), "
                  "from fastscore's verdicts and, where the sweep carried them, the harness's records. "
                  "By variant class in `published.parquet`.")
    document.table(["source", "config", "domain", "measure", "rate", "passed / judged", "planned", "missing"],
                   [[r["source"], r["config"], r["domain"], r["measure"],
                     "—" if r["rate"] is None else f"{100 * r['rate']:.2f}%", f"{r['passed']} / {r['judged']}",
                     str(r["planned"]), str(r["missing"])] for r in table.iter_rows(named=True)])


def write_report(directory: str | Path, *, out: str | Path | None = None, baseline: str | None = None) -> Path:
    """Write ``report.md``, ``report.html``, the PNG figures and ``pairwise.parquet`` for
    the scored output ``directory`` into ``out`` (default ``directory/report``); return
    the report.md path.  ``baseline``: the configuration the paired comparisons are
    tabled against (default: every pair up to ``ALL_PAIRS_MAX`` configurations, else
    the first).  Raises ValueError when ``directory`` holds no ``scores.parquet`` or
    ``baseline`` is no configuration of it."""
    directory = Path(directory)
    scores, summary, strata, meta = _read(directory)
    out = Path(out) if out is not None else directory / "report"
    out.mkdir(parents=True, exist_ok=True)
    for stale in (MUTATION_FIGURE, DOMAIN_FIGURE, PAIRWISE_FILE):
        (out / stale).unlink(missing_ok=True)
    document = _Document("fastscore report")
    document.heading(2, "Inputs")
    _inputs_section(document, directory, scores, meta)
    document.heading(2, "Summary")
    document.text("Rates over the fixed task denominator, mean ± standard deviation over runs; "
                  "1−(M|P) is `cond_fail`, the share of equivalent laws whose probes are not all equivalent.")
    _rate_table(document, summary.sort("config"), ["config"])
    _strata_section(document, strata)
    _cost_section(document, scores)
    _tests_section(document, scores, out, baseline)
    _audit_section(document, directory, out)
    _published_section(document, directory)
    _figures_section(document, strata, out)
    structure_section(document, directory, out)
    _passk_section(document, directory, out)
    path = out / "report.md"
    path.write_text(document.markdown(), encoding="utf-8")
    (out / "report.html").write_text(document.html(), encoding="utf-8")
    return path
