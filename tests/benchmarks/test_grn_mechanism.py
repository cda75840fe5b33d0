"""A GRN task's reference mechanism and an SCM hypothesis's equations judged against it
(``fastscore.benchmarks.scm``): known answers, near misses, latent variables and noise
terms, missing and unusable equations, load-time errors, and a sweep through the CLI."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from fastscore.benchmarks import grn
from fastscore.cli import main
from fastscore.problems.formats import load_problems
from fastscore.problems.model import ProblemError
from fastscore.settings import Settings
from tests.support.grn_tasks import IFFL

GRN = Path(__file__).resolve().parents[2] / "problems" / "grn"
MECHANISM_COLUMNS = ("grn_mech_nodes", "grn_mech_equivalent", "grn_mech_share", "grn_mech_all",
                     "grn_mech_verdicts", "grn_mech_reason")


def task(tmp_path, text=IFFL, name="t"):
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.yaml").write_text(text)
    return load_problems(folder)[0]


def scm(mechanisms, latent=(), noise=(), edges=("X -> Y", "X -> Z", "Y -| Z")):
    variables = [{"name": n, "role": "gene", "observability": "observed"} for n in "XYZ"]
    variables += [{"name": n, "role": "mediator", "observability": "latent"} for n in latent]
    variables += [{"name": n, "role": "noise", "observability": "latent"} for n in noise]
    return json.dumps({"variables": variables, "edges": list(edges),
                       "mechanisms": [{"target": t, "parents": [], "equation": e} for t, e in mechanisms]})


def score(problem, *texts, settings=None):
    rows = [{"config": "c", "run": i, "task": problem.task_id, "submission": t} for i, t in enumerate(texts)]
    return grn.score_task(problem, rows, settings or Settings())


def verdicts(row):
    return json.loads(row["grn_mech_verdicts"])


def test_equivalent_equations_written_differently_are_proven(tmp_path):
    problem = task(tmp_path)
    same, other, rhs_only = score(problem, scm([("Y", "Y = 2*X/(1+X)"), ("Z", "Z = X - 0.5*Y")]),
                                  scm([("Y", "Y = 2/(1+1/X)"), ("Z", "Z = X - Y/2")]),
                                  scm([("Y", "2/(1 + 1/X)"), ("Z", "(2*X - Y)/2")]))
    for row in (same, other, rhs_only):
        assert row["status"] == "ok" and row["error"] is None and row["grn_f1"] == 1.0
        assert (row["grn_mech_nodes"], row["grn_mech_equivalent"], row["grn_mech_share"], row["grn_mech_all"]) == \
            (2, 2, 1.0, True)
        assert verdicts(row) == {"Y": "proven", "Z": "proven"} and row["grn_mech_reason"] is None


def test_a_near_miss_differs(tmp_path):
    problem = task(tmp_path)
    off, scaled = score(problem, scm([("Y", "2*X/(1+X) + 0.001"), ("Z", "X - 0.5*Y")]),
                        scm([("Y", "2*X/(1.001+X)"), ("Z", "Z = X - 0.5*Y")]))
    for row in (off, scaled):
        assert verdicts(row) == {"Y": "different", "Z": "different"}  # Z is a function of X: Y's error is in it
        assert row["grn_mech_equivalent"] == 0 and row["grn_mech_all"] is False and row["grn_mech_share"] == 0.0
        assert row["grn_mech_reason"].startswith("Y: different: relative difference")


def test_one_node_right_and_one_wrong_is_half(tmp_path):
    row, = score(task(tmp_path), scm([("Y", "2*X/(1+X)"), ("Z", "X - 0.49*Y")]))
    assert verdicts(row) == {"Y": "proven", "Z": "different"}
    assert (row["grn_mech_equivalent"], row["grn_mech_share"], row["grn_mech_all"]) == (1, 0.5, False)
    assert row["grn_mech_reason"].startswith("Z: different") and row["error"] is None


def test_a_latent_variable_is_eliminated_and_a_noise_term_is_zero(tmp_path):
    problem = task(tmp_path)
    latent, noise, multiplied = score(
        problem,
        scm([("Y", "2*X/(1+X)"), ("L", "L = Y/2"), ("Z", "X - L")], latent=["L"]),
        scm([("Y", "2*X/(1+X) + U"), ("Z", "X - 0.5*Y + 3*U")], noise=["U"]),
        scm([("Y", "2*X/(1+X)"), ("Z", "(X - 0.5*Y)*U")], noise=["U"]))  # noise-free: Z = 0
    assert verdicts(latent) == {"Y": "proven", "Z": "proven"}
    assert verdicts(noise) == {"Y": "proven", "Z": "proven"}
    assert verdicts(multiplied) == {"Y": "proven", "Z": "different"}


def test_a_latent_variable_with_a_bad_mechanism_fails_the_nodes_that_use_it(tmp_path):
    row, = score(task(tmp_path), scm([("Y", "2*X/(1+X)"), ("L", "L = Y/(2"), ("Z", "X - L")], latent=["L"]))
    assert verdicts(row) == {"Y": "proven", "Z": "undecided"}
    assert "depends on L, but its mechanism is unusable" in row["grn_mech_reason"]
    assert row["error"].startswith("mechanisms[1] (L):")


def test_a_missing_node_fails_and_so_does_what_depends_on_it(tmp_path):
    problem = task(tmp_path)
    only_y, only_z = score(problem, scm([("Y", "2*X/(1+X)")]), scm([("Z", "X - 0.5*Y")]))
    assert verdicts(only_y) == {"Y": "proven", "Z": "undecided"}
    assert only_y["grn_mech_reason"] == "Z: undecided: no mechanism" and only_y["error"] is None
    assert verdicts(only_z) == {"Y": "undecided", "Z": "undecided"}
    assert "Z: undecided: depends on Y, but it has no mechanism" in only_z["grn_mech_reason"]


def test_an_unknown_name_is_the_rows_error_and_the_graph_scores_stay(tmp_path):
    row, = score(task(tmp_path), scm([("Y", "k*X/(1+X)"), ("Z", "X - 0.5*Y")]))
    assert row["status"] == "ok" and row["grn_f1"] == 1.0 and row["grn_exact"] is True
    assert row["error"] == ("mechanisms[0] (Y): unknown name k (not a node of the task, a latent variable or a parameter; "
                            "constants must be numbers)")
    assert verdicts(row) == {"Y": "undecided", "Z": "undecided"} and row["grn_mech_equivalent"] == 0


@pytest.mark.parametrize("mechanisms, reason", [
    ([("Y", "2*X/(1+X"), ("Z", "X - 0.5*Y")], "mechanisms[0] (Y): missing ')'"),
    ([("Y", "Z = 2*X/(1+X)"), ("Z", "X - 0.5*Y")], "mechanisms[0] (Y): left-hand side must be 'Y', got 'Z'"),
    ([("Y", "Y = = X"), ("Z", "X - 0.5*Y")], "mechanisms[0] (Y):"),
    ([("Y", "2*X/(1+X)"), ("Y", "2*X/(1+X)"), ("Z", "X - 0.5*Y")], "mechanisms[1] (Y): a second mechanism for Y"),
    ([("W", "X"), ("Y", "2*X/(1+X)"), ("Z", "X - 0.5*Y")],
     "mechanisms[0] (W): neither a node of the task nor a latent variable"),
    ([("Y", "__import__('os')"), ("Z", "X - 0.5*Y")], "mechanisms[0] (Y):"),
])
def test_a_malformed_mechanism_is_the_rows_error(tmp_path, mechanisms, reason):
    row, = score(task(tmp_path), scm(mechanisms))
    assert row["status"] == "ok" and row["error"].startswith(reason) and row["grn_f1"] == 1.0
    assert verdicts(row)["Y"] == ("proven" if mechanisms[0][0] == "W" else "undecided")


def test_a_malformed_equation_leaves_an_independent_node_judged(tmp_path):
    fork = IFFL.replace('"Y -| Z"]', ']').replace("Z = X - 0.5*Y", "Z = 3*X")
    row, = score(task(tmp_path, fork), scm([("Y", "2*X/(1+X"), ("Z", "X*3")], edges=("X -> Y", "X -> Z")))
    assert verdicts(row) == {"Y": "undecided", "Z": "proven"} and row["grn_mech_share"] == 0.5


def test_an_equation_for_a_root_is_not_used(tmp_path):
    row, = score(task(tmp_path), scm([("X", "X = 7"), ("Y", "2*X/(1+X)"), ("Z", "X - 0.5*Y")]))
    assert row["grn_mech_all"] is True and row["error"] is None


@pytest.mark.parametrize("text", [
    "X -> Y\nX -> Z\nY -| Z", '{"edges": ["X -> Y"]}', json.dumps({"edges": [], "mechanisms": None})])
def test_a_graph_without_mechanisms_fails_every_node_without_an_error(tmp_path, text):
    row, = score(task(tmp_path), text)
    assert row["status"] == "ok" and row["error"] is None
    assert (row["grn_mech_equivalent"], row["grn_mech_all"], row["grn_mech_reason"]) == \
        (0, False, "no mechanisms submitted")


@pytest.mark.parametrize("text, reason", [
    (json.dumps({"edges": [], "mechanisms": "Y = X"}), "mechanisms: expected a list"),
    (json.dumps({"edges": [], "mechanisms": [["Y", "X"]]}), "mechanisms[0]: expected an object"),
])
def test_unreadable_mechanisms_fail_every_node_with_the_reason(tmp_path, text, reason):
    row, = score(task(tmp_path), text)
    assert row["status"] == "ok" and row["error"].startswith(reason) and row["grn_mech_reason"].startswith(reason)
    assert verdicts(row) == {"Y": "undecided", "Z": "undecided"}


def test_mechanisms_as_a_map_of_targets(tmp_path):
    text = json.dumps({"edges": ["X -> Y", "X -> Z", "Y -| Z"],
                       "mechanisms": {"Y": "2*X/(1+X)", "Z": {"parents": ["X", "Y"], "equation": "Z = X - Y/2"}}})
    row, = score(task(tmp_path), text)
    assert row["grn_mech_all"] is True


def test_a_graph_parse_error_keeps_the_task_node_count(tmp_path):
    bad, = score(task(tmp_path), "X -> W")
    assert bad["status"] == "parse_error" and bad["grn_mech_nodes"] == 2 and bad.get("grn_mech_all") is None


def test_a_task_without_a_reference_mechanism_has_null_columns():
    problem = next(p for p in load_problems(GRN) if p.task_id == "coherent-ffl")
    assert problem.task["mechanism"] is None
    row, = score(problem, scm([("Y", "2*X/(1+X)"), ("Z", "X - 0.5*Y")], edges=("X -> Y", "X -> Z", "Y -> Z")))
    assert row["grn_exact"] is True and all(row.get(name) is None for name in MECHANISM_COLUMNS)


def test_a_cycle_the_solver_reduces_is_judged(tmp_path):
    loop = """benchmark: grn
name: loop
nodes: [X, Y, Z]
edges: ["X -> Y", "Z -| Y", "Y -> Z"]
mechanism: ["Y = X/(1 + Z)", "Z = Y"]
"""
    problem = task(tmp_path, loop)
    assert problem.task["mechanism"].ranges == ((0.1, 10.0),)  # the default range
    same, closed, wrong = score(problem, scm([("Z", "Y"), ("Y", "X/(1 + Z)")]),
                                scm([("Y", "(sqrt(1 + 4*X) - 1)/2"), ("Z", "Y")]),
                                scm([("Y", "(sqrt(1 + 4*X) + 1)/2"), ("Z", "Y")]))
    assert verdicts(same) == verdicts(closed) == {"Y": "proven", "Z": "proven"}
    assert verdicts(wrong) == {"Y": "different", "Z": "different"}


def test_an_unsolvable_submitted_system_is_undecided(tmp_path):
    row, = score(task(tmp_path), scm([("Y", "Y"), ("Z", "X - 0.5*Y")]))
    assert verdicts(row) == {"Y": "undecided", "Z": "undecided"}
    assert row["grn_mech_reason"].startswith("Y: undecided: cannot solve:")


def test_other_settings_draw_their_own_points(tmp_path):
    problem = task(tmp_path)
    text = scm([("Y", "2*X/(1+X)"), ("Z", "X - 0.5*Y")])
    row, = score(problem, text, settings=Settings(n_points=64, point_seed=3))
    assert row["grn_mech_all"] is True


@pytest.mark.parametrize("change, reason", [
    (("Z = X - 0.5*Y", "Z = X - 0.5*W"), "mechanism[1]:"),
    (("Z = X - 0.5*Y", "X + Y"), "mechanism[1]: expected an equation"),
    (("Z = X - 0.5*Y", "Z*2 = X"), "mechanism[1]: the left side must be one node"),
    (("Z = X - 0.5*Y", "Y = X"), "mechanism[1]: a second equation for Y"),
    (('"Y -| Z"', '"Z -| Y"'), "mechanism[1]: Z's equation uses Y, but the task has no edge Y -> Z"),
    (('"Y = 2*X/(1+X)", ', ""), "mechanism: Y has parents in the edges but no equation"),
    (("{X: [0.1, 5.0]}", "{Y: [0.1, 5.0]}"), "inputs: Y has an equation: it is not a root"),
    (("{X: [0.1, 5.0]}", "{W: [0.1, 5.0]}"), "inputs: W is not a node of the task"),
    (("{X: [0.1, 5.0]}", "{X: [5.0, 0.1]}"), "inputs: X: expected finite low < high"),
    (("{X: [0.1, 5.0]}", "{X: [0.1]}"), "inputs: X: expected [low, high]"),
    (("Y = 2*X/(1+X)", "Y = log(X - 1)"), "Y = log(-1 + X) is not a finite real number"),
    (('mechanism: ["Y = 2*X/(1+X)", "Z = X - 0.5*Y"]\n', ""), "inputs: given without a mechanism"),
    (('mechanism: ["Y = 2*X/(1+X)", "Z = X - 0.5*Y"]', 'mechanism: "Y = X"'), "mechanism: expected a list"),
])
def test_a_bad_reference_mechanism_is_a_load_error(tmp_path, change, reason):
    with pytest.raises(ProblemError, match=None) as caught:
        task(tmp_path, IFFL.replace(*change))
    assert reason in str(caught.value)


def test_an_inconsistent_or_rootless_cycle_is_a_load_error(tmp_path):
    cycle = """benchmark: grn
name: cycle
nodes: [X, Y, Z]
edges: ["X -> Y", "Z -> Y", "Y -> Z"]
mechanism: ["Y = X + Z", "Z = Y"]
"""
    with pytest.raises(ProblemError, match="cannot be solved for the non-root nodes"):
        task(tmp_path, cycle, "a")
    ring = cycle.replace('"X -> Y", ', '"X -> Y", "Y -> X", ').replace('"Z = Y"', '"Z = Y", "X = Y/2"')
    with pytest.raises(ProblemError, match="no root"):
        task(tmp_path, ring, "b")


def test_a_sweep_through_fastscore_score(tmp_path):
    problems = tmp_path / "problems"
    problems.mkdir()
    (problems / "iffl.yaml").write_text(IFFL)
    (problems / "ffl.yaml").write_text((GRN / "coherent-ffl.yaml").read_text())
    right = scm([("Y", "2/(1+1/X)"), ("Z", "X - Y/2")])
    rows = [{"config": "a", "run": 0, "task": "iffl", "submission": right},
            {"config": "a", "run": 1, "task": "iffl", "submission": scm([("Y", "2*X/(1+X)"), ("Z", "X")])},
            {"config": "a", "run": 2, "task": "iffl", "submission": "X -> W"},  # bad graph: the sweep goes on
            {"config": "a", "run": 0, "task": "ffl", "submission": "X -> Y; X -> Z; Y -> Z"},
            {"config": "a", "run": 3, "task": "ffl", "submission": "X -> Y"}]  # iffl run 3: missing
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    assert main(["score", "--problems", str(problems), "--sweep", str(sweep), "--out", str(out),
                 "--executor", "local"]) == 0
    scored = {(r["run"], r["task"]): r for r in pl.read_parquet(out / "scores.parquet").iter_rows(named=True)}
    assert scored[(0, "iffl")]["grn_mech_all"] is True and scored[(1, "iffl")]["grn_mech_share"] == 0.5
    assert scored[(2, "iffl")]["status"] == "parse_error" and scored[(2, "iffl")]["grn_mech_nodes"] == 2
    assert scored[(1, "ffl")]["status"] == "missing"
    assert all(scored[(run, "ffl")]["grn_mech_nodes"] is None for run in (0, 1, 2, 3))
    # a missing cell of a task with a mechanism carries its node count: it counts as 0 below
    assert scored[(3, "iffl")]["status"] == "missing" and scored[(3, "iffl")]["grn_mech_nodes"] == 2
    summary = pl.read_parquet(out / "summary.parquet").row(0, named=True)
    # per run, over the rows of the task with a mechanism: run 0 1.0, run 1 0.5, run 2 0 (parse error),
    # run 3 0 (missing: the fixed denominator)
    assert summary["grn_mech_share"] == pytest.approx((1.0 + 0.5 + 0.0 + 0.0) / 4)
    assert summary["grn_mech_all"] == pytest.approx(1 / 4)
    passk = pl.read_parquet(out / "passk.parquet").filter(pl.col("outcome") == "grn_mech_all")
    # iffl only (n = 4, c = 1): pass@1 = 1/4, pass@2 = 1 - C(3,2)/C(4,2) = 1/2,
    # pass@3 = 1 - C(3,3)/C(4,3) = 3/4, pass@4 = 1
    assert passk.select("k", "pass_at_k", "n_tasks").rows() == [
        (1, pytest.approx(1 / 4), 1), (2, pytest.approx(1 / 2), 1), (3, pytest.approx(3 / 4), 1), (4, 1.0, 1)]


def test_an_implicit_equation_solved_numerically_is_judged_by_its_values(tmp_path):
    implicit = "Y = X*exp(-Y) + 2*X/(1+X) - X*exp(-2*X/(1+X))"  # Y = 2X/(1+X) is its root; no closed form
    right, off = score(task(tmp_path), scm([("Y", implicit), ("Z", "X - 0.5*Y")]),
                       scm([("Y", implicit + " + 0.001"), ("Z", "X - 0.5*Y")]))
    assert verdicts(right) == {"Y": "numeric", "Z": "numeric"} and right["grn_mech_all"] is True
    assert verdicts(off) == {"Y": "different", "Z": "different"}


def test_a_noise_term_in_a_denominator_is_undecided_not_a_crash(tmp_path):
    divided, looped = score(task(tmp_path), scm([("Y", "X/U"), ("Z", "X - 0.5*Y")], noise=["U"]),
                            scm([("Y", "Z"), ("Z", "Y")]))
    assert verdicts(divided) == {"Y": "undecided", "Z": "undecided"} and "cannot evaluate" in divided["grn_mech_reason"]
    assert verdicts(looped) == {"Y": "undecided", "Z": "undecided"} and "under-determined" in looped["grn_mech_reason"]
