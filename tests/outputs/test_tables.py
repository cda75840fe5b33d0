"""The output vocabulary (``fastscore.outputs.tables``): names kept in step with the kernels,
light enough to load without Numba, a new rate in one registration, closed statuses."""
from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import polars as pl
import pytest

from fastscore.cli import main
from fastscore.kernels import METRICS
from fastscore.outputs import tables
from fastscore.report.document import write_report


def test_the_metric_names_are_the_kernels_metrics():
    assert tables.METRICS == METRICS


def _loads_numba(code: str) -> bool:
    code += "\nimport sys; print('numba' in sys.modules)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() \
        == "True"


@pytest.mark.slow
def test_the_tables_and_the_report_load_without_numba(tmp_path):
    assert not _loads_numba("import fastscore.outputs.tables")
    assert not _loads_numba("import fastscore.report.document")
    rows = [{"config": c, "run": 0, "task": t, "status": "ok", "p_equivalent": c == "a", "n_probes": 0}
            for c in ("a", "b") for t in ("t1", "t2")]
    tables.frame(rows, tables.SCORE_SCHEMA).write_parquet(tmp_path / "scores.parquet")
    assert not _loads_numba(f"from fastscore.report.document import write_report; write_report({str(tmp_path)!r})")
    assert (tmp_path / "report" / "report.md").is_file()


# ------------------------------------------------- a new rate is one registration

ACC_001 = tables.Rate("acc_id_001", "Acc ID 0.01", (pl.col("id_max_rel_err") <= 0.01).fill_null(False).mean(), True)


@pytest.fixture
def acc_001():
    tables.register_rate(ACC_001)
    yield ACC_001
    tables.RATES.remove(ACC_001)


@pytest.mark.slow
def test_a_registered_rate_is_in_the_summary_the_strata_the_report_and_the_cli(tmp_path, capsys, acc_001, example_dir, example_sweep):
    out = tmp_path / "out"
    assert main(["score", "--problems", str(example_dir), "--sweep",
                 str(example_sweep), "--out", str(out), "--executor", "local"]) == 0
    assert "acc_id_001" in capsys.readouterr().out
    scores = pl.read_parquet(out / "scores.parquet")
    expected = scores.group_by("config", "run").agg((pl.col("id_max_rel_err") <= 0.01).fill_null(False).mean()
                                                    .alias("rate")).group_by("config").agg(pl.col("rate").mean())
    summary = pl.read_parquet(out / "summary.parquet")
    before = tables.RATES[tables.RATES.index(ACC_001) - 1].name  # the rate registered last before it
    assert summary.columns.index("acc_id_001") == summary.columns.index(f"{before}_std") + 1
    assert dict(summary.select("config", "acc_id_001").rows()) == pytest.approx(dict(expected.rows()))
    strata = pl.read_parquet(out / "strata.parquet")
    assert {"acc_id_001", "acc_id_001_std"} <= set(strata.columns) and strata["acc_id_001"].is_not_null().all()
    markdown = write_report(out).read_text()
    headers = [line for line in markdown.splitlines() if line.startswith("| ") and "| n_runs | SA(P) |" in line]
    labels = [r.label for r in tables.shown_rates(summary)]  # no harness records, no benchmark tasks here
    present = strata["stratum"].unique().to_list()  # the example's tasks have no version or difficulty
    assert len(headers) == 1 + len(present) and all(line.endswith(f"| {labels[-2]} | Acc ID 0.01 |")
                                                          for line in headers)


def test_a_rate_name_is_registered_once():
    with pytest.raises(ValueError, match="'sa_p' is taken"):
        tables.register_rate(tables.Rate("sa_p", "again", pl.col("p_equivalent").mean(), True))
    with pytest.raises(ValueError, match="unknown rate 'nope'; expected one of sa_p, sa_m"):
        tables.get_rate("nope")


def test_a_failed_row_has_one_of_the_statuses():
    problem = SimpleNamespace(probes=(), family="f", domain="d", n_mutations=0)
    assert tables.failed_row({"config": "c", "run": 0, "task": "t"}, problem, status="timeout",
                             error="slow")["status"] == "timeout"
    with pytest.raises(ValueError, match="unknown status 'late'; expected one of ok, parse_error"):
        tables.failed_row({"config": "c", "run": 0, "task": "t"}, problem, status="late", error="")


# ------------------------------------------------- exact rates beside the tolerant ones

def _row(config, run, task, verdict, n_probes=0, n_correct=0, n_proven=0):
    return {"config": config, "run": run, "task": task, "status": "ok", "p_verdict": verdict,
            "p_equivalent": verdict in ("proven", "numeric"), "n_probes": n_probes,
            "m_correct": None if n_probes == 0 else n_correct == n_probes, "n_probes_correct": n_correct,
            "n_probes_proven": n_proven}


def test_exact_rates_count_only_proven_verdicts():
    rows = [_row("a", 0, "t1", "proven", 2, 2, 2), _row("a", 0, "t2", "numeric", 2, 2, 1),
            _row("a", 0, "t3", "different", 1, 1, 1), _row("a", 0, "t4", None),
            _row("a", 1, "t1", "numeric", 2, 2, 2), _row("a", 1, "t2", "proven", 2, 1, 1),
            _row("a", 1, "t3", "proven", 1, 0, 0), _row("a", 1, "t4", "proven")]
    summary = tables.summary(tables.frame(rows, tables.SCORE_SCHEMA)).row(0, named=True)
    assert summary["sa_p"] == pytest.approx((2 / 4 + 4 / 4) / 2)
    assert summary["sa_p_exact"] == pytest.approx((1 / 4 + 3 / 4) / 2)
    # probes: run 0 all correct on t1, t2, t3; all proven on t1, t3; run 1 correct on t1, proven on t1
    assert summary["sa_m"] == pytest.approx((3 / 3 + 1 / 3) / 2)
    assert summary["sa_m_exact"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    assert summary["sa_p_exact_std"] == pytest.approx(0.25)


def test_exact_rates_are_in_the_strata_and_a_failed_row_counts_as_not_proven():
    problem = SimpleNamespace(probes=["x"], family="f", domain="d", n_mutations=1)
    rows = [tables.failed_row({"config": "a", "run": 0, "task": "t1"}, problem, status="missing", error="none"),
            {**_row("a", 0, "t2", "proven", 1, 1, 1), "family": "f", "domain": "d", "n_mutations": 1}]
    strata = tables.strata(tables.frame(rows, tables.SCORE_SCHEMA))
    domain = tables.stratum_rows(strata, "domain").row(0, named=True)
    assert domain["sa_p_exact"] == 0.5 and domain["sa_m_exact"] == 0.5
    assert [r.name for r in tables.RATES[:7]] == ["sa_p", "sa_m", "cond_fail", "acc_id", "acc_ood", "sa_p_exact",
                                                 "sa_m_exact"]


def test_the_printed_rates_of_law_benchmark_and_mixed_summaries():
    names = [r.name for r in tables.RATES]
    law = pl.DataFrame({"config": ["a"], "sa_p": [0.5], "sa_m": [None], "grn_f1": [None]},
                       schema_overrides={"sa_m": pl.Float64, "grn_f1": pl.Float64})
    shown = [r.name for r in tables.shown_rates(law)]
    # a law sweep: every law rate (SA(M) too, without a value), no benchmark or harness rate
    assert {"sa_p", "sa_m", "cond_fail", "acc_id", "acc_ood"} <= set(shown)
    assert "grn_f1" not in shown and not any(n.startswith("harness_") for n in shown)
    grn = pl.DataFrame({"config": ["a"], "sa_p": [None], "grn_f1": [0.7], "grn_exact": [0.5]},
                       schema_overrides={"sa_p": pl.Float64})
    assert [r.name for r in tables.shown_rates(grn)] == ["grn_f1", "grn_exact"]  # no empty law columns
    mixed = pl.DataFrame({"config": ["a"], "sa_p": [0.5], "sa_m": [None], "grn_f1": [0.7]},
                         schema_overrides={"sa_m": pl.Float64})
    assert [r.name for r in tables.shown_rates(mixed)] == [n for n in names if n in ("sa_p", "grn_f1")]
