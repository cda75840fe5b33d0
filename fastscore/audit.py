"""An audit of a study's published scores: where fastscore and MechBench's harness disagree.

A sweep read from MechBench run folders carries the harness's own verdicts
(``harness_*`` columns, ``fastscore.runs``).  `harness_audit` lists every cell where
the harness's law verdict (``symbolically_equivalent``) differs from fastscore's
``p_equivalent``, and every probe where the harness's verdict (``ok`` and
``symbolically_equivalent``) differs from ``probe_equivalent``, each with both verdicts
and fastscore's evidence: its provenance, reason (the proof rule for ``proven``) and
counterexample (for ``different``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from fastscore.runs import HARNESS_PROBE_COLUMNS
from fastscore.tables import OUTPUT

__all__ = ["Audit", "harness_audit"]

LAW_COLUMNS = ("config", "run", "task", "p_equivalent", "p_verdict", "p_reason", "p_counterexample", "status",
               "error", "harness_p_equivalent", "harness_error")
PROBE_COLUMNS = ("config", "run", "task", "probe", "probe_equivalent", "probe_verdict", "probe_reason",
                 "probe_counterexample", *HARNESS_PROBE_COLUMNS)


@dataclass(frozen=True)
class Audit:
    """Cells and probes the harness judged, and those where it disagrees with fastscore."""

    laws_compared: int
    law_disagreements: pl.DataFrame
    probes_compared: int
    probe_disagreements: pl.DataFrame


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
    probes = pl.DataFrame()
    probe_disagreements = pl.DataFrame(schema={name: pl.Utf8 for name in PROBE_COLUMNS})
    probe_columns = _columns(probes_path, PROBE_COLUMNS) if probes_path.is_file() else None
    if probe_columns is not None and "harness_probe_equivalent" in probe_columns:
        probes = pl.read_parquet(probes_path, columns=probe_columns).filter(
            pl.col("harness_probe_equivalent").is_not_null())
        probe_disagreements = probes.filter(
            pl.col("probe_equivalent").fill_null(False) != pl.col("harness_probe_equivalent"))
    return Audit(laws.height, law_disagreements.sort("config", "run", "task"), probes.height,
                 probe_disagreements.sort("config", "run", "task", "probe") if probe_disagreements.height else
                 probe_disagreements)
