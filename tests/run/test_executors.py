"""The executor registry: names -> factories, the contract of ``fastscore.run.executors.base``;
a new executor is one registration."""
from __future__ import annotations

import gc
import json
from typing import get_args

import polars as pl
import pytest

from fastscore.run import executors
from fastscore.run.executors import ExecutorName, register_executor
from fastscore.run.executors.base import ReferenceCache, score_units
from fastscore.run.job import score_sweep
from fastscore.scoring.task import score_task
from fastscore.settings import DEFAULT_SETTINGS
from fastscore.support.collector import paused


class InProcess:
    """A toy executor: every unit scored in this process, in order."""

    name = "in-process"

    def __init__(self, problems, settings):
        self._references, self._settings = ReferenceCache(problems, settings), settings

    def map(self, units):
        return score_units(units, self._references, self._settings, score_task)

    def close(self) -> None:
        pass


@pytest.fixture
def in_process():
    register_executor("in-process", lambda problems, settings, *, address, workers: InProcess(problems, settings))
    yield
    del executors.EXECUTORS["in-process"]


def test_the_executor_names_are_the_literal_type():
    assert executors.executor_names() == get_args(ExecutorName) == ("auto", "local", "ray")


@pytest.mark.slow
def test_a_registered_executor_writes_the_local_executors_tables(tmp_path, in_process, example_dir, example_sweep):
    score_sweep(example_dir, example_sweep, tmp_path / "local", executor="local", progress=False)
    score_sweep(example_dir, example_sweep, tmp_path / "mine", executor="in-process", progress=False)
    for table in ("scores", "probes", "summary", "strata"):
        local = pl.read_parquet(tmp_path / "local" / f"{table}.parquet")
        mine = pl.read_parquet(tmp_path / "mine" / f"{table}.parquet")
        if table == "scores":
            local, mine = local.drop("parse_solve_seconds"), mine.drop("parse_solve_seconds")
        assert mine.equals(local), table
    assert json.loads((tmp_path / "mine" / "meta.json").read_text())["executor"] == "in-process"


def test_an_unknown_executor_is_one_error_listing_the_names(tmp_path, in_process, example_dir, example_sweep):
    with pytest.raises(ValueError, match="unknown executor 'dask'; expected one of auto, local, ray, in-process"):
        score_sweep(example_dir, example_sweep, tmp_path / "out", executor="dask", progress=False)
    with pytest.raises(ValueError, match="'local' is taken"):
        register_executor("local", lambda *args, **kwargs: None)


def test_the_collector_is_paused_while_scoring_a_unit_and_restored_after(example_problems):
    problems = example_problems
    task = next(iter(problems))
    states = []

    def score(reference, rows, **options):
        states.append(gc.isenabled())
        return score_task(reference, rows, **options)

    row = {"config": "c", "run": 0, "task": task, "phenomenal": problems[task].law}
    assert gc.isenabled()
    list(score_units([(task, [row])], ReferenceCache(problems, DEFAULT_SETTINGS), DEFAULT_SETTINGS, score))
    assert states == [False] and gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # a collector off before stays off
    finally:
        gc.enable()
