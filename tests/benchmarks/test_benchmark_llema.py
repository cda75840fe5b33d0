"""LLEMA materials screens: the 14 task files, hit flags at the thresholds under the
three rule sets (fastscore's, calculate_validity's literal, calculate_stability's
literal), stability, duplicates, the Pareto count and bad candidates, by hand."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from fastscore.benchmarks.base import BadInput
from fastscore.benchmarks.formula import FormulaError, parse_formula, reduced
from fastscore.benchmarks.materials import pareto_count, score_attempt
from fastscore.problems.formats import load_problems
from fastscore.run.job import score_sweep
from fastscore.settings import Settings

LLEMA = Path(__file__).resolve().parents[2] / "problems" / "llema"
TASKS = {p.task_id: p for p in load_problems(LLEMA)}
RULES = {rule: Settings(llema_literal=rule) for rule in (0, 1, 2)}


def hits(task: str, candidates: list[dict], rule: int) -> list[bool]:
    """The hit flag of each candidate alone (one attempt each)."""
    return [score_attempt(TASKS[task].task, json.dumps([c]), RULES[rule])[0]["mat_n_hits"] == 1 for c in candidates]


def test_the_fourteen_tasks_ship_the_evaluators_constraints():
    assert len(TASKS) == 14
    coating = TASKS["hard-coating-materials"].task
    assert coating["constraints"] == (("bulk_modulus", "in", (200.0, 500.0)), ("shear_modulus", "in", (100.0, 300.0)))
    assert "Band gap >= 3.0" in TASKS["hard-coating-materials"].description  # the table's version, recorded
    conductors = TASKS["transparent-conductors"].task["constraints"]
    assert conductors == (("band_gap", ">", 1.5), ("electrical_conductivity", "in", (500.0, 30000.0)))
    assert TASKS["toxic-free-perovskite-oxide"].task["composition"]["exclude"] == frozenset(
        "Pb Cd Hg Tl Be As Sb Se U Th".split())
    assert TASKS["solid-state-electrolytes"].task["composition"]["requires_any"] == frozenset(
        "Li Na K Mg Ca Al".split())
    assert all(p.domain == "llema" and p.format == "llema" for p in TASKS.values())


PV = [  # Photovoltaic Absorbers: band gap in [0.7, 2.0], formation energy <= 0, earth-abundant, non-toxic
    {"formula": "FeS2", "band_gap": 0.7, "formation_energy": 0.0},             # both bounds inclusive
    {"formula": "Cu2ZnSnS4", "band_gap": 1.5, "formation_energy": -0.5},       # Sn: not on stability's allowed list
    {"formula": "Sb2S3", "band_gap": 1.7, "formation_energy": -0.3},           # Sb: toxic for stability's copy only
    {"formula": "CdTe", "band_gap": 1.5, "formation_energy": -0.4},            # Cd toxic, Te not abundant
    {"formula": "Cu2O", "band_gap": 2.0000001, "formation_energy": -0.9},      # just above the band
    {"formula": "CuInS2", "band_gap": 1.5, "formation_energy": -0.6},          # In not abundant
    {"formula": "ZnSnN2", "band_gap": 1.8, "formation_energy": 1e-9},          # formation energy just above 0
]


@pytest.mark.parametrize("rule, expected", [
    (0, [True, True, True, False, False, False, False]),
    (1, [True, True, True, False, False, False, False]),
    (2, [True, False, False, False, False, False, False]),
])
def test_photovoltaic_hits_under_each_rule(rule, expected):
    assert hits("photovoltaic-absorbers", PV, rule) == expected


def test_strict_operators_never_hold_under_calculate_validitys_literal_rule():
    aero = [{"formula": "TiB2", "bulk_modulus": 250.0, "shear_modulus": 150.0, "formation_energy": -0.5},
            {"formula": "B4C", "bulk_modulus": 100.0, "shear_modulus": 200.0, "formation_energy": 0.0}]
    assert hits("structural-materials-for-aerospace", aero, 0) == [True, False]  # 0 < 0 is false
    assert hits("structural-materials-for-aerospace", aero, 1) == [False, False]  # no '<' branch
    assert hits("structural-materials-for-aerospace", aero, 2) == [True, False]
    tco = [{"formula": "ZnO", "band_gap": 1.6, "electrical_conductivity": 500.0},
           {"formula": "SnO2", "band_gap": 1.5, "electrical_conductivity": 30000.0}]
    assert hits("transparent-conductors", tco, 0) == [True, False]  # 1.5 > 1.5 is false
    assert hits("transparent-conductors", tco, 1) == [False, False]
    assert hits("transparent-conductors", tco, 2) == [True, False]


def test_required_and_excluded_elements():
    sse = [{"formula": "Li3PS4", "formation_energy": -1.0, "band_gap": 2.0},
           {"formula": "ZrO2", "formation_energy": -3.0, "band_gap": 5.0}]
    assert hits("solid-state-electrolytes", sse, 0) == [True, False]
    perovskite = [{"formula": "SrTiO3", "band_gap": 3.2, "bulk_modulus": 90.0},
                  {"formula": "BaSbO3", "band_gap": 3.2, "bulk_modulus": 100.0},
                  {"formula": "SrTiO3", "band_gap": 1.99, "bulk_modulus": 100.0}]
    assert hits("toxic-free-perovskite-oxide", perovskite, 0) == [True, False, False]


def test_rates_duplicates_stability_and_bad_candidates_of_one_attempt():
    attempt = [
        {"formula": "TiC", "bulk_modulus": 250, "shear_modulus": 180, "energy_above_hull": 0.1},   # hit, stable
        {"formula": "Ti2C2", "bulk_modulus": 1, "shear_modulus": 1},                               # duplicate of TiC
        {"formula": "SiC", "properties": {"bulk_modulus": 220, "shear_modulus": 190}, "e_above_hull": 0.10001},
        {"formula": "WC", "bulk_modulus": 300, "shear_modulus": 200},                              # hit, no e_hull
        {"formula": "TaN", "bulk_modulus": 99.9, "shear_modulus": 100, "energy_above_hull": 0.0},  # not a hit
        {"formula": "Xq2", "bulk_modulus": 200, "shear_modulus": 100},                             # bad formula
        {"formula": "BN", "bulk_modulus": "hard", "shear_modulus": 100},                           # non-number
        {"formula": "AlN", "shear_modulus": 100},                                                  # missing
    ]
    fields, reasons = score_attempt(TASKS["hard-stiff-ceramics"].task, json.dumps(attempt), Settings())
    assert fields == {"mat_n_candidates": 7, "mat_n_duplicates": 1, "mat_n_invalid": 3, "mat_n_hits": 3,
                      "mat_n_stable": 1, "mat_hit_rate": 3 / 7, "mat_stability_rate": 1 / 7,
                      "mat_pareto_count": 1}  # WC (300, 200) dominates TiC (250, 180) and SiC (220, 190)
    assert "'Xq' is not an element symbol" in reasons and "bulk_modulus is not a finite number" in reasons
    assert "(+0 more)" not in reasons
    fields, _ = score_attempt(TASKS["hard-stiff-ceramics"].task, "[]", Settings())
    assert (fields["mat_hit_rate"], fields["mat_stability_rate"], fields["mat_pareto_count"]) == (0.0, 0.0, 0)


def test_pareto_count_by_hand_with_ties():
    assert pareto_count([]) == 0
    assert pareto_count([(1.0, 1.0)]) == 1
    assert pareto_count([(2.0, 1.0), (1.0, 2.0), (1.5, 1.5), (1.0, 1.0)]) == 3  # (1, 1) is dominated
    assert pareto_count([(1.0, 2.0), (1.0, 2.0), (0.5, 2.0)]) == 2  # equal points: neither dominates
    # lower-better objectives are negated by the caller: formation energy -1 beats -0.5
    fields, _ = score_attempt(TASKS["photovoltaic-absorbers"].task, json.dumps(
        [{"formula": "FeS2", "band_gap": 1.0, "formation_energy": -1.0},
         {"formula": "Cu2O", "band_gap": 1.0, "formation_energy": -0.5}]), Settings())
    assert fields["mat_pareto_count"] == 1
    fields, _ = score_attempt(TASKS["photovoltaic-absorbers"].task, json.dumps(
        [{"formula": "FeS2", "band_gap": 1.0, "formation_energy": -1.0},
         {"formula": "CdS", "band_gap": 3.0, "formation_energy": -2.0}]), Settings(llema_pareto_hits_only=0))
    assert fields["mat_pareto_count"] == 1  # over every candidate: CdS (not a hit) dominates


@pytest.mark.parametrize("formula, counts", [
    ("Fe2O3", {"Fe": 2, "O": 3}), ("Ca(OH)2", {"Ca": 1, "O": 2, "H": 2}), ("Mg3(PO4)2", {"Mg": 3, "P": 2, "O": 8}),
    ("K4[Fe(CN)6]", {"K": 4, "Fe": 1, "C": 6, "N": 6}), ("Al0.5Ga0.5N", {"Al": 0.5, "Ga": 0.5, "N": 1}),
])
def test_formula_parser(formula, counts):
    assert parse_formula(formula) == pytest.approx(counts)


@pytest.mark.parametrize("formula, reason", [
    ("Xx2", "not an element symbol"), ("Fe2O3)", "unbalanced"), ("(Fe", "unclosed"), ("2Fe", "follows no element"),
    ("Fe0", "not positive"), ("", "no formula"), ("Fe()2", "empty parentheses"), ("Fe-O", "unexpected '-'"),
    (None, "no formula"), ("CO" * 200, "longer than"),
])
def test_malformed_formulas_say_why(formula, reason):
    with pytest.raises(FormulaError, match=reason):
        parse_formula(formula)


def test_reduced_composition():
    assert reduced(parse_formula("Fe2O3")) == reduced(parse_formula("Fe4O6")) != reduced(parse_formula("Fe3O4"))


def test_an_attempt_that_is_not_a_candidate_list_is_a_parse_error():
    with pytest.raises(BadInput, match="not JSON"):
        score_attempt(TASKS["hard-stiff-ceramics"].task, "TiC, WC", Settings())
    with pytest.raises(BadInput, match="list of candidates"):
        score_attempt(TASKS["hard-stiff-ceramics"].task, '{"formula": "TiC"}', Settings())


def test_the_bundled_candidate_table_scores_in_a_sweep(tmp_path):
    sweep = LLEMA.parent / "llema-example-sweep.jsonl"
    score_sweep(LLEMA, sweep, tmp_path / "out", executor="local")
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("status") != "missing")
    assert scores.height == sum(1 for line in sweep.read_text().splitlines() if line.strip())
    assert scores.filter(pl.col("status") == "ok")["mat_n_candidates"].min() >= 1
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet")
    assert summary["mat_hit_rate"].is_not_null().all() and summary["sa_p"].is_null().all()


def test_all_nan_properties_make_invalid_candidates_not_hits():
    text = '[{"formula": "TiC", "bulk_modulus": NaN, "shear_modulus": NaN, "energy_above_hull": NaN}, ' \
           '{"formula": "WC", "bulk_modulus": Infinity, "shear_modulus": 100}]'
    fields, reasons = score_attempt(TASKS["hard-stiff-ceramics"].task, text, Settings())
    assert (fields["mat_n_candidates"], fields["mat_n_invalid"], fields["mat_n_hits"], fields["mat_n_stable"]) == (
        2, 2, 0, 0)
    assert fields["mat_hit_rate"] == 0.0 and fields["mat_pareto_count"] == 0
    assert "bulk_modulus is not a finite number; property shear_modulus is not a finite number" in reasons
