"""Fixtures every test folder shares: the repository's root and its bundled example problem
set (``problems/example``: its folder, its sweep and its problems by task id), and the
sample of MechBench task files copied into ``tests/data/mechbench-tasks``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.external import MECHBENCH

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def example_dir() -> Path:
    """The bundled example problem set (``problems/example``)."""
    return REPO / "problems" / "example"


@pytest.fixture(scope="session")
def example_sweep() -> Path:
    """The example's sweep of submissions (``problems/example-sweep.jsonl``)."""
    return REPO / "problems" / "example-sweep.jsonl"


@pytest.fixture(scope="session")
def _example_problems(example_dir):
    from fastscore.problems.formats import load_problems

    return tuple(load_problems(example_dir))


@pytest.fixture
def example_problems(_example_problems) -> dict:
    """The example's problems by task id (loaded once; problems are frozen, the dict is each test's own)."""
    return {problem.task_id: problem for problem in _example_problems}


@pytest.fixture(scope="session")
def mechbench_tasks() -> Path:
    """The sample of MechBench's task files (``tests/data/mechbench-tasks``)."""
    return MECHBENCH
