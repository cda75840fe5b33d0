"""Budgets under faults: what a submission builds through its unknowns is bounded
like what it writes (sizes, numbers, exponents), the solve budget is wall time checked
inside the elimination, and a bomb in a batch costs its own row's time."""
from __future__ import annotations

import json
import time

import pytest

import fastscore.scoring.candidates as candidates_module
from fastscore.algebra.sizes import count_nodes
from fastscore.run.executors.local import LocalExecutor
from fastscore.service.feedback import feedback
from fastscore.service.public import public_task
from fastscore.settings import Settings
from fastscore.solve.mechanism import SolveError, SolveTimeout, solve_mechanism
from fastscore.text.parse import parse_equation
from fastscore.text.tokens import Limits
from tests.support.public_tasks import ROLE_OF, demo_data, problem_json

TASK = "michaelis-menten-rate"
LAW = "v = k3*E_T*S/((k2 + k3)/k1 + S)"


def _chain(steps: int, target: str = "y", source: str = "x") -> str:
    lines = [f"a0 = {source}/10**8"] + [f"a{i} = sin(a{i - 1}) + cos(a{i - 1})" for i in range(1, steps + 1)]
    return "\n".join(lines + [f"{target} = a{steps}"])


def _dense(n: int) -> str:
    """A dense linear block of n equations with symbolic coefficients (non-singular)."""
    lines = []
    for i in range(n):
        terms = " + ".join(f"({(3 * i + 5 * j) % 7 + 1}*x + {(i * j) % 5 + 1}*z + {(i + 2 * j) % 9 + 1})*u{j}"
                           for j in range(n))
        lines.append(f"{terms} = x + {i}")
    return "\n".join(lines + ["y = u0"])


@pytest.fixture(scope="module")
def demo():
    return public_task(problem_json(ROLE_OF), demo_data())


def _solve(text: str, **kwargs):
    equations = [parse_equation(line, names=["x", "z", "y"], allow_new_names=True) for line in text.splitlines()]
    return solve_mechanism(equations, knowns=["x", "z"], target="y", points={}, **kwargs)


@pytest.mark.slow
def test_a_chain_that_doubles_its_tree_is_solved_and_its_text_is_not_written(demo):
    # each step doubles the tree (2**22 nodes at a22) but adds two distinct nodes: the
    # solver, the tapes and the proofs work over distinct subexpressions
    solution = _solve(_chain(22))
    assert solution.law is not None and count_nodes(solution.law) > 2**22
    with pytest.raises(SolveError, match=r"the closed form of a\d+ grows to more than 40 distinct subexpressions"):
        _solve(_chain(22), limits=Limits(max_solved_nodes=40))
    answer = feedback(demo, _chain(22), budget=60)  # no 160 MB answer: the long texts are not written
    assert answer["ok"] is True and len(json.dumps(answer)) < 300_000, answer.get("error")
    assert answer["solution"]["y"].startswith("(not written: ") and answer["solution"]["a1"].startswith("sin(")


def test_constants_built_through_unknowns_are_bounded_like_literals(demo):
    with pytest.raises(SolveError, match=r"b\*\*1000 becomes a number of about 301030 digits, limit 4000"):
        _solve("a = x/x + z/z\nb = a**1000\nc = b**1000\nd = c**1000\ny = x*z*d")
    with pytest.raises(SolveError, match=r"the exponent of x\*\*n becomes 2000, limit 1000"):
        _solve("n = 2000\ny = x**n")
    _solve("n = 1000\ny = x**n")  # the literal bound itself is allowed, as in a text
    with pytest.raises(SolveError, match=r"the closed form of c has an exponent of 1e\+06, limit 1000"):
        _solve("b = x**1000\nc = b**1000\ny = c + 1")
    answer = feedback(demo, "a = x/x + z/z\nb = a**1000\nc = b**1000\nd = c**1000\ny = x*z*d", budget=5)
    assert answer["ok"] is False and answer["error_type"] == "SolveError"


@pytest.mark.slow
def test_a_dense_linear_block_stops_within_its_budget():
    with pytest.raises(SolveError, match="grows to|budget"):
        _solve(_dense(20))
    with pytest.raises(SolveTimeout):
        _solve(_dense(40), budget=0.05)
    solution = _solve(_dense(3))  # a small dense block is solved
    assert solution.law is not None


@pytest.mark.slow
def test_a_bomb_in_a_batch_costs_its_own_row(tmp_path, monkeypatch, example_problems):
    """One row whose solve never ends: it becomes a timeout row, solved once (not again
    alone), and the rest of its batch is scored as a batch."""
    calls = tmp_path / "calls"
    original = candidates_module.build_candidate

    def build(reference, submission, **kwargs):
        if submission.law == "v = bomb":
            with open(calls, "a") as f:
                f.write("x")
            time.sleep(3600)
        return original(reference, submission, **kwargs)
    monkeypatch.setattr(candidates_module, "build_candidate", build)
    problems = example_problems
    rows = [{"config": "c", "run": run, "task": TASK, "phenomenal": "v = bomb" if run == 3 else LAW,
             "submission_sha": f"sha{run}"} for run in range(30)]
    executor = LocalExecutor(problems, Settings(row_timeout=2.0))
    try:
        results = list(executor.map([(TASK, rows)]))
    finally:
        executor.close()
    scores = {row["run"]: row for batch, _ in results for row in batch}
    assert sorted(scores) == list(range(30))
    assert (scores[3]["status"], scores[3]["error"], scores[3]["submission_sha"]) == \
        ("timeout", "scoring took longer than 2 s", None)
    assert all(scores[run]["status"] == "ok" for run in scores if run != 3)
    assert calls.read_text() == "x"  # stopped once, not retried alone
    assert len(results) == 2  # the bomb's row, then the rest of the batch in one result
