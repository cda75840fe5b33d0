"""The operator's report: statistics on hand-computed values, and the report rendered
on the bundled example output and on synthetic scores with planted differences."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from fastscore.cli import main
from fastscore.outputs import tables
from fastscore.outputs.tables import cost_columns, solver_cost
from fastscore.report.document import DOMAIN_FIGURE, MUTATION_FIGURE, write_report
from fastscore.report.stats import (
    cochran_across,
    cochran_q,
    domain_tests,
    holm,
    kruskal_wallis,
    mcnemar_exact,
    paired_comparisons,
    shown_outcomes,
    task_outcomes,
    wilcoxon_signed_rank,
)
from fastscore.run.job import score_sweep
from tests.support.reports import SOLVE_RATE, synthetic_rows, write_output

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------ statistics

def test_holm_matches_a_hand_computed_example():
    # sorted: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 → monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # 0.5·2 = 1, then max(1, 0.6)
    adjusted = holm([0.02, float("nan"), 0.01])  # NaN does not count: m = 2
    assert adjusted[[0, 2]] == pytest.approx([0.02, 0.02]) and math.isnan(adjusted[1])
    assert holm([]).size == 0


def test_mcnemar_exact_on_a_hand_table():
    # 8 pairs solved by a only, 2 by b only, 5 by both, 3 by neither:
    # two-sided exact p = 2 · P(Bin(10, 1/2) <= 2) = 2 · (1 + 10 + 45) / 1024
    a = np.array([1] * 8 + [0] * 2 + [1] * 5 + [0] * 3)
    b = np.array([0] * 8 + [1] * 2 + [1] * 5 + [0] * 3)
    assert mcnemar_exact(a, b) == pytest.approx(112 / 1024)
    assert mcnemar_exact(a, b) == pytest.approx(stats.binomtest(2, 10, 0.5).pvalue)
    assert mcnemar_exact(b, a) == pytest.approx(112 / 1024)
    assert mcnemar_exact(a, a) == 1.0
    assert mcnemar_exact([1, float("nan"), 0], [0, 1, 0]) == 1.0  # one discordant pair left: p = 1


def test_cochran_q_on_a_hand_example():
    outcomes = [[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 1, 0], [1, 0, 0]]
    # C = (5, 3, 1), N = 9, R = (2, 1, 3, 0, 2, 1), ΣR² = 19, k = 3:
    # Q = 2 · (3 · 35 − 81) / (27 − 19) = 48 / 8 = 6; chi-square(2) survival is exp(−Q/2)
    q, p = cochran_q(outcomes)
    assert q == pytest.approx(6.0)
    assert p == pytest.approx(math.exp(-3.0))


def test_cochran_q_of_two_columns_is_mcnemars_chi_square():
    # with k = 2, Q = (b − c)² / (b + c); chi-square(1) survival is erfc(sqrt(x / 2))
    outcomes = np.array([[1, 0]] * 8 + [[0, 1]] * 2 + [[1, 1]] * 5 + [[0, 0]] * 3)
    q, p = cochran_q(outcomes)
    assert q == pytest.approx(36 / 10)
    assert p == pytest.approx(math.erfc(math.sqrt(1.8)))
    assert cochran_q([[1, 1], [0, 0]]) == (0.0, 1.0)
    with pytest.raises(ValueError):
        cochran_q([1, 0, 1])


def test_wilcoxon_exact_and_all_zero_differences():
    # six positive differences of distinct sizes: only 2 of the 2⁶ sign patterns are as extreme
    assert wilcoxon_signed_rank([1, 2, 3, 4, 5, 6], [0] * 6) == pytest.approx(2 / 64)
    assert wilcoxon_signed_rank([1, 0, 1], [1, 0, 1]) == 1.0
    assert wilcoxon_signed_rank([1, float("nan")], [1, 0]) == 1.0


def test_kruskal_wallis_on_a_hand_example():
    # ranks 1-3 and 4-6: H = 12 / (6 · 7) · (6²/3 + 15²/3) − 3 · 7 = 27/7; chi-square(1) survival
    h, p = kruskal_wallis([[1, 2, 3], [4, 5, 6]])
    assert h == pytest.approx(27 / 7)
    assert p == pytest.approx(math.erfc(math.sqrt(27 / 14)))
    assert kruskal_wallis([[1, 1], [1, 1, float("nan")]]) == (0.0, 1.0)
    assert all(math.isnan(v) for v in kruskal_wallis([[1, 2], []]))


# ------------------------------------------------------------ synthetic scores







@pytest.fixture(scope="module")
def synthetic(tmp_path_factory) -> tuple[Path, list[dict]]:
    rows = synthetic_rows()
    return write_output(rows, tmp_path_factory.mktemp("synthetic")), rows


def _assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 10_000


def test_planted_better_config_wins_the_paired_tests(synthetic):
    directory, _ = synthetic
    scores = pl.read_parquet(directory / "scores.parquet")
    table = paired_comparisons(scores, outcome="p_equivalent")
    assert table.select("config_a", "config_b").rows() == [("base", "strong"), ("base", "weak"), ("strong", "weak")]
    strong_weak = table.row(2, named=True)
    assert strong_weak["better"] == "strong" and strong_weak["n_tasks"] == 40
    assert strong_weak["wilcoxon_holm"] < 1e-4 and strong_weak["mcnemar_holm"] < 1e-4
    assert strong_weak["only_a"] > 25 and strong_weak["only_b"] < 3
    assert table.row(0, named=True)["better"] == "strong"
    # the summary's SA(P) is the mean of the per-task averages over runs
    summary = tables.summary(scores)
    assert strong_weak["rate_a"] == pytest.approx(summary.filter(pl.col("config") == "strong")["sa_p"][0])
    cochran = cochran_across(scores, outcome="p_equivalent")
    assert cochran["df"] == 2 and cochran["n_tasks"] == 40 and cochran["p"] < 1e-6


def test_domain_effect_shows_in_kruskal_wallis(synthetic):
    directory, _ = synthetic
    tests = {row["config"]: row for row in
             domain_tests(pl.read_parquet(directory / "scores.parquet")).iter_rows(named=True)}
    assert tests["base"]["n_domains"] == 4  # the task without a domain is left out
    assert tests["base"]["p"] < 1e-3
    assert tests["strong"]["p"] > 0.01


def test_task_outcomes_average_runs_and_take_strict_majorities():
    rows = [{"config": "c", "run": run, "task": "t", "p_equivalent": solved, "n_probes": 0}
            for run, solved in enumerate([True, None, False, True])]
    outcomes = task_outcomes(tables.frame(rows, tables.SCORE_SCHEMA), "p_equivalent")
    assert outcomes["rate"].to_list() == [0.5]  # the null run counts as failed
    assert outcomes["majority"].to_list() == [0.0]  # a 2-2 tie is not a majority
    assert task_outcomes(tables.frame(rows, tables.SCORE_SCHEMA), "m_correct").is_empty()  # no probes
    with pytest.raises(ValueError):
        task_outcomes(tables.frame(rows, tables.SCORE_SCHEMA), "sa_p")


def test_a_mixed_folder_compares_laws_over_law_tasks_and_benchmarks_over_their_own():
    rows = []
    for config, laws, graphs in (("a", [True, True, False], [True, True]), ("b", [False, False, False], [False, True])):
        rows += [{"config": config, "run": 0, "task": f"law{i}", "p_equivalent": v, "n_probes": 0, "domain": "physics"}
                 for i, v in enumerate(laws)]
        rows += [{"config": config, "run": 0, "task": f"grn{i}", "p_equivalent": False, "grn_exact": v, "n_probes": 0,
                  "domain": "grn"} for i, v in enumerate(graphs)]
    scores = tables.frame(rows, tables.SCORE_SCHEMA)
    laws = paired_comparisons(scores, outcome="p_equivalent").row(0, named=True)
    # the GRN tasks are not law failures: 3 tasks, a 2/3 against b 0
    assert (laws["n_tasks"], laws["rate_a"], laws["rate_b"]) == (3, pytest.approx(2 / 3), 0.0)
    graphs = paired_comparisons(scores, outcome="grn_exact").row(0, named=True)
    assert (graphs["n_tasks"], graphs["rate_a"], graphs["rate_b"], graphs["only_a"], graphs["only_b"]) == \
        (2, 1.0, 0.5, 1, 0)
    shown = shown_outcomes(scores)
    assert list(shown) == ["p_equivalent", "m_correct", "id_acc", "ood_acc", "grn_exact"]
    assert list(shown_outcomes(scores.filter(pl.col("domain") == "grn"))) == ["grn_exact"]  # no law task
    assert "grn_exact" not in shown_outcomes(scores.filter(pl.col("domain") == "physics"))


def test_solver_cost_per_configuration(synthetic):
    directory, rows = synthetic
    cost = solver_cost(pl.read_parquet(directory / "scores.parquet"))
    assert cost_columns(pl.read_parquet(directory / "scores.parquet")) == ["wall_time_s", "tokens"]
    strong = cost.filter((pl.col("config") == "strong") & (pl.col("column") == "wall_time_s")).row(0, named=True)
    n_correct = sum(r["p_equivalent"] for r in rows if r["config"] == "strong")
    assert strong["n"] == 119 and strong["median"] == 10.0 and strong["total"] == pytest.approx(1190.0)
    assert strong["per_correct"] == pytest.approx(1190.0 / n_correct)
    tokens = cost.filter((pl.col("config") == "weak") & (pl.col("column") == "tokens")).row(0, named=True)
    assert tokens["total"] == pytest.approx(3 * 100 * 40 * 41 / 2)  # 100·(1 + … + 40) per run


@pytest.mark.slow
def test_report_on_synthetic_scores(synthetic):
    directory, _ = synthetic
    path = write_report(directory)
    assert path == directory / "report" / "report.md"
    markdown = path.read_text()
    for config in SOLVE_RATE:
        assert f"| {config} |" in markdown
    section = markdown.split("### SA(P)")[1].split("###")[0]
    strong_weak = next(line for line in section.splitlines() if line.startswith("| strong | weak |"))
    assert strong_weak.split(" | ")[5] == "strong"
    for heading in ("## Summary", "### By domain", "### By family", "### By number of mutations",
                    "### Variants only", "## Solver cost", "Cochran's Q", "Kruskal–Wallis"):
        assert heading in markdown
    html = (directory / "report" / "report.html").read_text()
    assert f'<img src="{MUTATION_FIGURE}"' in html and f'<img src="{DOMAIN_FIGURE}"' in html
    assert "<td>strong</td>" in html
    _assert_png(directory / "report" / MUTATION_FIGURE)
    _assert_png(directory / "report" / DOMAIN_FIGURE)


@pytest.mark.slow
def test_report_without_mutations_domains_or_tables_skips_figures_with_a_note(tmp_path):
    rows = [{**row, "n_mutations": None, "domain": None, "wall_time_s": None, "tokens": None}
            for row in synthetic_rows(n_tasks=6, n_runs=1)]
    directory = write_output([r for r in rows if r["config"] != "weak"], tmp_path / "bare", tables_too=False)
    markdown = write_report(directory, out=tmp_path / "elsewhere").read_text()
    assert "No mutation counts in the problems" in markdown and "No domains in the problems" in markdown
    assert "No `domain` in the problems" in markdown
    assert "Fewer than three configurations" in markdown
    assert not (tmp_path / "elsewhere" / MUTATION_FIGURE).exists()
    assert (tmp_path / "elsewhere" / "report.html").is_file()
    assert "no cost table" in markdown  # all-null columns carry no numbers
    assert "| base | 6 | 1 |" in markdown  # summary computed from scores when summary.parquet is absent


@pytest.mark.slow
def test_report_on_null_outcomes_and_an_empty_output(tmp_path):
    rows = [{"config": config, "run": 0, "task": task, "domain": domain, "n_mutations": mutations}
            for config in ("a", "b", "c") for task, domain, mutations in (("t1", "x", None), ("t2", None, 1))]
    rows.append({"config": None, "run": 0, "task": "t1"})
    markdown = write_report(write_output(rows, tmp_path / "nulls", tables_too=False)).read_text()
    assert "| a | b | 2 | 0.000 | 0.000 | = | 1 | 1 | 0 | 0 | 1 | 1 |" in markdown  # nulls count as failed
    assert "No tasks with this outcome" in markdown  # no probes anywhere: no SA(M) comparison
    assert "| a | 1 | — | — | — | — |" in markdown  # one domain left once the null one is out: no test
    empty = write_report(write_output([], tmp_path / "empty", tables_too=False)).read_text()
    assert "Fewer than two configurations: nothing to compare." in empty
    assert "No mutation counts in the problems" in empty


# ------------------------------------------------------------ bundled example

@pytest.fixture(scope="module")
def example(tmp_path_factory, example_dir, example_sweep) -> Path:
    out = tmp_path_factory.mktemp("example")
    score_sweep(example_dir, example_sweep, out,
                executor="local", progress=False)
    return out


@pytest.mark.slow
def test_report_on_the_bundled_example(example, capsys):
    assert main(["report", str(example)]) == 0
    assert "report.md" in capsys.readouterr().out
    markdown = (example / "report" / "report.md").read_text()
    for config in ("oracle", "model-a", "model-b"):
        assert f"| {config} |" in markdown
    # oracle wall times in the sweep: 12 + 30.5 + 20 + 41 + 13 + 30.5 + 20 + 41 = 208 over 8 correct cells
    assert "| wall_time_s | oracle | 8 | 25.25 | 208 | 8 | 26 |" in markdown
    assert "| tokens | model-b |" in markdown and "| — |" in markdown  # no correct task: no per-correct cost
    _assert_png(example / "report" / MUTATION_FIGURE)
    _assert_png(example / "report" / DOMAIN_FIGURE)


@pytest.mark.slow
def test_report_out_puts_the_report_where_asked(example, tmp_path, capsys):
    target = tmp_path / "elsewhere"
    assert main(["report", str(example), "--out", str(target)]) == 0
    assert f"wrote {target / 'report.md'}" in capsys.readouterr().out
    assert (target / "report.md").read_text().startswith("# fastscore report")
    _assert_png(target / MUTATION_FIGURE)


def test_a_directory_without_scores_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(ValueError, match="no scores.parquet"):
        write_report(tmp_path)
    assert main(["report", str(tmp_path)]) == 2
    assert "no scores.parquet" in capsys.readouterr().err


@pytest.mark.parametrize("benchmark", ["llema", "grn", "discoverphysics"])
def test_report_on_each_bundled_benchmark_example(tmp_path, repo_root, benchmark):
    """A folder of one benchmark only has no law task: the report is still written, with
    the benchmark's own binary outcome compared (LLEMA has none: an empty pairwise table)."""
    out = tmp_path / "out"
    score_sweep(repo_root / "problems" / benchmark, repo_root / "problems" / f"{benchmark}-example-sweep.jsonl", out,
                executor="local")
    text = write_report(out).read_text()
    pairs = pl.read_parquet(out / "report" / "pairwise.parquet")
    assert "## Paired comparisons" in text and "### SA(P)" not in text
    expected = {"llema": set(), "grn": {"grn_exact", "grn_mech_all"}, "discoverphysics": {"dp_pass"}}[benchmark]
    assert set(pairs["outcome"]) == expected
    if not expected:
        assert "no paired comparison" in text
