"""Scoring settings: every tolerance, count and seed in one documented place.

Every run writes these values to ``meta.json`` (SPEC §4, §6)."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Tolerances and budgets of a scoring run.

    rtol: relative tolerance of the numeric equivalence check (SPEC §4).
    n_points: random points drawn over the whole domain ``[min, max)`` of every
        variable for the equivalence check (the split points are added to them).
    min_finite_points: fewer finite points than this -> ``undecided``.
    precision_digits: significant digits of the high-precision re-evaluation.
    max_precise_points: most points re-evaluated at high precision per comparison;
        a pair with more unreliable points than this is ``undecided`` (the default
        covers every point of the default domain and splits).
    invalid_samples: points undefined on both sides in float64 re-checked at high
        precision to tell a domain error from an overflow.
    acc_tol: Acc tolerance on max relative error (``id_acc``/``ood_acc``).
    n_samples / data_seed: size and seed of the generated splits (SPEC §3).
    point_seed: seed of the equivalence points (combined with the task id).
    solve_budget: seconds allowed to a symbolic solve of one implicit block.
    structure_steps: work units (candidate gains, bound cells) the graph match of a mechanism's structure
        score may make before it keeps its best map (``fastscore.structure``).
    """

    rtol: float = 1e-6
    n_points: int = 256
    min_finite_points: int = 16
    precision_digits: int = 50
    max_precise_points: int = 4096
    invalid_samples: int = 32
    acc_tol: float = 0.1
    n_samples: int = 1000
    data_seed: int = 20260725
    point_seed: int = 0
    solve_budget: float = 2.0
    structure_steps: int = 200_000

    def as_dict(self) -> dict:
        """Plain dict for ``meta.json``."""
        return asdict(self)


DEFAULT_SETTINGS = Settings()
