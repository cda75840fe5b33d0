"""LLEMA materials screens: candidate sets against a task's constraints.

A task (YAML, ``benchmark: llema``): ``name``; ``constraints``: texts
``<property> in [lo, hi]``, ``<property> >= x``, ``<= x``, ``< x``, ``> x``;
``composition``: ``requires_any`` (elements, one of which must be present),
``exclude`` (elements), ``earth_abundant`` and ``non_toxic`` (true/false);
``objectives``: ``higher`` / ``lower`` (properties, higher or lower better);
``stability_constraints``: constraints calculate_stability's copy adds (applied under
``llema_literal = 2`` only); ``notes``.

A submission (an attempt): JSON, a list of candidates or ``{"candidates": [...]}``;
a candidate is ``{"formula": ..., "properties": {name: value}}`` (``property_values``
too, or the properties beside ``formula``), the oracle's values as the operator gives
them, the energy above hull as ``energy_above_hull`` (or ``e_above_hull``, ``ehull``).
A Materials Project record serves as a candidate as it is: its composition is read from
the first of ``FORMULA_KEYS`` (``formula_pretty``; ``composition`` as a text or an
element -> amount map) and ``formation_energy`` from ``formation_energy_per_atom`` when
the first is absent.

Per attempt, over its candidates with duplicates (same reduced composition,
``fastscore.benchmarks.formula.reduced``) counted once, the first kept:
- hit rate: share of candidates meeting every constraint (a candidate whose formula
  does not parse, or that lacks a constrained property or gives a non-number, is a
  candidate and not a hit; ``error`` lists the first reasons);
- stability rate: share of candidates that are hits with energy above hull
  <= ``llema_stable_ehull`` (0.1 eV/atom), over all candidates;
- Pareto count: candidates not dominated on the task's objectives (at least as good
  in each, better in one) among the hits (``llema_pareto_hits_only``; else among every
  candidate with all the objectives' values); equal vectors do not dominate each other.
The constraint rules follow ``llema_literal`` (settings; docs/benchmarks.md): 0 every
operator with calculate_validity's element lists; 1 calculate_validity's literal
(``<`` and ``>`` never hold); 2 calculate_stability's (Sb, U, Th also toxic;
earth-abundant read as its list of allowed elements; the task's ``stability_constraints``
too).  The energy above hull is read under any of ``EHULL_KEYS``; missing, or given but
not a finite number (a reason listed), the candidate is not stable (and may be a hit).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl

from fastscore.benchmarks.base import BadInput, Benchmark, base_fields, scored_rows, task_problem, yaml_format
from fastscore.benchmarks.formula import ELEMENTS, FormulaError, composition_of, reduced

NAME = "llema"
COLUMNS = {"mat_n_candidates": pl.Int64, "mat_n_duplicates": pl.Int64, "mat_n_invalid": pl.Int64,
           "mat_n_hits": pl.Int64, "mat_n_stable": pl.Int64, "mat_hit_rate": pl.Float64,
           "mat_stability_rate": pl.Float64, "mat_pareto_count": pl.Int64}
MINE = pl.col("domain") == NAME
RATES = [("mat_hit_rate", "LLEMA hit rate", pl.col("mat_hit_rate").filter(MINE).fill_null(0.0).mean(), True),
         ("mat_stability_rate", "LLEMA stable", pl.col("mat_stability_rate").filter(MINE).fill_null(0.0).mean(),
          True),
         ("mat_pareto_count", "LLEMA Pareto", pl.col("mat_pareto_count").filter(MINE).fill_null(0).mean(), True)]
OUTCOMES: list = []

TOXIC = frozenset({"Hg", "Cd", "Pb", "Tl", "As", "Be", "Se"})
"""calculate_validity's toxic elements (rules 0 and 1)."""
TOXIC_STABILITY = TOXIC | {"Sb", "U", "Th"}
"""calculate_stability's toxic elements (rule 2)."""
NOT_ABUNDANT = frozenset("Au Ag Pt Pd Rh Ir Os Ru La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Sc Y In Ga Ge Te "
                         "Ta Hf Re".split())
"""calculate_validity's elements that are not earth-abundant (rules 0 and 1)."""
ABUNDANT_STABILITY = frozenset("H Li B C O F Na Mg Al Si P S Cl K Ca Sc Ti V Mn Fe Co Ni Cu Zn Ga Rb Sr Y Zr Nb "
                               "La Ce Nd".split())
"""calculate_stability's earth-abundant elements, the only ones it allows (rule 2)."""
EHULL_KEYS = ("energy_above_hull", "e_above_hull", "ehull")
FORMULA_KEYS = ("formula", "formula_pretty", "reduced_formula", "composition")
"""Where a candidate's composition is read: the first of these it has (a formula text, or
for ``composition`` also an element -> amount map, as Materials Project records give)."""
FORMATION_KEYS = ("formation_energy", "formation_energy_per_atom")
"""A property read under a second name when the first is absent (Materials Project's)."""
OPERATORS = ("in", ">=", "<=", ">", "<")
_CONSTRAINT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(>=|<=|>|<|in)\s*(.+?)\s*$")
MAX_CANDIDATES = 100_000
MAX_REASONS = 3


def parse_constraint(text: str) -> tuple[str, str, object]:
    """``'band_gap in [0.7, 2.0]'`` -> ``('band_gap', 'in', (0.7, 2.0))``; raises ValueError."""
    match = _CONSTRAINT.match(str(text))
    if match is None:
        raise ValueError(f"constraint {text!r}: expected '<property> <op> <value>', op one of {', '.join(OPERATORS)}")
    name, op, rest = match.groups()
    if op == "in":
        bounds = re.fullmatch(r"\[\s*([^,\]]+)\s*,\s*([^\]]+)\s*\]", rest)
        if bounds is None:
            raise ValueError(f"constraint {text!r}: expected 'in [lo, hi]'")
        low, high = float(bounds.group(1)), float(bounds.group(2))
        if not low <= high:
            raise ValueError(f"constraint {text!r}: lo > hi")
        return name, op, (low, high)
    return name, op, float(rest)


def holds(value: float, op: str, bound, rule: int) -> bool:
    """Whether a property value meets one constraint under ``rule`` (``llema_literal``)."""
    if op == "in":
        return bound[0] <= value <= bound[1]
    if op == ">=":
        return value >= bound
    if op == "<=":
        return value <= bound
    if rule == 1:  # calculate_validity has no branch for '<' and '>': never met
        return False
    return value > bound if op == ">" else value < bound


def composition_ok(elements: frozenset, spec: Mapping, rule: int) -> bool:
    """Whether a candidate's elements meet the task's composition constraints."""
    need = spec.get("requires_any")
    if need and not elements & need:
        return False
    if elements & spec.get("exclude", frozenset()):
        return False
    if spec.get("non_toxic") and elements & (TOXIC_STABILITY if rule == 2 else TOXIC):
        return False
    if spec.get("earth_abundant"):
        if rule == 2 and not elements <= ABUNDANT_STABILITY:
            return False
        if rule != 2 and elements & NOT_ABUNDANT:
            return False
    return True


def _number(value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def _candidates(text: str) -> list:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise BadInput(f"not JSON: {str(error)[:80]}") from None
    if isinstance(data, Mapping):
        data = data.get("candidates")
    if not isinstance(data, list):
        raise BadInput("expected a JSON list of candidates (or {\"candidates\": [...]})")
    if len(data) > MAX_CANDIDATES:
        raise BadInput(f"more than {MAX_CANDIDATES} candidates")
    return data


def _properties(candidate: Mapping) -> dict:
    """A candidate's properties by name, the energy above hull as ``energy_above_hull``
    (the first of ``EHULL_KEYS`` given)."""
    found = {k: v for k, v in candidate.items() if k not in ("properties", "property_values", *FORMULA_KEYS)}
    for key in ("property_values", "properties"):
        if isinstance(candidate.get(key), Mapping):
            found.update(candidate[key])
    for keys in (EHULL_KEYS, FORMATION_KEYS):
        if keys[0] not in found:
            alias = next((k for k in keys[1:] if k in found), None)
            if alias is not None:
                found[keys[0]] = found[alias]
    return found


def _formula(candidate: Mapping):
    """The candidate's composition as given (the first of ``FORMULA_KEYS``), or None."""
    return next((candidate[key] for key in FORMULA_KEYS if candidate.get(key) is not None), None)


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is at least as good as ``b`` in every objective and better in one (all maximised)."""
    return all(x >= y for x, y in zip(a, b)) and any(x > y for x, y in zip(a, b))


def pareto_count(points: Sequence[Sequence[float]]) -> int:
    """How many points no other point dominates (equal points are both counted)."""
    return sum(not any(dominates(other, point) for other in points) for point in points)


def score_attempt(task: Mapping, text: str, settings) -> tuple[dict, str | None]:
    """The columns of one attempt and its reasons (None when every candidate was read)."""
    rule = settings.llema_literal
    constraints, names = (task["constraints"], task["properties"]) if rule != 2 else \
        (task["constraints"] + task["stability_constraints"], task["stability_properties"])
    seen, reasons = set(), []
    n = duplicates = invalid = hits = stable = 0
    front = []
    for index, candidate in enumerate(_candidates(text)):
        label = f"candidate {index}"
        if not isinstance(candidate, Mapping):
            n += 1
            invalid += 1
            reasons.append(f"{label}: not an object")
            continue
        given = _formula(candidate)
        label = f"candidate {index} ({str(given)[:30]})"
        try:
            composition = composition_of(given)
        except FormulaError as error:
            n += 1
            invalid += 1
            reasons.append(f"{label}: {error}")
            continue
        key = reduced(composition)
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        n += 1
        properties = _properties(candidate)
        values, bad = {}, []
        for name in names:
            raw = properties.get(name)
            value = _number(raw)
            if value is None:
                bad.append(f"property {name} {'missing' if raw is None else 'is not a finite number'}")
            values[name] = value
        if bad:
            invalid += 1
            reasons.append(f"{label}: {'; '.join(bad)}")
        raw = properties.get(EHULL_KEYS[0])
        ehull = _number(raw)
        if ehull is None and raw is not None and EHULL_KEYS[0] not in names:
            reasons.append(f"{label}: property {EHULL_KEYS[0]} is not a finite number (not stable)")
        hit = not bad and all(holds(values[p], op, bound, rule) for p, op, bound in constraints) \
            and composition_ok(frozenset(composition), task["composition"], rule)
        hits += hit
        stable += hit and ehull is not None and ehull <= settings.llema_stable_ehull
        objectives = task["objectives"]
        point = [_number(properties.get(p)) for p, _ in objectives]
        if (hit or not settings.llema_pareto_hits_only) and None not in point:
            front.append(tuple(value * sign for value, (_, sign) in zip(point, objectives)))
    fields = {"mat_n_candidates": n, "mat_n_duplicates": duplicates, "mat_n_invalid": invalid, "mat_n_hits": hits,
              "mat_n_stable": stable, "mat_hit_rate": hits / n if n else 0.0,
              "mat_stability_rate": stable / n if n else 0.0,
              "mat_pareto_count": pareto_count(front) if task["objectives"] else None}
    more = f" (+{len(reasons) - MAX_REASONS} more)" if len(reasons) > MAX_REASONS else ""
    return fields, ("; ".join(reasons[:MAX_REASONS]) + more) if reasons else None


def _elements(values, field: str) -> frozenset:
    values = values or []
    if not isinstance(values, list) or any(v not in ELEMENTS for v in values):
        raise ValueError(f"composition.{field}: expected a list of element symbols")
    return frozenset(values)


def _read_task(path: Path, root: Path, data: Mapping):
    constraints = tuple(parse_constraint(c) for c in data.get("constraints") or ())
    spec = data.get("composition") or {}
    composition = {"requires_any": _elements(spec.get("requires_any"), "requires_any"),
                   "exclude": _elements(spec.get("exclude"), "exclude"),
                   "earth_abundant": bool(spec.get("earth_abundant")), "non_toxic": bool(spec.get("non_toxic"))}
    objectives_spec = data.get("objectives") or {}
    objectives = tuple((p, 1.0) for p in objectives_spec.get("higher") or ()) + \
        tuple((p, -1.0) for p in objectives_spec.get("lower") or ())
    extra = tuple(parse_constraint(c) for c in data.get("stability_constraints") or ())
    task = {"constraints": constraints, "composition": composition, "objectives": objectives,
            "properties": tuple(dict.fromkeys(p for p, _, _ in constraints)), "stability_constraints": extra,
            "stability_properties": tuple(dict.fromkeys(p for p, _, _ in constraints + extra))}
    return task_problem(path, root, benchmark=NAME, task=task, name=str(data.get("name") or path.stem),
                        description=str(data.get("notes") or ""), family=data.get("family"))


def score_task(problem, rows: Sequence[Mapping], settings) -> list[dict]:
    """The score rows of a batch of attempts at one materials task (repeats scored once)."""
    base = base_fields(problem)

    def attempt(text: str):
        fields, reasons = score_attempt(problem.task, text, settings)
        return reasons, fields

    return scored_rows(rows, base, attempt)


BENCHMARK = Benchmark(NAME, yaml_format("llema", NAME, _read_task), score_task, COLUMNS)
