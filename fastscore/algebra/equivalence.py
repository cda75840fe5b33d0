"""Is a submitted expression equivalent to the reference over the domain?

The ladder, for one pair:

1. **numeric screen** (float64, compiled tapes): the two sides are compared at every
   point of the domain (random points over ``[min, max)`` of every variable plus the
   split points).  Two finite values agree when ``|a - b| <= rtol * max(|a|, |b|)``:
   purely relative, so a target of 1e-10 is judged as strictly as one of 1e+10 (no
   absolute tolerance).  A point is *unreliable* in float64 when the sides disagree,
   when only one side is finite, or when both are exactly zero (cancellation can turn
   two different values into 0.0).
2. **certified difference**: at the unreliable points where the sides disagree most,
   the candidate is re-run with a running error bound (``kernels.bounds``; the
   reference's bounds are computed once per problem).  A disagreement far larger than
   both bounds is not a float64 artefact: ``different``, with that point; so is a point
   where one side is certainly undefined (a function of an operand certainly outside
   its domain) and the other certainly defined.  When the worst points include one
   defined on one side only that the bounds cannot certify, the worst points defined
   on both sides are tried too.
3. **high precision**: every other unreliable point is re-evaluated with SymEngine
   MPFR / mpmath at ``precision_digits`` digits: the worst few first, so a real
   difference shows at once, then the rest.  When more than ``PROOF_FIRST`` are left
   after the worst few, the proof (4) is tried first, and a proven pair needs no
   re-check of them (an exact argument holds at every point).  Two values that disagree there but are
   both rounding residues of an exact zero (each shrinks by at least half the digits
   when re-evaluated at twice the precision) agree: a region where both sides vanish
   is not a counterexample.  Nor is a point where one side is exactly zero and both
   are zero within their *tolerance bands* (`_Bands`): where a side's terms cancel,
   its value is judged against the size of those terms, not against the value
   itself, so a constant within ``rtol`` (a decimal ``4.8076923076923e-05`` for
   ``1/20800`` in a clamp that cancels to 0) is not a counterexample.  Points
   undefined on both sides in float64
   are sampled (``invalid_samples``); if any of them is defined at high precision (an
   overflow), all of them are re-checked.  A confirmed disagreement, or a point
   defined on one side only, gives ``different`` with the point as counterexample.
4. **proof**: a pair that agrees everywhere is handed to ``fastscore.algebra.canonical`` for an
   exact argument: ``proven`` if one is found, else ``numeric``.  No proof is tried
   when the error bounds show the sides are not exactly equal at some point (a fitted
   constant within ``rtol``): no exact argument can exist, the verdict is ``numeric``.
   When the cheap rules fail, the costly ones (expansions) are skipped if the sides
   differ at high precision at the point where float64 sees them most apart (a
   decimal ``pi``: too close for the bounds, far apart at 50 digits).
5. ``undecided`` when fewer than ``min_finite_points`` valid points remain, or more
   unreliable points than ``max_precise_points`` (all points, by default) could be
   re-checked.

``proven`` and ``numeric`` mean equivalent.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Mapping, get_args

import numpy as np
import symengine as se

from fastscore.algebra.agreement import agrees
from fastscore.algebra.canonical import prove_equal
from fastscore.algebra.precision import Precise
from fastscore.kernels import TINY, Screen, Tape, classify, evaluate, evaluate_bounded, screen, worst
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.tapes.compile import compile_tape

Provenance = Literal["proven", "numeric", "different", "undecided"]
PROVENANCES: tuple[Provenance, ...] = get_args(Provenance)
EQUIVALENT: frozenset[Provenance] = frozenset({"proven", "numeric"})
_EARLY_CHECKS = 8
CERTAINTY = 4.0
"""Safety factor on the error bounds of a certified difference (step 2)."""


@dataclass(frozen=True)
class Verdict:
    """Outcome of one comparison: provenance, reason and, if different, the point."""

    provenance: Provenance
    reason: str = ""
    counterexample: Mapping[str, float] | None = None

    @property
    def equivalent(self) -> bool:
        return self.provenance in EQUIVALENT

    def __post_init__(self):
        if self.provenance not in PROVENANCES:
            raise ValueError(f"unknown provenance {self.provenance!r}; expected one of {', '.join(PROVENANCES)}")


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
        return dict(zip(self.names, self.points[:, index].tolist()))


@dataclass(frozen=True, eq=False)
class Quantity:
    """One side of a comparison.

    expr: the expression, or None for a law known only by its values (a mechanism
    solved numerically: its float64 disagreements stand and no proof is tried);
    values: float64 values at every point of the domain;
    tape: the compiled expression, when at hand (certified differences, step 2);
    errors: error bounds of ``values`` at every point, when computed in advance (the
    reference side: once per problem, see ``bounded``).
    """

    expr: se.Basic | None
    values: np.ndarray
    tape: Tape | None = None
    errors: np.ndarray | None = None

    @classmethod
    def bounded(cls, expr: se.Basic, domain: Domain) -> Quantity:
        """``expr`` evaluated at every point of ``domain``, with error bounds."""
        tape = compile_tape(expr, domain.names)
        values, errors = evaluate_bounded(tape, domain.points, np.arange(domain.points.shape[1]))
        return cls(expr, values, tape, errors)

    @cached_property
    def mp(self) -> Precise:
        """The high-precision evaluator of ``expr`` (built on first use)."""
        return Precise(self.expr)


def compare(candidate: se.Basic, reference: se.Basic, *, domain: Domain,
            settings: Settings = DEFAULT_SETTINGS) -> Verdict:
    """Judge ``candidate ≡ reference`` over ``domain`` (evaluates both sides)."""
    tape = compile_tape(candidate, domain.names)
    return judge(Quantity(candidate, evaluate(tape, domain.points), tape), Quantity.bounded(reference, domain),
                 domain=domain, settings=settings)


def judge(candidate: Quantity, reference: Quantity, *, domain: Domain,
          settings: Settings = DEFAULT_SETTINGS, prove: bool = True) -> Verdict:
    """Judge a pair from its values at ``domain.points`` (see module doc); with
    ``prove=False`` the proof rung is skipped (agreement is then ``numeric``: the same
    answer to "equivalent?", for diagnostics that need no provenance)."""
    if candidate.expr is not None and candidate.expr == reference.expr:
        return Verdict("proven", "identical")  # the same tree: the same value at every point
    screened = screen(candidate.values, reference.values, rtol=settings.rtol, k=_EARLY_CHECKS)
    if candidate.expr is None:
        if screened.n_unreliable:
            index = int(screened.worst[0])
            return _different(index, float(candidate.values[index]), float(reference.values[index]), domain)
        n_valid = screened.n_trusted
    else:
        proof = _Proof(candidate, reference, domain, settings, screened) if prove else None
        outcome = _Recheck(candidate, reference, domain, settings, proof).run(screened)
        if isinstance(outcome, Verdict):
            return outcome
        n_valid = screened.n_trusted + outcome
        rule = None if proof is None else proof.rule
        if rule is not None:
            return Verdict("proven", rule)
    if n_valid < settings.min_finite_points:
        return Verdict("undecided", f"only {n_valid} valid points in the domain")
    return Verdict("numeric", f"agree at {n_valid} points (rtol {settings.rtol:g})")


class _Proof:
    """The proof rung (`prove_equal`), tried once: skipped where the float64 error bounds
    show the sides are not exactly equal, or a high-precision value refutes it."""

    def __init__(self, candidate: Quantity, reference: Quantity, domain: Domain, settings: Settings,
                 screened: Screen):
        self.candidate, self.reference, self.domain = candidate, reference, domain
        self.settings, self.screened = settings, screened

    @cached_property
    def rule(self) -> str | None:
        """The rule that proves the pair equal, or None."""
        candidate, reference, domain, apart = self.candidate, self.reference, self.domain, self.screened.apart
        if _separated(candidate, reference, domain, apart, rtol=0.0) is not None:
            return None
        return prove_equal(candidate.expr, reference.expr, positive=domain.positive,
                           refuted=lambda: _unequal_precisely(candidate, reference, domain, apart,
                                                              self.settings.precision_digits))


PROOF_FIRST = 64
"""With more unreliable points than this left after the worst few agree at high
precision, the proof is tried before re-checking them: proven, they need no re-check."""


class _Recheck:
    """The points float64 cannot settle: certified differences, then high precision
    (the bulk of them after the ``proof``, when there are many)."""

    def __init__(self, candidate: Quantity, reference: Quantity, domain: Domain, settings: Settings,
                 proof: _Proof | None = None):
        self.candidate, self.reference = candidate, reference
        self.domain, self.settings = domain, settings
        self.proof = proof
        self._rng = None
        self.bands = _Bands(candidate, reference, domain, settings.rtol)

    @property
    def rng(self) -> np.random.Generator:
        if self._rng is None:
            self._rng = np.random.default_rng(self.settings.point_seed)
        return self._rng

    def run(self, screened: Screen) -> Verdict | int:
        """A ``different``/``undecided`` verdict, or the number of points found valid
        and agreeing.  Unreliable points: the worst few first (a real difference shows
        at once, certified by error bounds when possible), then the rest in random
        order.  Points undefined on both sides: a random sample; if one of them is
        defined at high precision (float64 overflow), all of them are re-checked."""
        top = screened.worst
        certified = self._certified(top)
        if certified is not None:
            return certified
        if not (screened.n_unreliable or screened.n_invalid):
            return 0
        unreliable, invalid = classify(self.candidate.values, self.reference.values, rtol=self.settings.rtol)
        certified = self._certified_where_finite(unreliable, top)
        if certified is not None:
            return certified
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
                top = worst(self.candidate.values, self.reference.values, unreliable, k=_EARLY_CHECKS)
        if not unreliable.size:
            return valid
        outcome = self._check(top)  # a real difference usually shows here
        if isinstance(outcome, Verdict):
            return outcome
        valid += outcome[0]
        rest = self.rng.permutation(np.setdiff1d(unreliable, top, assume_unique=True))
        if rest.size > PROOF_FIRST and self.proof is not None and self.proof.rule is not None:
            return valid  # proven equal: the other points need no re-check
        if unreliable.size > self.settings.max_precise_points:
            outcome = self._check(rest[:max(0, self.settings.max_precise_points - top.size)])
            if isinstance(outcome, Verdict):
                return outcome
            return Verdict("undecided", f"{unreliable.size} points unreliable in float64; "
                                        f"{self.settings.max_precise_points} re-checked at high precision agree")
        outcome = self._check(rest)
        return outcome if isinstance(outcome, Verdict) else valid + outcome[0]

    def _certified(self, points: np.ndarray) -> Verdict | None:
        """``different`` at the first of ``points`` where the sides provably disagree
        beyond ``rtol``, or None."""
        separated = _separated(self.candidate, self.reference, self.domain, points, rtol=self.settings.rtol,
                               bands=self.bands)
        return None if separated is None else _different(*separated, self.domain)

    def _certified_where_finite(self, unreliable: np.ndarray, top: np.ndarray) -> Verdict | None:
        """``_certified`` at the worst of the ``unreliable`` points that are finite on both
        sides, when the ``top`` points include one defined on one side only (which error
        bounds cannot always certify; high precision can, at a far higher cost)."""
        a, b = self.candidate.values, self.reference.values
        if self.candidate.tape is None or self.reference.errors is None or (
                np.isfinite(a[top]).all() and np.isfinite(b[top]).all()):
            return None  # no bounds, or the worst finite points were tried already
        finite = unreliable[np.isfinite(a[unreliable]) & np.isfinite(b[unreliable])]
        return self._certified(worst(a, b, finite, k=_EARLY_CHECKS)) if finite.size else None

    def _check(self, points: np.ndarray) -> Verdict | tuple[int, bool]:
        """(valid agreeing points, whether any point was defined) or ``different``."""
        valid, defined = 0, False
        digits, rtol = self.settings.precision_digits, self.settings.rtol
        for index in points.tolist():
            point = self.domain.point(index)
            va = self.candidate.mp.value(point, digits=digits)
            vb = self.reference.mp.value(point, digits=digits)
            if not math.isfinite(va) and not math.isfinite(vb):
                continue
            defined = True
            if math.isfinite(va) and math.isfinite(vb) and (
                    agrees(va, vb, rtol=rtol) or self._both_vanish(point, va, vb, digits)
                    or self._zero_within_bands(index, point, va, vb, digits)):
                valid += 1
                continue
            return _different(index, va, vb, self.domain)
        return valid, defined

    def _zero_within_bands(self, index: int, point: Mapping[str, float], va: float, vb: float, digits: int) -> bool:
        """One side is exactly zero at ``point`` (0.0, or a rounding residue of 0 as in
        `_both_vanish`) and both are zero within their tolerance bands (`_Bands`): the
        other side's value is what its constants, each within ``rtol``, leave of terms
        that cancel.  Two non-zero values (``1 - cos(x)`` against ``2*(1 - cos(x))`` at a
        tiny ``x``) are judged by the relative rule alone."""
        if not self.bands.zero(index, va, vb):
            return False
        return any(value == 0.0 or _residue(value, side.mp.value(point, digits=2 * digits), digits)
                   for value, side in ((va, self.candidate), (vb, self.reference)))

    def _both_vanish(self, point: Mapping[str, float], va: float, vb: float, digits: int) -> bool:
        """Both sides are exactly zero at ``point``: what ``digits`` digits give is a rounding
        residue of 0 on each side (a clamp ``(1 + |c| - |c - 1|)/2`` at ``c <= 0``), which
        shrinks by at least ``10**(-digits/2)`` at twice the precision; a true value stays."""
        return all(value == 0.0 or _residue(value, side.mp.value(point, digits=2 * digits), digits)
                   for value, side in ((va, self.candidate), (vb, self.reference)))


def _separated(candidate: Quantity, reference: Quantity, domain: Domain, points: np.ndarray, *,
               rtol: float, bands: _Bands | None = None) -> tuple[int, float, float] | None:
    """The first of ``points`` where the exact values of the two sides differ by more
    than ``rtol`` (relative), or exist on one side only, as the float64 error bounds
    prove: (point, candidate value, reference value); None if no point is proven so (or
    bounds are missing).  With ``rtol=0``: a point where the sides are provably not
    exactly equal.  A point where both sides are zero within their tolerance ``bands``
    is not a difference beyond ``rtol``."""
    tape, errors = candidate.tape, reference.errors
    if tape is None or errors is None or not points.size:
        return None
    values, bounds = evaluate_bounded(tape, domain.points, points)
    for index, a, ea in zip(points.tolist(), values.tolist(), bounds.tolist()):
        b, eb = float(reference.values[index]), float(errors[index])
        if _undefined(a, ea) and _defined(b, eb) or _undefined(b, eb) and _defined(a, ea):
            return index, a, b  # defined on one side only
        margin = CERTAINTY * (ea + eb)  # inf when either bound is unknown
        if abs(a - b) - margin > rtol * (max(abs(a), abs(b)) + margin):
            if bands is not None and (abs(a) <= CERTAINTY * ea or abs(b) <= CERTAINTY * eb) \
                    and bands.zero(index, a, b):
                continue  # one side may be exactly 0: left to the high-precision test
            return index, a, b
    return None


class _Bands:
    """The tolerance band of each side, at a point (computed on first use there): how far
    its value may move when each of its constants moves by ``rtol`` (relative), from
    ``kernels.bounds.evaluate_bounded(..., constant_rtol=rtol)``.  Where a side's terms
    cancel, the band is ``rtol`` times the size of the cancelling terms (carried through
    what follows), while its value may be far smaller: exactly 0 on one side and a
    residue of a constant off by 1e-15 on the other.  Such a point, where one side is
    exactly zero and both are zero within their bands, is no counterexample
    (`_Recheck._zero_within_bands`); the float64 certificate (`_separated`) leaves every
    point where one side may be 0 and both are zero within their bands to that
    high-precision test.  A side
    with no expression or no known band there (``inf``) never qualifies."""

    def __init__(self, candidate: Quantity, reference: Quantity, domain: Domain, rtol: float):
        self.sides, self.domain, self.rtol = (candidate, reference), domain, rtol
        self._tapes: list | None = None
        self._bands: dict[int, tuple[float, float]] = {}

    def _at(self, index: int) -> tuple[float, float]:
        """The two bands at point ``index`` (evaluated on first use)."""
        if index not in self._bands:
            if self._tapes is None:
                self._tapes = [None if side.expr is None else side.tape if side.tape is not None
                               else compile_tape(side.expr, self.domain.names) for side in self.sides]
            column = np.array([index])
            self._bands[index] = tuple(
                math.inf if tape is None else
                float(evaluate_bounded(tape, self.domain.points, column, constant_rtol=self.rtol)[1][0])
                for tape in self._tapes)
        return self._bands[index]

    def zero(self, index: int, a: float, b: float) -> bool:
        """Both sides (values ``a``, ``b`` at point ``index``) are zero within their bands."""
        if self.rtol <= 0.0:
            return False
        band_a, band_b = self._at(index)
        return math.isfinite(band_a) and math.isfinite(band_b) and abs(a) <= band_a and abs(b) <= band_b


def _residue(value: float, finer: float, digits: int) -> bool:
    """``value`` (at ``digits`` digits) is a rounding residue of 0: ``finer`` (at twice
    the digits) is far smaller."""
    return finer == 0.0 or abs(finer) <= abs(value) * 10.0 ** (-digits / 2)


def _undefined(value: float, bound: float) -> bool:
    """Certainly no real value (``kernels.bounds``: NaN with a bound of 0)."""
    return bound == 0.0 and value != value


def _defined(value: float, bound: float) -> bool:
    """Certainly a finite real value (finite, with a finite bound)."""
    return math.isfinite(value) and math.isfinite(bound)


def _unequal_precisely(candidate: Quantity, reference: Quantity, domain: Domain, points: np.ndarray,
                       digits: int) -> bool:
    """True when, at the first of ``points``, the exact values of the two sides differ
    as a ``digits``-digit evaluation shows: by more than a relative ``10**(-digits/2)``,
    which that evaluation's rounding cannot explain unless half its digits cancel (at a
    point float64 trusts, a handful at most).  False when it cannot tell."""
    if not points.size:
        return False
    point = domain.point(int(points[0]))
    a, b = candidate.mp.number(point, digits=digits), reference.mp.number(point, digits=digits)
    if a is None or b is None:
        return False
    scale = max(abs(float(a)), abs(float(b)))
    return scale > 0 and abs(float(a - b)) > scale * 10.0 ** (-digits / 2)


def _different(index: int, va: float, vb: float, domain: Domain) -> Verdict:
    """A ``different`` verdict with the point ``index`` as counterexample."""
    point = domain.point(index)
    example = {name: point[name] for name in domain.sampled}
    example.update(candidate=va, reference=vb)
    return Verdict("different", _difference_reason(va, vb), example)


def _difference_reason(va: float, vb: float) -> str:
    if math.isfinite(va) and math.isfinite(vb):
        relative = abs(va - vb) / max(abs(vb), TINY)
        return f"relative difference {relative:.3g} at the counterexample"
    return "defined at the counterexample on one side only"

