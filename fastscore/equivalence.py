"""SPEC §4: is a submitted expression equivalent to the reference over the domain?

The ladder, for one pair:

1. **numeric screen** (float64, compiled tapes): the two sides are compared at every
   point of the domain (random points over ``[min, max)`` of every variable plus the
   split points).  Two finite values agree when ``|a - b| <= rtol * max(|a|, |b|)``:
   purely relative, so a target of 1e-10 is judged as strictly as one of 1e+10 (no
   absolute tolerance).  A point is *unreliable* in float64 when the sides disagree,
   when only one side is finite, or when both are exactly zero (cancellation can turn
   two different values into 0.0).
2. **high precision**: every unreliable point is re-evaluated with mpmath at
   ``precision_digits`` digits: the worst few first, so a real difference shows at
   once, then the rest.  Points undefined on both sides in float64 are sampled
   (``invalid_samples``); if any of them is defined at high precision (an overflow),
   all of them are re-checked.  A confirmed disagreement, or a point defined on one
   side only, gives ``different`` with the point as counterexample.
3. **proof**: a pair that agrees everywhere is handed to ``fastscore.canonical`` for an
   exact argument: ``proven`` if one is found, else ``numeric``.
4. ``undecided`` when fewer than ``min_finite_points`` valid points remain, or more
   unreliable points than ``max_precise_points`` (all points, by default) could be
   re-checked.

``proven`` and ``numeric`` mean equivalent.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np
import symengine as se

from fastscore.canonical import prove_equal
from fastscore.kernels import compile_tape, evaluate
from fastscore.precision import compile_mp, evaluate_mp
from fastscore.settings import DEFAULT_SETTINGS, Settings

PROVENANCES = ("proven", "numeric", "different", "undecided")
EQUIVALENT = frozenset({"proven", "numeric"})
_EARLY_CHECKS = 8


@dataclass(frozen=True)
class Verdict:
    """Outcome of one comparison: provenance, reason and, if different, the point."""

    provenance: str
    reason: str = ""
    counterexample: Mapping[str, float] | None = None

    @property
    def equivalent(self) -> bool:
        return self.provenance in EQUIVALENT


@dataclass(frozen=True)
class Domain:
    """The points a comparison is judged on.

    names: row order of ``points`` (sampled variables first, then constants);
    sampled: the names that vary (reported in counterexamples);
    positive: names whose every value in the domain is positive (enables the
    positive-base identities of the proof rung).
    """

    names: tuple[str, ...]
    points: np.ndarray
    sampled: tuple[str, ...]
    positive: frozenset[str] = field(default_factory=frozenset)

    def point(self, index: int) -> dict[str, float]:
        """Values of every name at one point."""
        return {name: float(self.points[row, index]) for row, name in enumerate(self.names)}


def compare(candidate: se.Basic, reference: se.Basic, *, domain: Domain,
            settings: Settings = DEFAULT_SETTINGS) -> Verdict:
    """Judge ``candidate ≡ reference`` over ``domain`` (evaluates both sides)."""
    values = evaluate([compile_tape(e, domain.names) for e in (candidate, reference)], domain.points)
    return judge(candidate, reference, candidate_values=values[0], reference_values=values[1],
                 domain=domain, settings=settings)


def judge(candidate: se.Basic | None, reference: se.Basic, *, candidate_values: np.ndarray,
          reference_values: np.ndarray, domain: Domain, settings: Settings = DEFAULT_SETTINGS,
          reference_mp=None) -> Verdict:
    """Judge a pair from its float64 values at ``domain.points`` (see module doc).

    ``candidate`` may be None for a derived law known only by its values (a mechanism
    solved numerically): then float64 disagreements stand and no proof is tried.
    ``reference_mp`` optionally passes the reference's precompiled high-precision
    evaluator (``fastscore.precision.compile_mp``) so it is built once per problem.
    """
    a, b = np.asarray(candidate_values, float), np.asarray(reference_values, float)
    finite_a, finite_b = np.isfinite(a), np.isfinite(b)
    both = finite_a & finite_b
    close = both & agree(a, b, settings)
    if candidate is None:
        wrong = np.flatnonzero((finite_a != finite_b) | (both & ~close))
        if wrong.size:
            return _different(int(wrong[0]), float(a[wrong[0]]), float(b[wrong[0]]), domain)
        n_valid = int(close.sum())
    else:
        trusted = close & ~((a == 0) & (b == 0))  # 0 == 0 may be cancellation on both sides
        unreliable = np.flatnonzero((finite_a != finite_b) | (both & ~trusted))
        invalid = np.flatnonzero(~finite_a & ~finite_b)
        outcome = _Recheck(candidate, reference, reference_mp, a, b, domain, settings).run(unreliable, invalid)
        if isinstance(outcome, Verdict):
            return outcome
        n_valid = int(trusted.sum()) + outcome
        rule = prove_equal(candidate, reference, positive=domain.positive)
        if rule is not None:
            return Verdict("proven", rule)
    if n_valid < settings.min_finite_points:
        return Verdict("undecided", f"only {n_valid} valid points in the domain")
    return Verdict("numeric", f"agree at {n_valid} points (rtol {settings.rtol:g})")


def agree(a: np.ndarray, b: np.ndarray, settings: Settings) -> np.ndarray:
    """Elementwise relative agreement: ``|a - b| <= rtol * max(|a|, |b|)``."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.abs(a - b) <= settings.rtol * np.maximum(np.abs(a), np.abs(b))


class _Recheck:
    """High-precision re-evaluation of the points float64 cannot settle."""

    def __init__(self, candidate, reference, reference_mp, a, b, domain: Domain, settings: Settings):
        self.candidate, self.reference, self.reference_mp = candidate, reference, reference_mp
        self.a, self.b, self.domain, self.settings = a, b, domain, settings
        self.candidate_mp = None
        self._rng = None

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng(self.settings.point_seed)
        return self._rng

    def run(self, unreliable: np.ndarray, invalid: np.ndarray) -> Verdict | int:
        """A ``different``/``undecided`` verdict, or the number of points found valid
        and agreeing.  Unreliable points: the worst few first (a real difference shows
        at once), then the rest in random order.  Points undefined on both sides: a
        random sample; if one of them is defined at high precision (float64 overflow),
        all of them are re-checked."""
        valid = 0
        if invalid.size:
            shuffled = self.rng.permutation(invalid)
            sample = shuffled[:self.settings.invalid_samples]
            outcome = self._check(sample)
            if isinstance(outcome, Verdict):
                return outcome
            valid += outcome[0]
            if outcome[1]:  # an overflow in float64: every undefined point is in doubt
                unreliable = np.concatenate([unreliable, shuffled[self.settings.invalid_samples:]])
        if not unreliable.size:
            return valid
        worst, rest = self._split_worst(unreliable)
        outcome = self._check(worst)  # a real difference usually shows here
        if isinstance(outcome, Verdict):
            return outcome
        valid += outcome[0]
        rest = self.rng.permutation(rest)
        if worst.size + rest.size > self.settings.max_precise_points:
            outcome = self._check(rest[:max(0, self.settings.max_precise_points - worst.size)])
            if isinstance(outcome, Verdict):
                return outcome
            return Verdict("undecided", f"{unreliable.size} points unreliable in float64; "
                                        f"{self.settings.max_precise_points} re-checked at high precision agree")
        outcome = self._check(rest)
        return outcome if isinstance(outcome, Verdict) else valid + outcome[0]

    def _split_worst(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ``_EARLY_CHECKS`` points with the largest float64 disagreement, and the others."""
        if points.size <= _EARLY_CHECKS:
            return points, points[:0]
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            severity = np.abs(self.a[points] - self.b[points]) / np.maximum(np.abs(self.b[points]), 1e-300)
        severity = np.where(np.isnan(severity), np.inf, severity)
        worst = np.argpartition(-severity, _EARLY_CHECKS)[:_EARLY_CHECKS]
        others = np.ones(points.size, dtype=bool)
        others[worst] = False
        return points[worst], points[others]

    def _check(self, points: np.ndarray) -> Verdict | tuple[int, bool]:
        """(valid agreeing points, whether any point was defined) or ``different``."""
        valid, defined = 0, False
        digits = self.settings.precision_digits
        for index in points:
            if self.candidate_mp is None:
                self.candidate_mp = compile_mp(self.candidate)
                self.reference_mp = self.reference_mp or compile_mp(self.reference)
            point = self.domain.point(int(index))
            va = evaluate_mp(self.candidate_mp, point, digits=digits)
            vb = evaluate_mp(self.reference_mp, point, digits=digits)
            if not np.isfinite(va) and not np.isfinite(vb):
                continue
            defined = True
            if np.isfinite(va) and np.isfinite(vb) and agree(np.array(va), np.array(vb), self.settings):
                valid += 1
                continue
            return _different(int(index), va, vb, self.domain)
        return valid, defined


def _different(index: int, va: float, vb: float, domain: Domain) -> Verdict:
    """A ``different`` verdict with the point ``index`` as counterexample."""
    point = domain.point(index)
    example = {name: point[name] for name in domain.sampled}
    example.update(candidate=va, reference=vb)
    return Verdict("different", _difference_reason(va, vb), example)


def _difference_reason(va: float, vb: float) -> str:
    if np.isfinite(va) and np.isfinite(vb):
        relative = abs(va - vb) / max(abs(vb), 1e-300)
        return f"relative difference {relative:.3g} at the counterexample"
    return "defined at the counterexample on one side only"

