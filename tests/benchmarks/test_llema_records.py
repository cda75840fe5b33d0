"""LLEMA candidates as Materials Project records give them: the composition under
``formula_pretty`` or ``composition`` (a text or an element -> amount map), the formation
energy under ``formation_energy_per_atom``; the other fields of a record are ignored.
Known answers on Photovoltaic Absorbers (band gap in [0.7, 2.0], formation energy <= 0,
earth-abundant, non-toxic)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fastscore.benchmarks.formula import FormulaError, composition_of
from fastscore.benchmarks.materials import score_attempt
from fastscore.problems.formats import load_problems
from fastscore.settings import DEFAULT_SETTINGS

PV = {p.task_id: p for p in load_problems(Path(__file__).resolve().parents[2] / "problems" / "llema")}[
    "photovoltaic-absorbers"].task


def record(**fields) -> dict:
    """A record shaped as a Materials Project summary document (values made up here)."""
    return {"builder_meta": {"license": "BY-C"}, "nsites": 12, "elements": ["Fe", "S"], "nelements": 2,
            "symmetry": {"crystal_system": "Cubic", "number": 205}, "material_id": "mp-0",
            "structure": {"lattice": {"matrix": [[5.4, 0, 0], [0, 5.4, 0], [0, 0, 5.4]]}, "sites": []},
            "is_stable": True, "bulk_modulus": None, **fields}


def columns(candidates) -> dict:
    fields, reasons = score_attempt(PV, json.dumps(candidates), DEFAULT_SETTINGS)
    return {**fields, "reasons": reasons}


def test_a_record_is_read_as_the_same_plain_candidate():
    plain = {"formula": "FeS2", "band_gap": 0.95, "formation_energy": -0.5, "energy_above_hull": 0.0}
    pretty = record(formula_pretty="FeS2", composition={"Fe": 4.0, "S": 8.0}, band_gap=0.95,
                    formation_energy_per_atom=-0.5, energy_above_hull=0.0)
    mapped = record(composition={"Fe": 4.0, "S": 8.0}, band_gap=0.95, formation_energy_per_atom=-0.5,
                    energy_above_hull=0.0)
    expected = columns([plain])
    assert expected["mat_n_hits"] == 1 and expected["mat_n_stable"] == 1
    assert columns([pretty]) == expected
    assert columns([mapped]) == expected
    # Fe4S8 from a map and FeS2 from a text are one reduced composition: counted once
    both = columns([plain, mapped])
    assert (both["mat_n_candidates"], both["mat_n_duplicates"]) == (1, 1)


def test_formation_energy_is_read_from_its_own_name_first():
    own = record(formula_pretty="FeS2", band_gap=0.95, formation_energy=0.3, formation_energy_per_atom=-0.5)
    assert columns([own])["mat_n_hits"] == 0  # 0.3 > 0: the task's own name wins over the alias
    alias = record(formula_pretty="FeS2", band_gap=0.95, formation_energy_per_atom=0.3)
    assert columns([alias])["mat_n_hits"] == 0
    missing = columns([record(formula_pretty="FeS2", band_gap=0.95)])
    assert missing["mat_n_invalid"] == 1 and "formation_energy missing" in missing["reasons"]


@pytest.mark.parametrize("composition, reason", [
    ({"Fe": 1, "Xx": 2}, "not an element symbol"),
    ({"Fe": 0}, "not a finite number > 0"),
    ({"Fe": -1.0}, "not a finite number > 0"),
    ({"Fe": True}, "not a finite number > 0"),
    ({"Fe": float("inf")}, "not a finite number > 0"),
    ({"Fe": "2"}, "not a finite number > 0"),
    ({}, "1 to 118 elements"),
    ([["Fe", 1]], "no formula"),
])
def test_bad_composition_maps_say_why(composition, reason):
    with pytest.raises(FormulaError, match=reason):
        composition_of(composition)
    got = columns([record(composition=composition, band_gap=1.0, formation_energy=-1.0)])
    assert got["mat_n_invalid"] == 1 and got["mat_n_hits"] == 0


def test_a_text_composition_is_a_formula():
    assert composition_of("Fe2O3") == {"Fe": 2.0, "O": 3.0}
    assert composition_of({"Fe": 2, "O": 3.5}) == {"Fe": 2.0, "O": 3.5}
