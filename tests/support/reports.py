"""Synthetic score rows with planted differences, written as a run's output: shared by the report tests."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from fastscore.outputs import tables

DOMAINS = ("physics", "chemistry", "biology", "materials")


SOLVE_RATE = {"strong": {d: 0.9 for d in DOMAINS}, "weak": {d: 0.15 for d in DOMAINS},
              "base": {"physics": 0.95, "chemistry": 0.7, "biology": 0.2, "materials": 0.05}}
WALL_TIME = {"strong": 10.0, "base": 5.0, "weak": 2.0}


def synthetic_rows(*, n_tasks: int = 40, n_runs: int = 3, seed: int = 7) -> list[dict]:
    """3 configs × 3 runs × 40 tasks over 4 domains and 0-5 mutations; ``strong`` solves
    90% everywhere, ``weak`` 15%, ``base`` depends strongly on the domain. The last task
    has no domain or family; every fifth task has no probes; one wall time is null."""
    rng = np.random.default_rng(seed)
    rows = []
    for config, rates in SOLVE_RATE.items():
        for run in range(n_runs):
            for i in range(n_tasks):
                domain = None if i == n_tasks - 1 else DOMAINS[i % 4]
                solved = bool(rng.random() < rates[domain or "physics"])
                has_probes = i % 5 != 0
                id_acc = solved or bool(rng.random() < 0.1)
                rows.append({
                    "config": config, "run": run, "task": f"task-{i:02d}", "domain": domain,
                    "family": None if domain is None else f"family-{i // 4}", "n_mutations": i % 6,
                    "status": "ok", "kind": "phenomenal", "p_equivalent": solved,
                    "m_correct": (solved and bool(rng.random() < 0.8)) if has_probes else None,
                    "n_probes": 2 if has_probes else 0, "id_acc": id_acc,
                    "ood_acc": id_acc and bool(rng.random() < 0.9),
                    "wall_time_s": None if (config, run, i) == ("strong", 0, 0) else WALL_TIME[config],
                    "tokens": 100 * (i + 1),
                })
    return rows


def write_output(rows: list[dict], directory: Path, *, tables_too: bool = True) -> Path:
    """A scored output directory from rows, as ``score_sweep`` lays it out."""
    directory.mkdir(parents=True, exist_ok=True)
    scores = tables.frame(rows, tables.SCORE_SCHEMA)
    scores.write_parquet(directory / "scores.parquet")
    if tables_too:
        tables.summary(scores).write_parquet(directory / "summary.parquet")
        tables.strata(scores).write_parquet(directory / "strata.parquet")
    return directory
