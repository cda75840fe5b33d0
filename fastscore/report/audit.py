"""An audit of a study's published scores: where fastscore and MechBench's harness disagree.

A sweep read from MechBench run folders carries the harness's own verdicts
(``harness_*`` columns, ``fastscore.sweeps.mechbench_runs``).  `harness_audit` lists every cell where
the harness's law verdict (``symbolically_equivalent``) differs from fastscore's
``p_equivalent``, and every probe where the harness's verdict (``ok`` and
``symbolically_equivalent``) differs from ``probe_equivalent``, each with both verdicts
and fastscore's evidence: its provenance, reason (the proof rule for ``proven``) and
counterexample (for ``different``).

Each disagreement has a ``kind`` (`DISAGREEMENTS`, one expression `law_kind` /
`probe_kind` per table), which says why the two differ:

- ``task_version``: the attempt ran against another version of its task file than the
  one scored here (``task_sha_mismatch``): the two judged different tasks;
- ``error``: one side could not judge (fastscore's row is not ``ok`` or has no
  verdict; the harness reported an error or ``ok: false``);
- ``constants_within_rtol``: fastscore ``numeric`` (equal within ``rtol``, not
  exactly), the harness not symbolically equivalent, and numerically equivalent on
  every split it reports (the agent's own physical constants, ``R = 8.31446261815324``
  for ``8.314462618``);
- ``domain``: the sides differ where one is undefined (fastscore's counterexample is
  defined on one side only, or it is ``undecided``), or fastscore ``numeric`` while the
  harness's data says numerically different;
- ``proof``: fastscore ``proven`` (an exact identity) and the harness not symbolically
  equivalent;
- ``structure``: fastscore ``different`` (a counterexample) and the harness equivalent:
  a different formula.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from fastscore.outputs.tables import OUTPUT
from fastscore.sweeps.mechbench_runs import HARNESS_PROBE_COLUMNS

__all__ = ["Audit", "DISAGREEMENTS", "harness_audit", "law_kind", "probe_kind"]

DISAGREEMENTS = ("task_version", "error", "constants_within_rtol", "domain", "proof", "structure")
"""The kinds of disagreement, in report order (see module doc)."""
ONE_SIDE = "defined at the counterexample on one side only"
"""The reason fastscore gives for a counterexample defined on one side only
(``fastscore.algebra.equivalence``)."""

LAW_COLUMNS = ("config", "run", "task", "p_equivalent", "p_verdict", "p_reason", "p_counterexample", "status",
               "error", "harness_p_equivalent", "harness_error", "harness_p_ok", "harness_train_numeric",
               "harness_id_numeric", "harness_ood_numeric", "task_sha_mismatch")
PROBE_COLUMNS = ("config", "run", "task", "probe", "probe_equivalent", "probe_verdict", "probe_reason",
                 "probe_counterexample", *HARNESS_PROBE_COLUMNS)


@dataclass(frozen=True)
class Audit:
    """Cells and probes the harness judged, and those where it disagrees with fastscore."""

    laws_compared: int
    law_disagreements: pl.DataFrame
    probes_compared: int
    probe_disagreements: pl.DataFrame

    def kind_counts(self) -> dict[str, tuple[int, int]]:
        """Per disagreement kind (in `DISAGREEMENTS` order, only those that occur): the
        number of (laws, probe answers) of that kind."""
        counts = {}
        for kind in DISAGREEMENTS:
            laws, probes = (int((frame["kind"] == kind).sum()) if frame.height else 0
                            for frame in (self.law_disagreements, self.probe_disagreements))
            if laws or probes:
                counts[kind] = (laws, probes)
        return counts


def _kind(verdict: pl.Expr, reason: pl.Expr, failed: pl.Expr, numerically_different: pl.Expr,
          other_version: pl.Expr) -> pl.Expr:
    """The disagreement kind (module doc) from fastscore's verdict and reason, whether
    either side failed to judge, whether the harness's data says the sides differ, and
    whether the attempt ran against another version of the task."""
    return (pl.when(other_version).then(pl.lit("task_version"))
            .when(failed | verdict.is_null()).then(pl.lit("error"))
            .when(verdict == "undecided").then(pl.lit("domain"))
            .when((verdict == "different") & reason.fill_null("").str.contains(ONE_SIDE, literal=True))
            .then(pl.lit("domain"))
            .when(verdict == "different").then(pl.lit("structure"))
            .when(verdict == "proven").then(pl.lit("proof"))
            .when(numerically_different).then(pl.lit("domain"))
            .otherwise(pl.lit("constants_within_rtol")))


def _column(frame_columns, name: str, default) -> pl.Expr:
    return pl.col(name) if name in frame_columns else pl.lit(default)


def law_kind(columns) -> pl.Expr:
    """The ``kind`` of a law disagreement, from the score columns at hand (``columns``)."""
    failed = ((_column(columns, "status", "ok").fill_null("ok") != "ok").fill_null(False)
              | _column(columns, "harness_p_ok", None).cast(pl.Boolean).not_().fill_null(False)
              | _column(columns, "harness_error", None).cast(pl.Utf8).is_not_null())
    numeric = [c for c in ("harness_train_numeric", "harness_id_numeric", "harness_ood_numeric") if c in columns]
    different = pl.any_horizontal([pl.col(c).not_().fill_null(False) for c in numeric]) if numeric else pl.lit(False)
    return _kind(pl.col("p_verdict"), _column(columns, "p_reason", None).cast(pl.Utf8), failed, different,
                 _other_version(columns))


def _other_version(columns) -> pl.Expr:
    return _column(columns, "task_sha_mismatch", None).cast(pl.Boolean).fill_null(False)


def probe_kind(columns) -> pl.Expr:
    """The ``kind`` of a probe disagreement, from the probe columns at hand."""
    failed = (_column(columns, "harness_probe_ok", None).cast(pl.Boolean).not_().fill_null(False)
              | _column(columns, "harness_probe_error", None).cast(pl.Utf8).is_not_null())
    return _kind(pl.col("probe_verdict"), _column(columns, "probe_reason", None).cast(pl.Utf8), failed,
                 pl.lit(False), _other_version(columns))


def _columns(path: Path, wanted) -> list[str] | None:
    schema = pl.read_parquet_schema(path)
    return [name for name in wanted if name in schema] if "harness_p_equivalent" in schema or \
        "harness_probe_equivalent" in schema else None


def harness_audit(directory: str | Path) -> Audit | None:
    """The audit of a scored output directory, or None when its sweep carried no harness verdicts."""
    directory = Path(directory)
    scores_path, probes_path = directory / OUTPUT.scores, directory / OUTPUT.probes
    law_columns = _columns(scores_path, LAW_COLUMNS)
    if law_columns is None or "harness_p_equivalent" not in law_columns:
        return None
    laws = pl.read_parquet(scores_path, columns=law_columns).filter(pl.col("harness_p_equivalent").is_not_null())
    law_disagreements = laws.filter(pl.col("p_equivalent").fill_null(False) != pl.col("harness_p_equivalent"))
    law_disagreements = law_disagreements.with_columns(law_kind(law_disagreements.columns).alias("kind"))
    probes = pl.DataFrame()
    probe_disagreements = pl.DataFrame(schema={name: pl.Utf8 for name in (*PROBE_COLUMNS, "kind")})
    probe_columns = _columns(probes_path, PROBE_COLUMNS) if probes_path.is_file() else None
    if probe_columns is not None and "harness_probe_equivalent" in probe_columns:
        probes = pl.read_parquet(probes_path, columns=probe_columns).filter(
            pl.col("harness_probe_equivalent").is_not_null())
        probe_disagreements = probes.filter(
            pl.col("probe_equivalent").fill_null(False) != pl.col("harness_probe_equivalent"))
        if "task_sha_mismatch" in law_columns:  # the probes' task versions are their rows'
            versions = laws.select("config", "run", "task", "task_sha_mismatch")
            probe_disagreements = probe_disagreements.join(versions, on=("config", "run", "task"), how="left")
        probe_disagreements = probe_disagreements.with_columns(
            probe_kind(probe_disagreements.columns).alias("kind"))
    return Audit(laws.height, law_disagreements.sort("config", "run", "task"), probes.height,
                 probe_disagreements.sort("config", "run", "task", "probe") if probe_disagreements.height else
                 probe_disagreements)
