"""pass@k: the unbiased estimator by hand, its table over configs and tasks, n < k."""
from __future__ import annotations

import polars as pl
import pytest

from fastscore.outputs.passk import OUTCOMES, PassOutcome, pass_at_k, passk_summary, passk_table


@pytest.mark.parametrize("n, c, k, expected", [
    (3, 1, 1, 1 / 3),        # 1 - C(2,1)/C(3,1) = 1 - 2/3
    (3, 1, 2, 2 / 3),        # 1 - C(2,2)/C(3,2) = 1 - 1/3
    (3, 1, 3, 1.0),          # n - c = 2 < k: any 3 of 3 attempts hold the success
    (5, 2, 2, 0.7),          # 1 - C(3,2)/C(5,2) = 1 - 3/10
    (4, 0, 2, 0.0),
    (4, 4, 1, 1.0),
    (2, 1, 3, None),         # n < k: undefined
    (0, 0, 1, None),
    (3, 1, 0, None),
])
def test_pass_at_k_by_hand(n, c, k, expected):
    value = pass_at_k(n, c, k)
    assert value == expected if expected is None else value == pytest.approx(expected, abs=1e-15)


def test_pass_at_1_is_the_success_share():
    for n in range(1, 7):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_successes_out_of_range_are_refused():
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)


def _rows(config, task, outcomes, **extra):
    return [{"config": config, "run": run, "task": task, "p_equivalent": value, "n_probes": 0, **extra}
            for run, value in enumerate(outcomes)]


def test_table_averages_over_tasks_and_is_null_where_a_task_has_fewer_runs():
    scores = pl.DataFrame([*_rows("a", "t1", [True, False, False]),   # n=3 c=1
                           *_rows("a", "t2", [False, None, False]),   # n=3 c=0 (null = failed)
                           *_rows("b", "t1", [True, True]),           # n=2 c=2
                           *_rows("b", "t2", [False, False, True])])  # n=3 c=1
    table = passk_table(scores, [PassOutcome("sa_p", "SA(P)", "p_equivalent")])
    got = {(r["config"], r["k"]): (r["pass_at_k"], r["n_tasks_defined"]) for r in table.iter_rows(named=True)}
    assert got[("a", 1)][0] == pytest.approx((1 / 3 + 0) / 2)
    assert got[("a", 2)][0] == pytest.approx((2 / 3 + 0) / 2)
    assert got[("a", 3)][0] == pytest.approx((1 + 0) / 2)
    assert got[("b", 1)][0] == pytest.approx((1 + 1 / 3) / 2)
    assert got[("b", 2)][0] == pytest.approx((1 + 2 / 3) / 2)
    assert got[("b", 3)] == (None, 1)  # t1 has 2 runs: undefined at k=3
    assert sorted(got) == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2), ("b", 3)]


def test_an_outcome_counts_only_its_rows():
    scores = pl.DataFrame([*_rows("a", "t1", [True, False], m_correct=True),
                           *[{**r, "n_probes": 2} for r in _rows("a", "t2", [True, True], m_correct=False)]])
    table = passk_table(scores, [PassOutcome("sa_m", "SA(M)", "m_correct", pl.col("n_probes") > 0)])
    assert table.filter(pl.col("k") == 1).select("pass_at_k", "n_tasks").rows() == [(0.0, 1)]
    missing = passk_table(scores, [PassOutcome("x", "X", "no_such_column")])
    assert missing.is_empty()


def test_the_summary_columns_list_pass_at_k_per_config_with_nulls_kept():
    scores = pl.DataFrame([*_rows("a", "t1", [True, False, False]),   # n=3 c=1
                           *_rows("b", "t1", [True, True]),           # n=2 c=2
                           *_rows("b", "t2", [False, False, True])])  # n=3 c=1: b's k=3 undefined
    table = passk_table(scores.with_columns(pl.lit(None, dtype=pl.Utf8).alias("domain")))  # law tasks
    wide = {r["config"]: r for r in passk_summary(table, ["a", "b", "c"]).iter_rows(named=True)}
    assert wide["a"]["pass_at_k_sa_p"] == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert wide["b"]["pass_at_k_sa_p"][:2] == pytest.approx([(1 + 1 / 3) / 2, (1 + 2 / 3) / 2])
    assert wide["b"]["pass_at_k_sa_p"][2] is None
    assert wide["c"]["pass_at_k_sa_p"] is None  # no attempt at all
    assert wide["a"]["pass_at_k_dp_pass"] is None  # no row of that outcome
    assert set(wide["a"]) == {"config", *(f"pass_at_k_{o.name}" for o in OUTCOMES)}
