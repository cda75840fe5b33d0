"""LLEMA hit flags against the hand-built threshold table (tests/data/llema/README.md):
every candidate at and around every bound of the 14 tasks, every element under each
composition rule, bad values and formulas; fastscore's flag under each rule set
(``llema_literal`` 0, 1, 2) must be the table's, and every place the table's flag
differs from the evaluator's own (calculate_validity / calculate_stability, read by
hand) must name its documented reason."""
from __future__ import annotations

import csv
import json
import runpy
from pathlib import Path

import pytest

from fastscore.benchmarks.materials import score_attempt
from fastscore.problems.formats import load_problems
from fastscore.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "llema"
TABLE = list(csv.DictReader((DATA / "threshold_table.csv").open()))
TASKS = {p.task_id: p for p in load_problems(ROOT / "problems" / "llema")}
RULES = {rule: Settings(llema_literal=rule) for rule in (0, 1, 2)}
GENERATOR = runpy.run_path(str(DATA / "make_threshold_table.py"))


def flag(task: str, candidate: str, rule: int) -> str:
    fields, _ = score_attempt(TASKS[task].task, f"[{candidate}]", RULES[rule])
    assert fields["mat_n_candidates"] == 1
    return str(fields["mat_n_hits"])


@pytest.mark.parametrize("rule", [0, 1, 2])
def test_fastscore_flags_agree_with_the_table(rule):
    wrong = [(row["task"], row["case"], row[f"expect_{rule}"]) for row in TABLE
             if flag(row["task"], row["candidate"], rule) != row[f"expect_{rule}"]]
    assert not wrong, f"{len(wrong)} of {len(TABLE)} disagree, e.g. {wrong[:5]}"


def test_every_difference_from_the_evaluator_is_documented():
    for row in TABLE:
        differs = (row["expect_0"] != row["calculate_validity"] or row["expect_1"] != row["calculate_validity"]
                   or row["expect_2"] != row["calculate_stability"])
        assert bool(row["difference"]) == differs, (row["task"], row["case"])
    reasons = {part.split(":")[0] for row in TABLE for part in row["difference"].split(" | ") if part}
    assert reasons == {"evaluator bug", "input"}
    # the literal rule sets are the evaluator's wherever the candidate is well-formed
    literal = [row for row in TABLE if not row["difference"].startswith("input")]
    assert all(r["expect_1"] == r["calculate_validity"] and r["expect_2"] == r["calculate_stability"] for r in literal)


def test_the_table_covers_every_task_bound_and_element():
    assert {row["task"] for row in TABLE} == set(TASKS) and len(TASKS) == 14
    cases = {(row["task"], row["case"]) for row in TABLE}
    assert ("photovoltaic-absorbers", "band_gap hi 2.0: next float above") in cases
    assert ("structural-materials-for-aerospace", "formation_energy < 0.0: -0.0") in cases
    assert sum(task == "toxic-free-perovskite-oxide" and case.startswith("element") for task, case in cases) == 118
    # the two tasks the evaluator can never pass, and where calculate_stability's copy disagrees
    never = {row["task"] for row in TABLE if row["calculate_validity"] == "0" and row["expect_0"] == "1"}
    assert never == {"structural-materials-for-aerospace", "transparent-conductors"}
    pv = {row["case"]: row for row in TABLE if row["task"] == "photovoltaic-absorbers"}
    assert [pv[f"element {e}"]["expect_2"] for e in ("Sb", "U", "Th", "Sn", "Sc", "La")] == list("000011")
    assert [pv[f"element {e}"]["expect_0"] for e in ("Sb", "U", "Th", "Sn", "Sc", "La")] == list("111100")


def test_the_committed_table_is_the_generators():
    assert list(GENERATOR["rows"]()) == [
        {**row} for row in TABLE]


def test_the_task_files_ship_the_evaluators_constraints_value_by_value():
    for stem, (name, numeric, categorical) in GENERATOR["VALIDITY"].items():
        task = TASKS[stem]
        assert task.name == name
        assert task.task["constraints"] == tuple((p, op, tuple(b) if op == "in" else b) for p, op, b in numeric)
        composition = task.task["composition"]
        assert composition["requires_any"] == frozenset(
            e for group in categorical.get("requires_any_element", []) for e in group)
        assert composition["exclude"] == frozenset(categorical.get("exclude_elements", []))
        assert composition["earth_abundant"] == bool(categorical.get("earth_abundant"))
        assert composition["non_toxic"] == bool(categorical.get("non_toxic"))
        extra = tuple(GENERATOR["STABILITY_EXTRA"].get(stem, ()))
        assert task.task["stability_constraints"] == extra


def test_stability_at_its_threshold_and_a_bad_energy_above_hull():
    task = TASKS["electrically-insulating-dielectrics"].task
    attempt = [{"formula": "MgO", "band_gap": 7.0, "dielectric_constant": 9.0, "energy_above_hull": 0.1},  # stable
               {"formula": "Al2O3", "band_gap": 7.0, "dielectric_constant": 9.0, "ehull": 0.1000000001},
               {"formula": "ZrO2", "band_gap": 5.0, "dielectric_constant": 20.0, "energy_above_hull": "low"},
               {"formula": "Mg2O2", "band_gap": 1.0, "dielectric_constant": 1.0},   # duplicate of MgO: once
               {"formula": "HfO2", "band_gap": 2.4, "dielectric_constant": 25.0, "e_above_hull": 0.0}]  # no hit
    fields, reasons = score_attempt(task, json.dumps(attempt), Settings())
    # 4 candidates, 3 hits (MgO, Al2O3, ZrO2), 1 stable (MgO): stability over all candidates, not the hits
    assert (fields["mat_n_candidates"], fields["mat_n_duplicates"], fields["mat_n_hits"], fields["mat_n_stable"],
            fields["mat_n_invalid"]) == (4, 1, 3, 1, 0)
    assert fields["mat_hit_rate"] == 3 / 4 and fields["mat_stability_rate"] == 1 / 4
    assert "candidate 2 (ZrO2): property energy_above_hull is not a finite number (not stable)" == reasons
    fields, _ = score_attempt(task, json.dumps(attempt), Settings(llema_stable_ehull=0.1000000001))
    assert fields["mat_n_stable"] == 2  # the threshold is a setting, inclusive


def test_calculate_stabilitys_energy_above_hull_constraint_applies_under_rule_2_only():
    task = TASKS["solid-state-electrolytes"].task
    attempt = json.dumps([{"formula": "Li3PS4", "formation_energy": -1.5, "band_gap": 3.0}])  # no energy above hull
    assert score_attempt(task, attempt, RULES[0])[0]["mat_n_hits"] == 1
    fields, reasons = score_attempt(task, attempt, RULES[2])
    assert (fields["mat_n_hits"], fields["mat_n_invalid"]) == (0, 1)
    assert "property energy_above_hull missing" in reasons


AGREE = {"hard-stiff-ceramics", "photovoltaic-absorbers", "saw-baw-acoustic-substrates", "high-k-dielectrics",
         "electrically-insulating-dielectrics"}
"""The tasks whose goal in the task table (src/all_tasks.csv) states the evaluator's constraints."""


def test_each_task_file_records_where_the_task_table_differs():
    for stem, problem in TASKS.items():
        notes = problem.description
        if stem in AGREE:
            assert notes == "The task table and the evaluator agree.", stem
        else:
            assert "task table" in notes and "agree" not in notes, stem
