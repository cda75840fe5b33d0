"""pass@k with known answers: n = 5, c = 2 at k = 1..5 by hand; n < k; tasks with
different n in one configuration; and, through ``fastscore score`` over a folder of a
law, a GRN task and a DiscoverPhysics world, the four outcomes (SA(P), SA(M), GRN
exact, DP pass): passk.parquet agrees with the hand counts, with the report's reading
of the scores and, at k = 1, with the summary's success shares."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from fastscore.outputs.passk import PassOutcome, pass_at_k, passk_table, read_passk
from fastscore.report.document import write_report
from fastscore.run.job import score_sweep

ROOT = Path(__file__).resolve().parents[2]
# n = 5, c = 2: 1 - C(3, k) / C(5, k) = 1 - 3/5, 1 - 3/10, 1 - 1/10, then n - c = 3 < k: 1
FIVE_TWO = [0.4, 0.7, 0.9, 1.0, 1.0]


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5])
def test_n5_c2(k):
    assert pass_at_k(5, 2, k) == pytest.approx(FIVE_TWO[k - 1], abs=1e-15)


def test_n_below_k_and_the_edges():
    assert pass_at_k(5, 2, 6) is None and pass_at_k(1, 1, 2) is None
    assert [pass_at_k(5, 0, k) for k in range(1, 6)] == [0.0] * 5
    assert [pass_at_k(5, 5, k) for k in range(1, 6)] == [1.0] * 5
    assert pass_at_k(1, 1, 1) == 1.0 and pass_at_k(1, 0, 1) == 0.0


def _rows(task, outcomes):
    return [{"config": "a", "run": run, "task": task, "grn_exact": value, "domain": "grn"}
            for run, value in enumerate(outcomes)]


def test_mixed_n_across_tasks():
    scores = pl.DataFrame([*_rows("t5", [True, False, True, False, False]),   # n=5 c=2
                           *_rows("t3", [False, None, False]),                 # n=3 c=0 (null fails)
                           *_rows("u5", [True] * 5)])                          # n=5 c=5
    table = passk_table(scores, [PassOutcome("grn_exact", "GRN", "grn_exact", pl.col("domain") == "grn")])
    got = {r["k"]: (r["pass_at_k"], r["n_tasks"], r["n_tasks_defined"]) for r in table.iter_rows(named=True)}
    for k in (1, 2, 3):
        assert got[k][0] == pytest.approx((FIVE_TWO[k - 1] + 0.0 + 1.0) / 3) and got[k][1:] == (3, 3)
    assert got[4] == (None, 3, 2) and got[5] == (None, 3, 2)  # t3 has 3 attempts: undefined past k = 3
    assert sorted(got) == [1, 2, 3, 4, 5]


WORLD = """benchmark: discoverphysics
name: "still"
world: "still"
dim: 1
particles: {mass: [1.0], charge: [0.0]}
initial: {time: 0.0, positions: [[0.0]], velocities: [[0.0]]}
times: [1.0]
variance: 1.0
heldout: [[[0.0]]]
"""


@pytest.mark.slow
def test_the_four_outcomes_through_a_sweep_agree_with_the_summary_and_the_report(tmp_path):
    problems = tmp_path / "problems"
    problems.mkdir()
    (problems / "orbit.yaml").write_text((ROOT / "problems" / "example" / "circular-orbit-period.yaml").read_text())
    (problems / "cascade.yaml").write_text((ROOT / "problems" / "grn" / "cascade.yaml").read_text())
    (problems / "still.yaml").write_text(WORLD)
    right, wrong = "T = 2*pi*sqrt(r**3/(G*M))", "T = 2*pi*sqrt(r**3/(G*m))"
    rows = []
    for run in range(5):  # SA(P): runs 0, 1 right; GRN: runs 1, 3 exact; DP: runs 0, 2, 4 pass; run 4 no law
        if run < 4:
            rows.append({"config": "a", "run": run, "task": "orbit", "phenomenal": right if run < 2 else wrong,
                         "probes": json.dumps({"v": "sqrt(G*M/r)" if run == 0 else "r"})})
        rows.append({"config": "a", "run": run, "task": "cascade",
                     "submission": "X -> Y\nY -> Z" if run in (1, 3) else "X -> Y"})
        rows.append({"config": "a", "run": run, "task": "still", "submission": "[[[0.0]]]" if run % 2 == 0
                     else "[[[1.0]]]", "explanation_score": 0.95})
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    score_sweep(problems, sweep, out, executor="local")
    passk = pl.read_parquet(out / "passk.parquet")
    assert passk.equals(read_passk(out / "scores.parquet"))  # what the report reads when the file is absent
    got = {(r["outcome"], r["k"]): r["pass_at_k"] for r in passk.iter_rows(named=True)}
    expected = {"sa_p": [pass_at_k(5, 2, k) for k in range(1, 6)],       # the missing run 4 failed
                "sa_m": [pass_at_k(5, 1, k) for k in range(1, 6)],
                "grn_exact": [pass_at_k(5, 2, k) for k in range(1, 6)],
                "dp_pass": [pass_at_k(5, 3, k) for k in range(1, 6)]}
    for outcome, values in expected.items():
        assert [got[(outcome, k)] for k in range(1, 6)] == pytest.approx(values), outcome
    assert expected["sa_p"] == pytest.approx(FIVE_TWO)
    summary = pl.read_parquet(out / "summary.parquet").row(0, named=True)
    for outcome, column in (("sa_p", "sa_p"), ("sa_m", "sa_m"), ("grn_exact", "grn_exact"), ("dp_pass", "dp_pass")):
        assert summary[column] == pytest.approx(got[(outcome, 1)]), outcome  # pass@1 = the success share
    for outcome, values in expected.items():  # the summary's list columns: pass@1 .. pass@5
        assert summary[f"pass_at_k_{outcome}"] == pytest.approx(values), outcome
    # the bundled cascade has a reference mechanism; edge lists give no equations: every attempt fails
    assert summary["pass_at_k_grn_mech_all"] == [0.0] * 5
    report = write_report(out).read_text()
    assert "## pass@k" in report and (out / "report" / "passk.png").is_file()
    table = next(line for line in report.splitlines() if line.startswith("| a | 3 | 5 |"))  # the summary's row
    assert table.count("0.400 ±") >= 2 and "0.600 ±" in table  # SA(P), GRN exact 0.4; DP pass 0.6
    # the published numeric rate P counts the law's cells only (runs 0, 1 right, 2, 3 wrong, 4 missing)
    assert summary["p_num"] == pytest.approx(0.5)
    strata = pl.read_parquet(out / "strata.parquet").filter(pl.col("stratum") == "domain")
    assert dict(strata.select("value", "p_num").rows()) == {"discoverphysics": None, "grn": None, "physics": 0.5}
    published = pl.read_parquet(out / "published.parquet")
    assert set(published["domain"]) == {"all", "physics"} and set(published["planned"]) == {5}
