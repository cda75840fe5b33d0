"""What a first run shows while it works: a notice when the kernels are compiled rather
than loaded from Numba's cache, and a progress bar with a total (so a rate and an ETA)."""
from __future__ import annotations

import os
import subprocess
import sys

import polars as pl
import pytest

from fastscore.kernels import jit
from fastscore.run import job
from fastscore.sweeps.read import approximate_rows
from fastscore.tapes.warm import warm_up

NOTICE = "compiling kernels (first run, ~20 s)"
_IS_COLD = "from fastscore.kernels.jit import cache_is_cold; print(cache_is_cold())"


@pytest.mark.slow
def test_an_empty_numba_cache_is_cold_and_a_warmed_process_is_not(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))  # a cache folder with nothing in it
    cold = subprocess.run([sys.executable, "-c", _IS_COLD], env=env, capture_output=True, text=True, check=True)
    assert cold.stdout.strip() == "True"
    warm_up()  # every kernel compiled (or loaded) in this process
    assert jit.KERNELS and jit.cache_is_cold() is False


@pytest.mark.slow
def test_the_notice_is_printed_with_the_bar_only_when_the_kernels_are_compiled(tmp_path, monkeypatch, capsys, example_dir, example_sweep):
    for cold in (True, False):
        monkeypatch.setattr(jit, "cache_is_cold", lambda cold=cold: cold)
        job.score_sweep(example_dir, example_sweep, tmp_path / str(cold), executor="local", progress=True)
        assert (NOTICE in capsys.readouterr().err) is cold
    monkeypatch.setattr(jit, "cache_is_cold", lambda: True)
    job.score_sweep(example_dir, example_sweep, tmp_path / "quiet", executor="local", progress=False)  # cold, but no bar:
    assert NOTICE not in capsys.readouterr().err  # stderr keeps its warnings and errors alone


def test_row_counts_of_text_sweeps_are_their_lines(tmp_path, example_sweep):
    assert approximate_rows(example_sweep) == len(example_sweep.read_text().splitlines()) == 19
    rows = pl.read_ndjson(example_sweep)
    rows.select("config", "run", "task", "phenomenal").write_csv(tmp_path / "sweep.csv")
    assert approximate_rows(tmp_path / "sweep.csv") == 19
    (tmp_path / "last.jsonl").write_text('{"config": "a"}\n{"config": "b"}')  # no final line break
    assert approximate_rows(tmp_path / "last.jsonl") == 2


@pytest.mark.slow
def test_the_bar_has_the_sweeps_row_count_as_total_and_ends_there(tmp_path, monkeypatch, example_dir, example_sweep):
    bars = []
    make_bar = job._progress

    def kept(enabled, sweep):
        bars.append(make_bar(True, sweep))
        return bars[-1]
    monkeypatch.setattr(job, "_progress", kept)
    job.score_sweep(example_dir, example_sweep, tmp_path / "out", executor="local")
    assert bars[0].total == 19 and bars[0].n == 19
    job.score_sweep(example_dir, example_sweep, tmp_path / "out", executor="local")  # resumed: every row counted as done
    assert bars[1].total == 19 and bars[1].n == 19
