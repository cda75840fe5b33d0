"""The 72 MDBench problem files, read as they are, scored against themselves."""
from __future__ import annotations

import pytest

from fastscore.problems.formats import load_problems
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
from tests.support.external import MDBENCH, requires_mdbench

pytestmark = requires_mdbench
PROBLEMS = load_problems(MDBENCH) if MDBENCH.is_dir() else []


def test_all_72_external_problems_load():
    assert len(PROBLEMS) == 72


@pytest.mark.slow
@pytest.mark.parametrize("problem", PROBLEMS, ids=lambda p: p.task_id)
def test_reference_law_is_equivalent_to_itself_and_rewrites_and_not_to_a_near_miss(problem):
    reference = build_reference(problem)
    rhs = problem.law.split("=", 1)[1].strip()
    texts = [problem.law, rhs, f"2*({rhs})/2", f"({rhs})*(1 + 1e-3)"]
    rows = [{"config": "c", "run": i, "task": problem.task_id, "phenomenal": t} for i, t in enumerate(texts)]
    scores, _ = score_task(reference, rows)
    assert [s["status"] for s in scores] == ["ok"] * 4
    assert [s["p_verdict"] for s in scores[:3]] == ["proven"] * 3
    assert scores[3]["p_verdict"] == "different"
    assert all(s["id_acc"] and s["ood_acc"] for s in scores)
    # the reference mechanism derives a law (closed form or numeric) on its own
    assert reference.mechanism is not None
