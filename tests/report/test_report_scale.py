"""A report that scales with the number of configurations: paired tables against a
baseline past a few configurations (every pair in Parquet), figures sized to their
content with a cap, error bars within [0, 1], strata columns named by their stratum."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from fastscore.cli import main
from fastscore.outputs import tables
from fastscore.report.document import ALL_PAIRS_MAX, DOMAIN_FIGURE, PAIRWISE_FILE, write_report
from fastscore.report.figures import MAX_WIDTH, clipped_errors, plot_domain_accuracy
from fastscore.report.stats import holm, paired_comparisons
from tests.support.reports import synthetic_rows, write_output

DPI = 110  # the report's


def _many_configs(n_configs: int, n_domains: int = 4) -> list[dict]:
    """``n_configs`` copies of the synthetic sweep's ``base`` config (named c00, c01, ...)
    with their outcomes shuffled by config, over ``n_domains`` domains."""
    base = [row for row in synthetic_rows(n_tasks=16, n_runs=2) if row["config"] == "base"]
    rng = np.random.default_rng(5)
    rows = []
    for k in range(n_configs):
        for row in base:
            solved = bool(rng.random() < (k + 1) / (n_configs + 1))
            domain = None if row["domain"] is None else f"domain-{int(row['task'][-2:]) % n_domains}"
            rows.append({**row, "config": f"c{k:02d}", "p_equivalent": solved, "domain": domain,
                         "id_acc": solved, "ood_acc": solved})
    return rows


def _png_size(path: Path) -> tuple[int, int]:
    return struct.unpack(">II", path.read_bytes()[16:24])


def test_against_a_baseline_there_are_k_minus_1_rows_with_their_own_holm():
    scores = tables.frame(_many_configs(5), tables.SCORE_SCHEMA)
    every = paired_comparisons(scores)
    against = paired_comparisons(scores, baseline="c02")
    assert every.height == 10 and against.height == 4
    assert set(against["config_a"]) == {"c02"} and sorted(against["config_b"]) == ["c00", "c01", "c03", "c04"]
    for row in against.iter_rows(named=True):  # the same test as in the full matrix, either way round
        same = every.filter(((pl.col("config_a") == "c02") & (pl.col("config_b") == row["config_b"]))
                            | ((pl.col("config_b") == "c02") & (pl.col("config_a") == row["config_b"])))
        assert same["wilcoxon_p"].item() == pytest.approx(row["wilcoxon_p"])
    assert against["wilcoxon_holm"].to_numpy() == pytest.approx(holm(against["wilcoxon_p"].to_numpy()))
    with pytest.raises(ValueError, match="baseline 'nope' is not a configuration"):
        paired_comparisons(scores, baseline="nope")


@pytest.mark.slow
def test_many_configurations_are_tabled_against_the_first_and_every_pair_is_in_parquet(tmp_path):
    n = 22
    directory = write_output(_many_configs(n, n_domains=16), tmp_path / "scored")
    report = write_report(directory).read_text()
    pairs = pl.read_parquet(directory / "report" / PAIRWISE_FILE)
    assert pairs.filter(pl.col("outcome") == "p_equivalent").height == n * (n - 1) // 2
    assert "against the baseline `c00`" in report
    section = report.split("## Paired comparisons")[1].split("### Cochran")[0]
    rows = [line for line in section.splitlines() if line.startswith("| c00 |")]
    assert len(rows) == len(tables.OUTCOMES) * (n - 1)  # not 231 rows per outcome
    width, height = _png_size(directory / "report" / DOMAIN_FIGURE)
    assert width <= MAX_WIDTH * DPI and height <= 12 * DPI  # 16 domains × 22 configs: stacked, not 4,202 px wide


@pytest.mark.slow
def test_few_configurations_get_every_pair_unless_a_baseline_is_given(tmp_path, capsys):
    directory = write_output(_many_configs(ALL_PAIRS_MAX), tmp_path / "scored")
    report = write_report(directory).read_text()
    assert f"Every pair of the {ALL_PAIRS_MAX} configurations" in report
    assert main(["report", str(directory), "--baseline", "c03", "--out", str(tmp_path / "r")]) == 0
    assert "against the baseline `c03`" in (tmp_path / "r" / "report.md").read_text()
    assert main(["report", str(directory), "--baseline", "c99"]) == 2
    assert "--baseline c99: not a configuration" in capsys.readouterr().err


@pytest.mark.slow
def test_strata_tables_name_their_column(tmp_path):
    report = write_report(write_output(_many_configs(3), tmp_path / "scored")).read_text()
    for stratum in ("domain", "family", "n_mutations"):
        assert f"| {stratum} | config | n_tasks |" in report
    assert "| value |" not in report


def test_error_bars_stay_within_zero_and_one():
    below, above = clipped_errors(np.array([0.9, 0.1, 0.5, np.nan, 0.0]), np.array([0.2, 0.3, 0.1, 0.4, np.nan]))
    assert below.tolist() == pytest.approx([0.2, 0.1, 0.1, 0.0, 0.0])
    assert above.tolist() == pytest.approx([0.1, 0.3, 0.1, 0.0, 0.0])


def test_a_small_domain_figure_is_not_stretched(tmp_path):
    directory = write_output(_many_configs(2, n_domains=3), tmp_path / "scored")
    assert plot_domain_accuracy(pl.read_parquet(directory / "strata.parquet"), tmp_path / "small.png")
    width, _ = _png_size(tmp_path / "small.png")
    assert width <= 9 * DPI
