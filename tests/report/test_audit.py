"""The audit against MechBench's harness (``fastscore.report.audit``): each disagreement's kind."""
from __future__ import annotations

import json

import polars as pl
import pytest

from fastscore.cli import main
from fastscore.outputs import tables
from fastscore.report.audit import DISAGREEMENTS, harness_audit

ONE_SIDE = "defined at the counterexample on one side only"


def _law(task, verdict, harness, *, status="ok", reason="", numeric=True, harness_ok=True, harness_error=None,
         other_version=None):
    return {"config": "c", "run": 0, "task": task, "status": status, "p_verdict": verdict, "p_reason": reason,
            "task_sha_mismatch": other_version,
            "p_equivalent": verdict in ("proven", "numeric"), "n_probes": 0,
            "harness_p_equivalent": harness, "harness_p_ok": harness_ok, "harness_error": harness_error,
            "harness_train_numeric": numeric, "harness_id_numeric": numeric, "harness_ood_numeric": numeric}


def _probe(probe, verdict, harness, *, reason="", harness_ok=True, harness_error=None):
    return {"config": "c", "run": 0, "task": "t", "probe": probe, "probe_verdict": verdict, "probe_reason": reason,
            "probe_equivalent": verdict in ("proven", "numeric"), "harness_probe_ok": harness_ok,
            "harness_probe_equivalent": harness, "harness_probe_error": harness_error}


LAWS = [
    # the agent's own constants (R = 8.31446261815324 for 8.314462618): within rtol, not exact
    (_law("gas", "numeric", False, reason="agree at 3256 points (rtol 1e-06)"), "constants_within_rtol"),
    (_law("gas-data", "numeric", False, numeric=False), "domain"),  # the harness's data says otherwise
    (_law("formula", "different", True, reason="relative difference 0.5 at the counterexample"), "structure"),
    (_law("sqrt", "different", True, reason=ONE_SIDE), "domain"),
    (_law("few", "undecided", True, reason="only 3 valid points in the domain"), "domain"),
    (_law("identity", "proven", False, reason="expansion"), "proof"),
    (_law("parse", None, True, status="parse_error"), "error"),
    (_law("solve", "different", True, status="solve_error"), "error"),
    (_law("harness", "proven", False, harness_ok=False), "error"),
    (_law("harness-error", "numeric", False, harness_error="timeout in sympy"), "error"),
    # run against an earlier version of the task: it names inputs this one lacks
    (_law("old", "different", True, status="solve_error", other_version=True), "task_version"),
]
PROBES = [
    (_probe("p1", "numeric", False), "constants_within_rtol"),
    (_probe("p2", "different", True), "structure"),
    (_probe("p3", "proven", False), "proof"),
    (_probe("p4", "different", True, reason=ONE_SIDE), "domain"),
    (_probe("p5", None, True), "error"),
    (_probe("p6", "numeric", False, harness_ok=False), "error"),
    (_probe("p7", "proven", False, harness_error="could not parse"), "error"),
]
PROBES.append(({**_probe("p8", "different", True), "task": "old"}, "task_version"))  # its row's version


@pytest.fixture
def scored(tmp_path):
    agreeing = _law("same", "proven", True)
    scores = tables.frame([row for row, _ in LAWS] + [agreeing], tables.SCORE_SCHEMA)
    scores.write_parquet(tmp_path / tables.OUTPUT.scores)
    probes = tables.frame([row for row, _ in PROBES] + [_probe("ok", "numeric", True)], tables.PROBE_SCHEMA)
    probes.write_parquet(tmp_path / tables.OUTPUT.probes)
    return tmp_path


def test_every_disagreement_has_its_kind(scored):
    audit = harness_audit(scored)
    assert audit.laws_compared == len(LAWS) + 1 and audit.probes_compared == len(PROBES) + 1
    assert dict(audit.law_disagreements.select("task", "kind").iter_rows()) == {
        row["task"]: kind for row, kind in LAWS}
    assert dict(audit.probe_disagreements.select("probe", "kind").iter_rows()) == {
        row["probe"]: kind for row, kind in PROBES}
    assert set(audit.law_disagreements["kind"]) <= set(DISAGREEMENTS)


def test_the_kinds_are_counted_in_the_report_and_the_parquet(scored):
    audit = harness_audit(scored)
    assert audit.kind_counts() == {"task_version": (1, 1), "error": (4, 3), "constants_within_rtol": (1, 1),
                                   "domain": (3, 1), "proof": (1, 1), "structure": (1, 1)}
    assert main(["report", str(scored)]) == 0
    report = (scored / "report" / "report.md").read_text()
    assert "| `constants_within_rtol` | 1 | 1 |" in report and "| `error` | 4 | 3 |" in report
    table = pl.read_parquet(scored / "report" / "harness_audit.parquet")
    assert table.filter(pl.col("item") == "law").height == len(LAWS)
    assert table.group_by("kind").len().sort("kind").rows() == sorted(
        (kind, n_laws + n_probes) for kind, (n_laws, n_probes) in audit.kind_counts().items())


def test_a_scores_table_without_harness_numeric_columns_is_still_classified(tmp_path):
    rows = [{k: v for k, v in _law("gas", "numeric", False).items() if not k.endswith("_numeric")}]
    tables.frame(rows, tables.SCORE_SCHEMA).write_parquet(tmp_path / tables.OUTPUT.scores)
    audit = harness_audit(tmp_path)
    assert audit.law_disagreements["kind"].to_list() == ["constants_within_rtol"]
    assert json.loads(json.dumps(audit.kind_counts())) == {"constants_within_rtol": [1, 0]}
