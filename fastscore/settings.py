"""Scoring settings: every tolerance, count and seed in one documented place.

Every run writes these values to ``meta.json`` (SPEC §4, §6)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields


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

    def __post_init__(self):
        """Reject a setting that would make every verdict meaningless (``rtol`` of -1
        or NaN makes every correct answer ``different``): ValueError, one line."""
        for field in fields(self):
            value = getattr(self, field.name)
            low, high, kind = _RANGES[field.name]
            ok = isinstance(value, kind) and not isinstance(value, bool) and low <= value <= high
            if not ok or (kind is not int and not math.isfinite(value)):
                shown = "an integer" if kind is int else "a finite number"
                raise ValueError(f"setting {field.name} must be {shown} in [{low}, {high}], got {value!r}")

    def as_dict(self) -> dict:
        """Plain dict for ``meta.json``."""
        return asdict(self)


_NUMBER = (int, float)
_RANGES = {  # name -> (lowest, highest, type) of each setting
    "rtol": (1e-15, 0.5, _NUMBER),
    "n_points": (1, 10**7, int),
    "min_finite_points": (1, 10**7, int),
    "precision_digits": (20, 10_000, int),
    "max_precise_points": (0, 10**8, int),
    "invalid_samples": (0, 10**7, int),
    "acc_tol": (0, 1e300, _NUMBER),
    "n_samples": (1, 10**7, int),
    "data_seed": (0, 2**63 - 1, int),
    "point_seed": (0, 2**63 - 1, int),
    "solve_budget": (0, 1e6, _NUMBER),
    "structure_steps": (1, 10**9, int),
}

DEFAULT_SETTINGS = Settings()
