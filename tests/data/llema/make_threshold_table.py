"""Write threshold_table.csv: hand-built LLEMA candidates at every threshold of the 14
tasks, with the hit flag each rule set must give (README.md says how it is built).

The rules here are transcribed by hand from reading the benchmark's evaluator
(repository scientific-discovery/LLEMA: src/calculate_validity.py and
src/calculate_stability.py); no code is copied and nothing is imported from fastscore,
so the table is an independent check of it.  Run from the repository root:
``python tests/data/llema/make_threshold_table.py`` (the output is committed)."""
from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

OUT = Path(__file__).with_name("threshold_table.csv")

# --- calculate_validity.py's TASK_CONSTRAINTS, as read (task file stem -> name, numeric, categorical)
VALIDITY = {
    "hard-stiff-ceramics": ("Hard, Stiff Ceramics",
                            [("bulk_modulus", "in", (100.0, 300.0)), ("shear_modulus", "in", (60.0, 200.0))], {}),
    "photovoltaic-absorbers": ("Photovoltaic Absorbers",
                               [("band_gap", "in", (0.7, 2.0)), ("formation_energy", "<=", 0.0)],
                               {"earth_abundant": True, "non_toxic": True}),
    "solid-state-electrolytes": ("Solid-State Electrolytes",
                                 [("formation_energy", "<=", -1.0), ("band_gap", ">=", 2.0)],
                                 {"requires_any_element": [["Li"], ["Na"], ["K"], ["Mg"], ["Ca"], ["Al"]]}),
    "stable-wide-bandgap-semiconductors": ("Stable Wide-Bandgap Semiconductors",
                                           [("band_gap", ">=", 2.5), ("formation_energy", "<=", -1.0)], {}),
    "saw-baw-acoustic-substrates": ("SAW/BAW Acoustic Substrates",
                                    [("shear_modulus", "in", (25.0, 150.0)),
                                     ("dielectric_constant", "in", (3.7, 95.0))], {}),
    "structural-materials-for-aerospace": ("Structural Materials for Aerospace",
                                           [("bulk_modulus", "in", (100.0, 300.0)),
                                            ("shear_modulus", "in", (60.0, 200.0)),
                                            ("formation_energy", "<", 0.0)], {}),
    "high-k-dielectrics": ("High-k Dielectrics",
                           [("dielectric_constant", "in", (10.0, 90.0)), ("band_gap", "in", (2.5, 6.5))], {}),
    "piezo-energy-harvesters": ("Piezo Energy Harvesters",
                                [("piezo_max_dij", ">=", 8.0), ("piezo_max_dielectric", "in", (10.0, 8000.0))], {}),
    "hard-coating-materials": ("Hard Coating Materials",
                               [("bulk_modulus", "in", (200.0, 500.0)), ("shear_modulus", "in", (100.0, 300.0))],
                               {}),
    "acousto-optic-hybrids": ("Acousto-optic Hybrids",
                              [("piezo_max_dij", "in", (3.0, 9.0)), ("piezo_max_dielectric", "in", (8.0, 85.0))],
                              {}),
    "electrically-insulating-dielectrics": ("Electrically Insulating Dielectrics",
                                            [("band_gap", ">=", 2.5), ("dielectric_constant", ">=", 8.0)], {}),
    "transparent-conductors": ("Transparent Conductors",
                               [("band_gap", ">", 1.5), ("electrical_conductivity", "in", (500.0, 30000.0))], {}),
    "low-density-structural-aerospace": ("Low_Density_Structural_Aerospace",
                                         [("density", "<=", 3.5), ("shear_modulus", "in", (65.0, 195.0))], {}),
    "toxic-free-perovskite-oxide": ("Toxic_Free_Perovskite_Oxide",
                                    [("band_gap", ">=", 2.0), ("bulk_modulus", "in", (90.0, 135.0))],
                                    {"exclude_elements": ["Pb", "Cd", "Hg", "Tl", "Be", "As", "Sb", "Se", "U", "Th"]}),
}
# calculate_stability.py's copy: the same, except these two tasks gain energy_above_hull <= 2.0
STABILITY_EXTRA = {"solid-state-electrolytes": [("energy_above_hull", "<=", 2.0)],
                   "stable-wide-bandgap-semiconductors": [("energy_above_hull", "<=", 2.0)]}
VALIDITY_TOXIC = {"Hg", "Cd", "Pb", "Tl", "As", "Be", "Se"}
VALIDITY_NOT_ABUNDANT = set("Au Ag Pt Pd Rh Ir Os Ru La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Sc Y In Ga Ge Te "
                            "Ta Hf Re".split())
STABILITY_TOXIC = {"Pb", "Cd", "Hg", "Tl", "Be", "As", "Sb", "Se", "U", "Th"}
STABILITY_ABUNDANT = set("H Li B C O F Na Mg Al Si P S Cl K Ca Sc Ti V Mn Fe Co Ni Cu Zn Ga Rb Sr Y Zr Nb La Ce "
                         "Nd".split())
ELEMENTS = """H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr
Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W
Re Os Ir Pt Au Hg Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr Rf Db Sg Bh Hs Mt Ds Rg
Cn Nh Fl Mc Lv Ts Og""".split()
assert len(ELEMENTS) == 118 and len(STABILITY_ABUNDANT) == 33 and len(VALIDITY_NOT_ABUNDANT) == 32
BASE_FORMULA = {"photovoltaic-absorbers": "FeS2", "solid-state-electrolytes": "Li2O",
                "toxic-free-perovskite-oxide": "SrTiO3"}
MISSING = object()

NO_BRANCH = "evaluator bug: calculate_validity has no branch for '<' / '>', so such a constraint never holds there " \
            "(llema_literal 1 keeps that; 0 and 2 compare)"
NON_FINITE = "input: fastscore reads a value that is not a finite number as bad (the candidate is invalid, " \
             "its reason listed); the evaluator compares it as a float"
NOT_A_NUMBER = "input: fastscore reads a text as bad (the candidate is invalid); the evaluator's comparison " \
               "raises TypeError"
BOOLEAN = "input: fastscore reads true/false as bad (the candidate is invalid); the evaluator compares it as 1/0"
BAD_FORMULA = "input: fastscore parses the formula (a malformed one makes the candidate invalid); the evaluator " \
              "reads only [A-Z][a-z]? matches, and only for a task with composition constraints"
ALIAS = "input: fastscore reads the energy above hull under its aliases (e_above_hull, ehull); " \
        "calculate_stability only under energy_above_hull"


def _compare(value, op, bound, *, branches):
    """(ok, raised) of one numeric constraint as the evaluator writes it."""
    if value is MISSING or value is None:
        return False, False
    if op not in branches:
        return False, False
    try:
        if op == ">=":
            return value >= bound, False
        if op == "<=":
            return value <= bound, False
        if op == ">":
            return value > bound, False
        if op == "<":
            return value < bound, False
        return bound[0] <= value <= bound[1], False
    except TypeError:
        return False, True


def _species(formula):
    return set(re.findall(r"[A-Z][a-z]?", formula)) if isinstance(formula, str) else set()


def validity(task, candidate, *, strict_branches=False):
    """calculate_validity's verdict: '1' no violation, '0' one, 'error' it raises."""
    _, numeric, categorical = VALIDITY[task]
    branches = (">=", "<=", "in", ">", "<") if strict_branches else (">=", "<=", "in")
    ok = True
    for prop, op, bound in numeric:
        good, raised = _compare(candidate.get(prop, MISSING), op, bound, branches=branches)
        if raised:
            return "error"
        ok &= good
    if categorical:
        species = _species(candidate.get("formula"))
        if categorical.get("requires_any_element") and not any(
                any(e in species for e in group) for group in categorical["requires_any_element"]):
            ok = False
        if categorical.get("non_toxic") and species & VALIDITY_TOXIC:
            ok = False
        if categorical.get("earth_abundant") and species & VALIDITY_NOT_ABUNDANT:
            ok = False
        if species & set(categorical.get("exclude_elements", ())):
            ok = False
    return "1" if ok else "0"


def stability(task, candidate):
    """calculate_stability's is_candidate_valid: '1', '0' or 'error'."""
    _, numeric, categorical = VALIDITY[task]
    for prop, op, bound in numeric + STABILITY_EXTRA.get(task, []):
        good, raised = _compare(candidate.get(prop, MISSING), op, bound, branches=(">=", "<=", "in", ">", "<"))
        if raised:
            return "error"
        if not good:
            return "0"
    formula = candidate.get("formula")
    species = _species(formula)
    for name, value in categorical.items():
        if not formula:
            return "0"
        if name == "earth_abundant" and not species <= STABILITY_ABUNDANT:
            return "0"
        if name == "non_toxic" and species & STABILITY_TOXIC:
            return "0"
        if name == "requires_any_element" and not any(any(e in species for e in g) for g in value):
            return "0"
        if name == "exclude_elements" and species & set(value):
            return "0"
    return "1"


def _good_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def expected(rule, task, candidate, *, formula_ok, ehull_key="energy_above_hull"):
    """The flag fastscore must give under llema_literal = rule (docs/benchmarks.md)."""
    _, numeric, _ = VALIDITY[task]
    constraints = numeric + (STABILITY_EXTRA.get(task, []) if rule == 2 else [])
    values = dict(candidate)
    if ehull_key != "energy_above_hull" and ehull_key in values:
        values["energy_above_hull"] = values[ehull_key]
    if not formula_ok or not all(_good_number(values.get(p, MISSING)) for p, _, _ in constraints):
        return "0"
    if rule == 2:
        return stability(task, values)
    return validity(task, values, strict_branches=rule == 0)


def _mid(op, bound):
    if op == "in":
        return (bound[0] + bound[1]) / 2
    return bound + 1.0 if op in (">=", ">") else bound - 1.0


def _near(bound):
    """Values at and around one bound: (label, value)."""
    tiny = 1e-9 * max(1.0, abs(bound))
    out = [("at", bound), ("next float below", math.nextafter(bound, -math.inf)),
           ("next float above", math.nextafter(bound, math.inf)), ("1e-9 below", bound - tiny),
           ("1e-9 above", bound + tiny)]
    if bound == 0.0:
        out.append(("-0.0", -0.0))
    return out


def cases(task):
    """(case, candidate, formula_ok, ehull key) of one task."""
    _, numeric, categorical = VALIDITY[task]
    base = {"formula": BASE_FORMULA.get(task, "MgO"), **{p: _mid(op, b) for p, op, b in numeric},
            "energy_above_hull": 0.05}
    yield "base: every constraint met", base, True, "energy_above_hull"
    for prop, op, bound in numeric:
        bounds = [("lo", bound[0]), ("hi", bound[1])] if op == "in" else [(op, bound)]
        for side, b in bounds:
            for label, value in _near(b):
                yield f"{prop} {side} {b!r}: {label}", {**base, prop: value}, True, "energy_above_hull"
        for label, value in (("NaN", math.nan), ("+inf", math.inf), ("-inf", -math.inf), ("text", "n/a"),
                             ("true", True)):
            yield f"{prop}: {label}", {**base, prop: value}, True, "energy_above_hull"
        yield f"{prop}: missing", {k: v for k, v in base.items() if k != prop}, True, "energy_above_hull"
    if task in STABILITY_EXTRA:
        for label, value in _near(2.0):
            yield f"energy_above_hull 2.0: {label}", {**base, "energy_above_hull": value}, True, "energy_above_hull"
        yield "energy_above_hull: NaN", {**base, "energy_above_hull": math.nan}, True, "energy_above_hull"
        yield "energy_above_hull: missing", {k: v for k, v in base.items() if k != "energy_above_hull"}, True, \
            "energy_above_hull"
        aliased = {k: v for k, v in base.items() if k != "energy_above_hull"}
        yield "energy_above_hull as e_above_hull 1.5", {**aliased, "e_above_hull": 1.5}, True, "e_above_hull"
    if categorical:
        for element in ELEMENTS:
            yield f"element {element}", {**base, "formula": f"{element}O2"}, True, "energy_above_hull"
    else:
        for formula in ("PbTiO3", "Au2O", "ThO2", "CdSe"):
            yield f"no composition rule: {formula}", {**base, "formula": formula}, True, "energy_above_hull"
    for formula in ("Xq2", "li2o", "(MgO", "Mg2O3)"):
        yield f"malformed formula {formula}", {**base, "formula": formula}, False, "energy_above_hull"


def _difference(candidate, ehull_key, formula_ok, flags, validity_flag, stability_flag) -> str:
    notes = []
    values = [v for k, v in candidate.items() if k != "formula"]
    if flags[1] != validity_flag or flags[2] != stability_flag:
        if not formula_ok:
            notes.append(BAD_FORMULA)
        elif any(isinstance(v, str) for v in values):
            notes.append(NOT_A_NUMBER)
        elif any(isinstance(v, bool) for v in values):
            notes.append(BOOLEAN)
        elif any(isinstance(v, float) and math.isinf(v) for v in values):
            notes.append(NON_FINITE)
        elif ehull_key != "energy_above_hull":
            notes.append(ALIAS)
        else:
            raise AssertionError(f"an unexplained difference: {candidate}")
    if flags[0] != validity_flag and not notes:
        notes.append(NO_BRANCH)
    elif flags[1] == validity_flag and flags[0] != flags[1] and NO_BRANCH not in notes:
        notes.append(NO_BRANCH)
    return " | ".join(notes)


def rows():
    for task in VALIDITY:
        for case, candidate, formula_ok, ehull_key in cases(task):
            flags = [expected(rule, task, candidate, formula_ok=formula_ok, ehull_key=ehull_key) for rule in (0, 1, 2)]
            validity_flag, stability_flag = validity(task, candidate), stability(task, candidate)
            yield {"task": task, "case": case, "candidate": json.dumps(candidate),
                   "expect_0": flags[0], "expect_1": flags[1], "expect_2": flags[2],
                   "calculate_validity": validity_flag, "calculate_stability": stability_flag,
                   "difference": _difference(candidate, ehull_key, formula_ok, flags, validity_flag, stability_flag)}


def main() -> None:
    table = list(rows())
    with OUT.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(table)
    print(f"{OUT}: {len(table)} candidates")


if __name__ == "__main__":
    main()
