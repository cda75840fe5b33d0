"""The Michaelis-Menten example problem's reference, shared by the scoring tests."""
from __future__ import annotations

from pathlib import Path

import pytest

from fastscore.problems.formats import load_problems
from fastscore.scoring.reference import build_reference

EXAMPLE = Path(__file__).resolve().parents[2] / "problems" / "example"


@pytest.fixture(scope="module")
def reference():
    problem = next(p for p in load_problems(EXAMPLE) if p.task_id == "michaelis-menten-rate")
    return build_reference(problem)


