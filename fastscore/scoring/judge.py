"""The verdicts of a batch's laws: each candidate law judged against the reference
(``fastscore.algebra.equivalence``) with its split metrics, and for a solved mechanism
the reference quantities it recovers and the probes it holds as internal quantities.
Phenomenal formulas that canonicalise alike share one outcome; a copy of a mechanism
takes its original's, renamed; verdicts are memoised by the text judged
(``fastscore.scoring.memo``).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from fastscore.algebra.agreement import agree
from fastscore.algebra.equivalence import Quantity, Verdict, judge
from fastscore.scoring.candidates import Candidate
from fastscore.scoring.memo import Batch, ScoreMemo, formula_entry, verdict_entry
from fastscore.scoring.reference import Reference
from fastscore.scoring.rows import law_fields
from fastscore.scoring.structure import recovered_quantities
from fastscore.scoring.values import law_metrics
from fastscore.settings import Settings

__all__ = ["JudgedLaw", "LawOutcome", "judge_law", "judge_laws", "judged"]


@dataclass(frozen=True)
class LawOutcome:
    verdict: Verdict | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None
    in_mechanism: Mapping[str, str | None] | None = None  # probe -> equal internal quantity
    recovered: Mapping[str, tuple[str, ...]] | None = None  # reference quantity -> equal submitted ones


class JudgedLaw(NamedTuple):
    """A law key judged in this batch: its candidate, outcome and score-row columns so far."""

    candidate: Candidate
    outcome: LawOutcome
    fields: dict


def judge_laws(reference: Reference, batch: Batch, candidates: Mapping[tuple, Candidate], values, metrics,
               settings: Settings, memo: ScoreMemo) -> dict[tuple, JudgedLaw]:
    """Every candidate law not scored yet, judged, with its law columns, by law key."""
    shared_outcomes, outcomes, judged_laws = {}, {}, {}  # outcomes by law key, for its copies
    known: dict = {}  # closed forms against the reference quantities (`recovered_quantities`)
    for key, candidate in candidates.items():
        if batch.laws[key] is not None:
            continue
        # phenomenal formulas that canonicalise alike share one verdict
        shared = formula_entry(batch.task, candidate.text) if candidate.kind == "phenomenal" else None
        outcome = None if shared is None else shared_outcomes.get(shared) or memo.get(shared)
        if outcome is None:
            original = None if candidate.copy_of is None else outcomes.get(candidate.copy_of[0])
            outcome = judge_law(reference, candidate, values, metrics, settings, memo,
                                None if original is None else (original, candidate.copy_of[1]), known)
            outcomes[key] = outcome
            if shared is not None:
                shared_outcomes[shared] = outcome
                memo.put(shared, outcome)
        judged_laws[key] = JudgedLaw(candidate, outcome, law_fields(reference, candidate, outcome))
    return judged_laws


def judge_law(reference: Reference, candidate: Candidate, values, metrics, settings: Settings,
              memo: ScoreMemo, original: tuple[LawOutcome, Mapping[str, str]] | None = None,
              known: dict | None = None) -> LawOutcome:
    """The law's verdict and metrics, and the reference quantities its mechanism recovers;
    ``original``: the outcome of the mechanism this one copies, and the renaming (its
    quantities are that one's, renamed); ``known``: the batch's closed forms judged against
    the reference quantities so far (`recovered_quantities`)."""
    if candidate.status != "ok":
        return LawOutcome()
    if candidate.text is not None:
        predicted = values[candidate.text]
        if isinstance(predicted, str):
            return LawOutcome(error=predicted)
        own_metrics = metrics[candidate.text]
    else:  # a mechanism solved numerically: values only
        target = reference.problem.target.name
        predicted = Quantity(None, candidate.solution.values([target], reference.points)[target])
        own_metrics = law_metrics(reference, predicted.values[None, :], settings)[0]
    # renamed or reordered mechanisms derive the same law, judged once (a phenomenal
    # formula's whole outcome is shared already)
    verdict = judged(memo, reference, None, candidate.text if candidate.kind == "mechanism" else None,
                     predicted, settings)
    if candidate.solution is None:
        return LawOutcome(verdict=verdict, metrics=own_metrics)
    if original is not None and original[0].recovered is not None:
        outcome, mapping = original
        recovered = {name: tuple(mapping.get(n, n) for n in found) for name, found in outcome.recovered.items()}
        in_mechanism = {probe: None if found is None else mapping.get(found, found)
                        for probe, found in outcome.in_mechanism.items()}
    else:
        recovered = recovered_quantities(reference, candidate.solution, settings, known=known)
        in_mechanism = _probes_in_mechanism(reference, candidate.solution, recovered, settings)
    return LawOutcome(verdict=verdict, metrics=own_metrics, recovered=recovered, in_mechanism=in_mechanism)


def _probes_in_mechanism(reference: Reference, solution, recovered: Mapping[str, tuple[str, ...]],
                         settings: Settings) -> dict[str, str | None]:
    """For each reference probe, the internal quantity of a submitted mechanism that is
    equivalent to it (whatever the submitter named it), or None: from the reference
    quantities the submission recovers (``recovered``), else sought among its quantities."""
    found = {}
    target = reference.problem.target.name
    internal = values = None
    for probe, expected in reference.probes.items():
        if probe in recovered:
            found[probe] = recovered[probe][0] if recovered[probe] else None
            continue
        if internal is None:
            internal = [n for n in (*solution.expressions, *solution.numeric) if n != target]
            values = solution.values(internal, reference.points) if internal else {}
        found[probe] = next((name for name in internal if _likely_equal(values[name], expected.values, settings)
                             and judge(Quantity(solution.expressions.get(name), values[name]), expected,
                                       domain=reference.domain, settings=settings, prove=False).equivalent), None)
    return found


def _likely_equal(a: np.ndarray, b: np.ndarray, settings: Settings) -> bool:
    """A float64 pre-screen of a diagnostic pair: finite on the same points and agreeing
    within ``rtol`` at most of them (the full judgement re-checks the rest exactly)."""
    finite = np.isfinite(a)
    if not np.array_equal(finite, np.isfinite(b)) or not finite.any():
        return False
    return bool(agree(a[finite], b[finite], rtol=settings.rtol).mean() >= 0.5)


def judged(memo: ScoreMemo, reference: Reference, probe: str | None, text: str | None, predicted: Quantity,
           settings: Settings) -> Verdict:
    """The verdict of ``predicted`` against the law (``probe`` None) or a probe; memoised
    by ``text``, the expression it holds the values of (a verdict depends on nothing
    else), unless that is None."""
    key = None if text is None else verdict_entry(reference.problem.task_id, probe, text)
    verdict = None if key is None else memo.get(key)
    if verdict is None:
        expected = reference.law if probe is None else reference.probes[probe]
        verdict = judge(predicted, expected, domain=reference.domain, settings=settings)
        if key is not None:
            memo.put(key, verdict)
    return verdict
