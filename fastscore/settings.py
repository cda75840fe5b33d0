"""Scoring settings: every tolerance, count, seed, limit and budget of a run in one place.

Each setting is one field of ``Settings`` with its default, its allowed range and its
help text (the field's metadata); the CLI offers each scalar setting as a flag of the
same name (``n_points`` -> ``--n-points``), and every run writes the values to
``meta.json``.  ``limits`` (the parser's bounds on one submission,
``fastscore.text.tokens.Limits``) is set from Python only."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from fastscore.text.tokens import DEFAULT_LIMITS, Limits

__all__ = ["DEFAULT_SETTINGS", "Settings", "out_of_range", "scalar_settings"]

_NUMBER = (int, float)


def _setting(default, low, high, kind, help: str, *, changes_rows: bool = True):
    """A ``Settings`` field: default, inclusive range ``[low, high]``, type and help;
    ``changes_rows=False`` for one that cannot change a scored row (a run resumes
    across a change of it)."""
    return field(default=default, metadata={"range": (low, high), "kind": kind, "help": help,
                                            "changes_rows": changes_rows})


@dataclass(frozen=True, kw_only=True)
class Settings:
    """Tolerances, counts, seeds, limits and budgets of a scoring run (each field's
    help: ``fastscore score --help`` or ``scalar_settings()``)."""

    rtol: float = _setting(1e-6, 1e-15, 0.5, _NUMBER,
                           "relative tolerance of every agreement: equivalence, the solver's "
                           "consistency and branch checks")
    n_points: int = _setting(256, 1, 10**7, int,
                             "random points over the whole domain of every variable for the equivalence check "
                             "(the split points are added to them)")
    min_finite_points: int = _setting(16, 1, 10**7, int, "fewer finite points than this: undecided")
    precision_digits: int = _setting(50, 20, 10_000, int, "significant digits of the high-precision re-evaluation")
    max_precise_points: int = _setting(4096, 0, 10**8, int,
                                       "most points re-evaluated at high precision per comparison; more "
                                       "unreliable points than this: undecided")
    invalid_samples: int = _setting(32, 0, 10**7, int,
                                    "points undefined on both sides in float64 re-checked at high precision "
                                    "(a domain error or an overflow)")
    acc_tol: float = _setting(0.1, 0, 1e300, _NUMBER, "Acc tolerance on the max relative error (id_acc, ood_acc)")
    n_samples: int = _setting(1000, 1, 10**7, int, "rows of each generated split")
    data_seed: int = _setting(20260725, 0, 2**63 - 1, int, "seed of the generated splits")
    point_seed: int = _setting(0, 0, 2**63 - 1, int, "seed of the equivalence points (combined with the task id)")
    solve_budget: float = _setting(2.0, 0, 1e6, _NUMBER, "seconds allowed to the symbolic solve of one mechanism")
    structure_steps: int = _setting(200_000, 1, 10**9, int,
                                    "work units the graph match of a structure score may make before it keeps "
                                    "its best map")
    row_timeout: float = _setting(60.0, 0.001, 1e6, _NUMBER,
                                  "seconds a lone submission may take before it is a timeout row (a batch gets "
                                  "more, by its size; such rows are scored again on resume)", changes_rows=False)
    batch_rows: int = _setting(1000, 1, 10**7, int, "most submissions of one task an executor sends a worker at once",
                               changes_rows=False)
    ray_threshold: int = _setting(50_000, 0, 2**63 - 1, int,
                                  "sweep rows (estimated) from which --executor auto scores on Ray", changes_rows=False)
    memo_size: int = _setting(200_000, 1, 10**9, int,
                              "scored submissions a worker remembers (identical submissions are scored once)",
                              changes_rows=False)
    max_text_nodes: int = _setting(100_000, 1, 10**9, int,
                                   "a derived law larger than this tree is judged but not written out "
                                   "(derived_formula null)")
    # non-law benchmarks (fastscore.benchmarks; docs/benchmarks.md)
    llema_literal: int = _setting(0, 0, 2, int,
                                  "LLEMA constraint rules: 0 fastscore's (every operator; calculate_validity's "
                                  "element lists), 1 calculate_validity's literal (no '<'/'>' branch: such a "
                                  "constraint never holds), 2 calculate_stability's literal (Sb, U, Th toxic; "
                                  "earth-abundant read as an allowed list; a task's stability_constraints)")
    llema_stable_ehull: float = _setting(0.1, 0, 1e6, _NUMBER,
                                         "LLEMA stability: a hit with energy above hull <= this (eV/atom)")
    llema_pareto_hits_only: int = _setting(1, 0, 1, int,
                                           "LLEMA Pareto count over the attempt's hits (1) or over every "
                                           "candidate with the objectives' values (0)")
    dp_error_threshold: float = _setting(0.1, 0, 1e300, _NUMBER,
                                         "DiscoverPhysics pass: normalised trajectory error below this")
    dp_explanation_threshold: float = _setting(0.9, -1e300, 1e300, _NUMBER,
                                               "DiscoverPhysics pass: explanation score at least this")
    dp_integrator: int = _setting(0, 0, 1, int,
                                  "law-of-motion integrator: 0 fixed-step RK4, 1 velocity Verlet")
    dp_substeps: int = _setting(10, 1, 10**6, int,
                                "integration steps per interval between two held-out times")
    dp_max_work: int = _setting(10**8, 1, 10**12, int,
                                "most particle-steps a law-of-motion attempt may integrate (else eval_error)")
    limits: Limits = field(default=DEFAULT_LIMITS, metadata={"help": "the parser's bounds on one submission"})

    def __post_init__(self):
        """Reject a setting that would make every verdict meaningless (``rtol`` of -1
        or NaN makes every correct answer ``different``): ValueError, one line."""
        if not isinstance(self.limits, Limits):
            raise ValueError(f"setting limits must be a fastscore.text.tokens.Limits, got {self.limits!r}")
        for setting in scalar_settings():
            if (problem := out_of_range(setting, getattr(self, setting.name))) is not None:
                raise ValueError(f"setting {setting.name} {problem}")

    def as_dict(self) -> dict:
        """Plain dict for ``meta.json`` (``limits`` as a nested dict)."""
        return asdict(self)

    def row_dict(self) -> dict:
        """The settings that can change a scored row: a run resumes only when they are equal."""
        return {name: value for name, value in self.as_dict().items()
                if Settings.__dataclass_fields__[name].metadata.get("changes_rows", True)}


def out_of_range(setting, value) -> str | None:
    """Why ``value`` is not allowed for the scalar ``setting`` (a field of ``Settings``),
    e.g. ``must be an integer in [1, 10000000], got 0``; None when it is allowed.  The
    caller names the setting (its field, or its command-line flag)."""
    (low, high), kind = setting.metadata["range"], setting.metadata["kind"]
    ok = isinstance(value, kind) and not isinstance(value, bool) and low <= value <= high
    if ok and (kind is int or math.isfinite(value)):
        return None
    shown = "an integer" if kind is int else "a finite number"
    return f"must be {shown} in [{low}, {high}], got {value!r}"


def scalar_settings() -> tuple:
    """The number-valued fields of ``Settings`` (those the CLI offers as flags)."""
    return tuple(f for f in fields(Settings) if "range" in f.metadata)


DEFAULT_SETTINGS = Settings()
