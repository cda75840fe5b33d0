"""Resume: an interrupted run, re-run on the same --out, gives the uninterrupted tables."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from fastscore.run import job
from fastscore.run.executors.local import LocalExecutor
from fastscore.run.job import score_sweep

TABLES = ("scores", "probes", "summary", "strata")
LAWS = {"circular-orbit-period": "T = 2*pi*sqrt(r**3/(G*M))",
        "michaelis-menten-rate": "v = k3*E_T*S/((k2 + k3)/k1 + S)",
        "vacancy-diffusion-original": "D = a**2*nu/6*exp(-(Ef + Em + p*Omega)/(kB*T))",
        "vacancy-diffusion-variant-1-2": "D = a**2*nu/6*exp(-(Ef + p*Omega)/(kB*T))"}


def _sweep(path: Path, runs: int) -> Path:
    with path.open("w") as f:
        for run_index in range(runs):
            for task, law in LAWS.items():
                f.write(json.dumps({"config": "c", "run": run_index, "task": task, "phenomenal": law,
                                    "tokens": run_index}) + "\n")
    return path


def _tables(out: Path) -> dict[str, pl.DataFrame]:
    tables = {name: pl.read_parquet(out / f"{name}.parquet") for name in TABLES}
    tables["scores"] = tables["scores"].drop("parse_solve_seconds")
    return tables


class _Interrupted(Exception):
    pass


@pytest.mark.slow
def test_interrupted_run_resumes_to_identical_tables(tmp_path, monkeypatch, example_dir):
    sweep = _sweep(tmp_path / "sweep.jsonl", runs=6)
    score_sweep(example_dir, sweep, tmp_path / "whole", executor="local", progress=False)

    monkeypatch.setattr(job, "PART_ROWS", 4)  # a part per task unit
    original_map = LocalExecutor.map

    def map_then_stop(self, units):
        for count, result in enumerate(original_map(self, units)):
            if count == 3:
                raise _Interrupted  # like Ctrl-C (or kill -9) after three parts were written
            yield result

    monkeypatch.setattr(LocalExecutor, "map", map_then_stop)
    with pytest.raises(_Interrupted):
        score_sweep(example_dir, sweep, tmp_path / "resumed", executor="local", progress=False)
    assert not (tmp_path / "resumed" / "scores.parquet").exists()
    monkeypatch.setattr(LocalExecutor, "map", original_map)
    score_sweep(example_dir, sweep, tmp_path / "resumed", executor="local", progress=False)

    meta = json.loads((tmp_path / "resumed" / "meta.json").read_text())
    assert meta["counts"]["resumed_cells"] > 0 and meta["counts"]["scored_cells"] < 24
    whole, resumed = _tables(tmp_path / "whole"), _tables(tmp_path / "resumed")
    for name in TABLES:
        assert resumed[name].equals(whole[name]), name


@pytest.mark.slow
def test_a_grown_sweep_scores_only_new_rows_and_changed_settings_rescore(tmp_path, example_dir):
    out = tmp_path / "out"
    score_sweep(example_dir, _sweep(tmp_path / "small.jsonl", runs=2), out, executor="local", progress=False)
    score_sweep(example_dir, _sweep(tmp_path / "big.jsonl", runs=3), out, executor="local", progress=False)
    counts = json.loads((out / "meta.json").read_text())["counts"]
    assert (counts["resumed_cells"], counts["scored_cells"]) == (8, 4)
    assert pl.read_parquet(out / "scores.parquet").height == 12

    from fastscore.settings import Settings
    score_sweep(example_dir, tmp_path / "big.jsonl", out, executor="local", progress=False,
                settings=Settings(rtol=1e-7))
    counts = json.loads((out / "meta.json").read_text())["counts"]
    assert (counts["resumed_cells"], counts["scored_cells"]) == (0, 12)
