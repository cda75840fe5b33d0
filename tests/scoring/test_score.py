"""``score_task``: statuses, deduplication and probe diagnostics on one problem."""
from __future__ import annotations

import gc
from pathlib import Path

import pytest

import fastscore.scoring.judge as judge_module
from fastscore.problems.formats import load_problems
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
from fastscore.settings import Settings
from tests.support.scoring import MM_MECHANISM, mm_row


def test_a_solve_past_its_budget_is_a_timeout_row(reference):
    scores, _ = score_task(reference, [mm_row(0, mechanism=MM_MECHANISM)], settings=Settings(solve_budget=0.0))
    assert scores[0]["status"] == "timeout" and "budget" in scores[0]["error"]


def test_renamed_intermediates_are_found_as_probes(reference):
    renamed = MM_MECHANISM.replace("C", "complex_conc")
    scores, probes = score_task(reference, [mm_row(0, mechanism=renamed)])
    assert scores[0]["p_verdict"] == "proven" and scores[0]["n_probes_in_mechanism"] == 1
    assert probes[0]["probe_in_mechanism"] is True and probes[0]["probe_mechanism_quantity"] == "complex_conc"
    assert probes[0]["probe_verdict"] == "undecided"  # no answer given: m_correct needs the answer
    assert scores[0]["m_correct"] is False


def test_identical_submissions_share_one_verdict_and_keep_their_own_rows(reference):
    law = "v = k3*E_T*S/((k2 + k3)/k1 + S)"
    rows = [mm_row(i, phenomenal=law, probes='{"C": "E_T*S/((k2 + k3)/k1 + S)"}', tokens=i) for i in range(3)]
    scores, probes = score_task(reference, rows)
    assert [s["run"] for s in scores] == [0, 1, 2] and [s["tokens"] for s in scores] == [0, 1, 2]
    assert {s["p_verdict"] for s in scores} == {"proven"} and all(s["m_correct"] for s in scores)
    assert len(probes) == 3


def test_an_unreadable_probe_answer_set_fails_only_the_probes(reference):
    scores, probes = score_task(reference, [mm_row(0, phenomenal="k3*E_T*S/((k2 + k3)/k1 + S)", probes="{not json")])
    assert scores[0]["status"] == "ok" and scores[0]["p_equivalent"] is True
    assert scores[0]["m_correct"] is False and probes[0]["probe_verdict"] == "undecided"


@pytest.mark.parametrize("unusable, reason", [("", "empty answer"), (None, "got NoneType")])
def test_one_unusable_probe_answer_fails_that_probe_alone(unusable, reason, example_dir):
    # MechBench judges each probe on its own: an empty reply to one leaves the others judged
    problem = next(p for p in load_problems(example_dir) if p.task_id == "vacancy-diffusion-variant-1-2")
    row = {"config": "c", "run": 0, "task": problem.task_id,
           "phenomenal": "D = a**2*nu*exp(-(Ef + p*Omega)/(kB*T))*exp(-(Em + Omega*p**2/pref)/(kB*T))"
                         "/(6*(1 + 3*exp(-Et/(kB*T))))",
           "probes": {"cm": unusable, "Eb": "Em + Omega*p^2/pref"}}
    scores, probes = score_task(build_reference(problem), [row])
    verdicts = {p["probe"]: p for p in probes}
    assert verdicts["Eb"]["probe_verdict"] == "proven" and verdicts["Eb"]["probe_equivalent"] is True
    assert verdicts["cm"]["probe_verdict"] == "undecided" and reason in verdicts["cm"]["probe_reason"]
    assert scores[0]["p_equivalent"] is True and scores[0]["m_correct"] is False
    assert scores[0]["n_probes_correct"] == 1


def test_a_law_with_the_wrong_left_hand_side_is_a_parse_error(reference):
    scores, _ = score_task(reference, [mm_row(0, phenomenal="S = k3*E_T")])
    assert scores[0]["status"] == "parse_error" and "left-hand side must be 'v'" in scores[0]["error"]


def test_a_memo_across_batches_gives_the_same_rows(reference):
    from fastscore.scoring.task import ScoreMemo
    texts = ["v = k3*E_T*S/((k2 + k3)/k1 + S)", "v = k3*E_T*S/(k2/k1 + S)", "v = k3*E_T*S/(S + (k3 + k2)/k1)"]
    rows = [mm_row(i, phenomenal=texts[i % 3], probes='{"C": "E_T*S/((k2 + k3)/k1 + S)"}') for i in range(6)]
    rows.append(mm_row(6, mechanism=MM_MECHANISM))
    alone, alone_probes = score_task(reference, rows)
    memo = ScoreMemo(max_items=4)  # small: entries get evicted and recomputed
    first, first_probes = score_task(reference, rows[:3], memo=memo)
    second, second_probes = score_task(reference, rows[3:], memo=memo)
    timing = "parse_solve_seconds"
    assert [{k: v for k, v in r.items() if k != timing} for r in first + second] == \
           [{k: v for k, v in r.items() if k != timing} for r in alone]
    assert first_probes + second_probes == alone_probes


def test_the_scorer_leaves_the_collector_alone(reference, monkeypatch):
    states = []
    real = judge_module.judge_law
    monkeypatch.setattr(judge_module, "judge_law", lambda *args: states.append(gc.isenabled()) or real(*args))
    row = {"config": "c", "run": 0, "task": reference.problem.task_id, "phenomenal": reference.problem.law}
    score_task(reference, [row])
    assert states == [True]  # the executors pause it (tests/test_executors.py)


_SCORE_IN_A_PROCESS = """
import json, random, sys
sys.path.insert(0, sys.argv[1])
from mechbench_study import study
from fastscore.problems.formats import load_problems
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
out = []
for problem in load_problems(sys.argv[2]):
    if problem.format != "mechbench" or not problem.task_id.startswith(("Michaelis", "Hall Response - Variant 1-2")):
        continue
    reference = build_reference(problem)
    rows = [dict(config=r["kind"], run=copy, task=problem.task_id, mechanism=r["mechanism"],
                 probe_replies=json.dumps(r["replies"]))
            for copy in (1, 2) for r in study(problem, copy=copy, rng=random.Random(copy))]
    scores, probes = score_task(reference, rows)
    out += [{k: v for k, v in row.items() if k != "parse_solve_seconds"} for row in scores + probes]
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.slow
def test_rows_are_the_same_bits_in_processes_with_other_string_hashes():
    """Which of several submissions deriving one law text gives its values follows the
    rows' order, not the order of a set of strings (which changes with the process's hash
    seed): metrics come out to the same bits in every run."""
    import os
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    shared = root / "tests" / "data" / "mechbench-tasks"
    outputs = []
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        result = subprocess.run([sys.executable, "-c", _SCORE_IN_A_PROCESS, str(root / "scripts"), str(shared)],
                                capture_output=True, text=True, env=env, check=True)
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000


def test_a_row_is_read_once_whatever_form_its_cells_take(reference):
    """A mapping of answers scores as its JSON text, surrounding blanks are dropped and a
    blank cell is no submission: the texts are normalised in one place (``Submission``)."""
    as_text = mm_row(0, mechanism=MM_MECHANISM, probes='{"C": "C", "E_free": "E_T - C"}', wall_time=2.5)
    as_mapping = mm_row(0, mechanism=f"  {MM_MECHANISM}\n", probes={"E_free": "E_T - C", "C": "C"},
                        phenomenal=" ", wall_time=2.5)
    (text_row,), text_probes = score_task(reference, [as_text])
    (mapping_row,), mapping_probes = score_task(reference, [as_mapping])
    timing = "parse_solve_seconds"
    assert {k: v for k, v in text_row.items() if k != timing} == {k: v for k, v in mapping_row.items() if k != timing}
    assert text_probes == mapping_probes
    assert text_row["wall_time"] == 2.5 and "probes" not in text_row and "mechanism" not in text_row


def test_the_structure_scorer_is_a_declared_built_in():
    import fastscore.scoring.structure  # noqa: F401  (importing it registers nothing)
    from fastscore.outputs.tables import STRUCTURE_SCHEMA
    from fastscore.scoring.scorers import SCORERS, SubmissionScorer, register_scorer, submission_scorers
    assert [s.name for s in SCORERS if s.name == "structure"] == []
    first = submission_scorers()[0]
    assert (first.name, dict(first.columns), first.same_for_copies) == ("structure", STRUCTURE_SCHEMA, True)
    with pytest.raises(ValueError, match="'structure' is taken"):
        register_scorer(SubmissionScorer("structure", STRUCTURE_SCHEMA, lambda context: {}))
