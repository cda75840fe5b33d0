"""SPEC §4: is a submitted expression equivalent to the reference over the domain?

The ladder, for one pair:

1. **numeric screen** (float64, compiled tapes): the two sides are compared at every
   point of the domain (random points over ``[min, max)`` of every variable plus the
   split points).  Two finite values agree when
   ``|a - b| <= rtol * max(|a|, |b|, zero_floor * scale)``, ``scale`` being the median
   magnitude of the reference: a relative test that stays relative for targets of any
   magnitude (no fixed absolute tolerance).  Points where both sides are non-finite
   are outside the valid domain and are skipped; a point where only one side is finite
   is a disagreement.
2. **high precision**: every float64 disagreement is re-evaluated with mpmath at
   ``precision_digits`` digits (worst first); float64 cancellation or overflow is
   thereby told apart from a real difference.  A confirmed disagreement gives
   ``different`` with the point as counterexample.
3. **proof**: a pair that agrees everywhere is handed to ``fastscore.canonical`` for an
   exact argument: ``proven`` if one is found, else ``numeric``.
4. ``undecided`` when fewer than ``min_finite_points`` valid points remain, or more
   float64 disagreements than ``max_precise_points`` could be re-checked.

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


def judge(candidate: se.Basic, reference: se.Basic, *, candidate_values: np.ndarray,
          reference_values: np.ndarray, domain: Domain, settings: Settings = DEFAULT_SETTINGS,
          reference_mp=None) -> Verdict:
    """Judge a pair from its float64 values at ``domain.points`` (see module doc).

    ``candidate`` may be None for a derived law known only by its values (a mechanism
    solved numerically): then float64 disagreements stand and no proof is tried.
    ``reference_mp`` optionally passes the reference's precompiled high-precision
    evaluator (``fastscore.precision.compile_mp``) so it is built once per problem.
    """
    a, b = np.asarray(candidate_values, float), np.asarray(reference_values, float)
    scale = _scale(b, a)
    finite = np.isfinite(a) & np.isfinite(b)
    close = finite & agree(a, b, scale, settings)
    suspicious = np.flatnonzero((np.isfinite(a) != np.isfinite(b)) | (finite & ~close))
    n_valid = int(close.sum())
    if suspicious.size and candidate is None:
        worst = int(suspicious[0])
        return _different(worst, float(a[worst]), float(b[worst]), domain)
    if suspicious.size:
        outcome = _recheck(candidate, reference, suspicious, a, b, scale, domain, settings, reference_mp)
        if isinstance(outcome, Verdict):
            return outcome
        n_valid += outcome
    rule = None if candidate is None else prove_equal(candidate, reference, positive=domain.positive)
    if rule is not None:
        return Verdict("proven", rule)
    if n_valid < settings.min_finite_points:
        return Verdict("undecided", f"only {n_valid} valid points in the domain")
    return Verdict("numeric", f"agree at {n_valid} points (rtol {settings.rtol:g})")


def agree(a: np.ndarray, b: np.ndarray, scale: float, settings: Settings) -> np.ndarray:
    """Elementwise agreement of finite values under the rule of the module doc."""
    with np.errstate(invalid="ignore", over="ignore"):
        bound = settings.rtol * np.maximum(np.maximum(np.abs(a), np.abs(b)), settings.zero_floor * scale)
        return np.abs(a - b) <= bound


def _scale(b: np.ndarray, a: np.ndarray) -> float:
    for values in (b, a):
        magnitudes = np.abs(values[np.isfinite(values)])
        if magnitudes.size:
            return float(np.median(magnitudes))
    return 0.0


def _recheck(candidate, reference, suspicious, a, b, scale, domain, settings, reference_mp):
    """High-precision re-evaluation of float64 disagreements, worst first.

    Returns a Verdict (``different`` or ``undecided``) or the change in the number of
    valid points: points where both sides turn out finite and agreeing count as valid,
    points where both are invalid do not."""
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        severity = np.abs(a[suspicious] - b[suspicious]) / np.maximum(np.abs(b[suspicious]), 1e-300)
    severity = np.where(np.isfinite(severity), severity, np.inf)
    order = suspicious[np.argsort(-severity, kind="stable")]
    candidate_mp, reference_mp = compile_mp(candidate), reference_mp or compile_mp(reference)
    gained = 0
    for checked, index in enumerate(order):
        if checked == settings.max_precise_points:
            return Verdict("undecided", f"{order.size} points unreliable in float64; "
                                        f"{checked} re-checked at high precision agree")
        point = domain.point(int(index))
        va = evaluate_mp(candidate_mp, point, digits=settings.precision_digits)
        vb = evaluate_mp(reference_mp, point, digits=settings.precision_digits)
        both_invalid = not np.isfinite(va) and not np.isfinite(vb)
        both_valid = np.isfinite(va) and np.isfinite(vb)
        if both_valid and agree(np.array([va]), np.array([vb]), scale, settings)[0]:
            gained += 1
            continue
        if both_invalid:
            continue
        return _different(int(index), va, vb, domain)
    return gained


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

