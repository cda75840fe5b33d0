"""Scoring settings: every tolerance, count and seed in one documented place.

Every run writes these values to ``meta.json`` (SPEC §4, §6)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Tolerances and budgets of a scoring run.

    rtol: relative tolerance of the numeric equivalence check (SPEC §4).
    zero_floor: values whose magnitude is below ``zero_floor`` times the reference's
        median magnitude are compared against that floor instead of their own size,
        so a function crossing zero is not judged on float noise.  The floor scales
        with the target, so targets of 1e-10 m get the same treatment as 1e+10.
    n_points: random points drawn over the whole domain ``[min, max)`` of every
        variable for the equivalence check (the split points are added to them).
    min_finite_points: fewer finite points than this -> ``undecided``.
    precision_digits: significant digits of the high-precision re-evaluation.
    max_precise_points: most points re-evaluated at high precision per comparison;
        a pair with more unreliable points than this is ``undecided``.
    acc_tol: Acc tolerance on max relative error (``id_acc``/``ood_acc``).
    n_samples / data_seed: size and seed of the generated splits (SPEC §3).
    point_seed: seed of the equivalence points (combined with the task id).
    solve_budget: seconds allowed to a symbolic solve of one implicit block.
    """

    rtol: float = 1e-6
    zero_floor: float = 1e-9
    n_points: int = 256
    min_finite_points: int = 16
    precision_digits: int = 50
    max_precise_points: int = 512
    acc_tol: float = 0.1
    n_samples: int = 1000
    data_seed: int = 20260725
    point_seed: int = 0
    solve_budget: float = 2.0

    def as_dict(self) -> dict:
        """Plain dict for ``meta.json``."""
        return asdict(self)


DEFAULT_SETTINGS = Settings()
