"""EvoSCM's real submission shapes in GRN attempts (``fastscore.benchmarks.evoscm``): an
``<scm_update>`` with several candidates and an ``<scm_final>`` selection, the confidence
rule without one, fitted ``parameters`` put into the equations, and edges without a sign
signed by the equations (``fastscore.benchmarks.scm.edge_signs``); known answers and near misses."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from fastscore.benchmarks import grn
from fastscore.benchmarks.base import BadInput
from fastscore.benchmarks.evoscm import hypothesis, parameter_values
from fastscore.problems.formats import load_problems
from fastscore.settings import Settings
from tests.support.grn_tasks import IFFL

ROOT = Path(__file__).resolve().parents[2]
NODES = frozenset("XYZ")
GENES = [{"name": n, "role": "gene", "observed": True} for n in "XYZ"]


def task(tmp_path, text=IFFL, name="t"):
    folder = tmp_path / name
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.yaml").write_text(text)
    return load_problems(folder)[0]


def candidate(cid, confidence, edges, mechanisms, parameters=None, variables=(), **extra):
    return {"id": cid, "name": cid, "description": "object-level dynamic SCM", "confidence": confidence,
            "variables": GENES + list(variables), "edges": [{"source": s, "target": t} for s, t in edges],
            "mechanisms": [{"target": t, "parents": [], "equation": e} for t, e in mechanisms],
            "parameters": parameters or {}, "assumptions": ["steady state"], "falsifiers": [], **extra}


FFL = candidate("H_ffl", 0.3, [("X", "Y"), ("X", "Z"), ("Y", "Z")],
                [("Y", "Y = a*X/(1 + X)"), ("Z", "Z = X - k*Y")],
                parameters={"a": {"estimate": 2.0, "lower": 0.0, "upper": 5.0}, "k": {"estimate": 0.5}},
                variables=[{"name": "a", "role": "parameter", "observed": False},
                           {"name": "k", "role": "parameter", "observed": False}])
CASCADE = candidate("H_cascade", 0.5, [("X", "Y"), ("Y", "Z")], [("Y", "Y = X"), ("Z", "Z = Y")])
LATENT = candidate("H_latent", 0.2, [("X", "L"), ("L", "Z"), ("X", "Y")],
                   [("Y", "Y = 2*X/(1 + X)"), ("L", "L = Y/2"), ("Z", "Z = X - L")],
                   variables=[{"name": "L", "role": "mediator", "observed": False}])


def update(*candidates, **extra):
    return {"mode": "revise", "abduction": {"observed_pattern": "pulse", "latent_causes": [], "uncertainty": ""},
            "candidates": list(candidates), "patches": [], "inductions": [], "deductions": [],
            "open_questions": [], **extra}


def final(selected):
    return {"selected_candidate_id": selected, "remaining_alternatives": ["H_cascade"],
            "identified_mechanism": "incoherent feed-forward loop"}


def score(problem, *texts):
    rows = [{"config": "c", "run": i, "task": problem.task_id, "submission": t} for i, t in enumerate(texts)]
    return grn.score_task(problem, rows, Settings())


def verdicts(row):
    return json.loads(row["grn_mech_verdicts"])


def test_the_selected_candidate_of_three_is_scored(tmp_path):
    problem = task(tmp_path)
    three = update(FFL, CASCADE, LATENT)
    ffl, cascade, latent = score(problem, *(json.dumps({"scm_update": three, "scm_final": final(c)})
                                            for c in ("H_ffl", "H_cascade", "H_latent")))
    assert ffl["status"] == "ok" and ffl["error"] is None and ffl["grn_exact"] is True and ffl["grn_f1"] == 1.0
    assert verdicts(ffl) == {"Y": "proven", "Z": "proven"} and ffl["grn_mech_all"] is True
    # X -> Y and Y -> Z (both derived +1: Y = X, Z = Y): one of two right, one of three found
    assert cascade["grn_exact"] is False and cascade["grn_n_edges"] == 2
    assert (cascade["grn_precision"], cascade["grn_recall"]) == (0.5, pytest.approx(1 / 3))
    assert cascade["grn_f1"] == pytest.approx(0.4) and cascade["grn_sign_accuracy"] == 0.5  # Y -> Z: +1 given, -1 in the reference
    assert verdicts(cascade) == {"Y": "different", "Z": "different"}
    # edges through the latent L are left out; its equations are eliminated
    assert latent["grn_n_edges"] == 1 and latent["grn_recall"] == pytest.approx(1 / 3)
    assert verdicts(latent) == {"Y": "proven", "Z": "proven"}


def test_every_wrapping_of_the_selection_reads_the_same(tmp_path):
    problem = task(tmp_path)
    three = update(FFL, CASCADE, LATENT)
    reply = ("Reasoning...\n<scm_update>\n" + json.dumps(three) + "\n</scm_update>\n<final_law>def f(): pass"
             "</final_law>\n<SCM_FINAL>" + json.dumps(final("H_latent")) + "</SCM_FINAL>")
    rows = score(problem, json.dumps({**three, "selected_candidate_id": "H_latent"}),
                 json.dumps({"candidates": [FFL, CASCADE, LATENT], "final_claim": final("H_latent")}),  # EvoSCM's record
                 json.dumps({"scm_update": {**three, "selected_candidate_id": "H_latent"}}), reply)
    for row in rows:
        assert row["status"] == "ok" and row["grn_n_edges"] == 1 and verdicts(row) == {"Y": "proven", "Z": "proven"}


def test_without_a_selection_the_single_candidate_else_the_highest_confidence(tmp_path):
    assert hypothesis(update(CASCADE))["id"] == "H_cascade"
    assert hypothesis(update(FFL, CASCADE, LATENT))["id"] == "H_cascade"  # 0.5 beats 0.3 and 0.2
    assert hypothesis(update(FFL, {**CASCADE, "confidence": 0.3}))["id"] == "H_ffl"  # a tie: the first
    assert hypothesis(update(FFL, {**CASCADE, "confidence": 7}, {**LATENT, "confidence": 1.0}))["id"] == "H_cascade"
    unsure = {k: v for k, v in LATENT.items() if k != "confidence"}  # EvoSCM reads it as 1
    assert hypothesis(update(FFL, CASCADE, unsure))["id"] == "H_latent"
    assert hypothesis(update(FFL, {**CASCADE, "confidence": "high"}))["id"] == "H_cascade"  # not a number: 1
    assert hypothesis(update(FFL, {**CASCADE, "status": "retired"}))["id"] == "H_ffl"
    assert hypothesis(update({**FFL, "status": "retired"}, CASCADE, selected_candidate_id="H_ffl"))["id"] == "H_ffl"
    row, = score(task(tmp_path), json.dumps(update(FFL, CASCADE, LATENT)))
    assert row["grn_n_edges"] == 2 and verdicts(row) == {"Y": "different", "Z": "different"}


def test_candidates_are_read_as_evoscm_reads_them():
    second = {**CASCADE, "id": " H_ffl ", "confidence": 0.1}  # the same id, trimmed: replaces the first
    assert hypothesis(update(FFL, LATENT, second, selected_candidate_id="H_ffl"))["mechanisms"] == \
        CASCADE["mechanisms"]
    assert hypothesis(update("not a candidate", {**FFL, "id": ""}, LATENT))["id"] == "H_latent"
    assert hypothesis(update(FFL, LATENT, selected_candidate_id="  "))["id"] == "H_ffl"  # empty: no selection
    assert hypothesis({"edges": ["X -> Y"]}) == {"edges": ["X -> Y"]}  # one hypothesis: itself


@pytest.mark.parametrize("data, reason", [
    ({"scm_update": update(FFL, CASCADE), "scm_final": final("H_power")},
     "selected_candidate_id 'H_power' names no candidate (candidates: H_ffl, H_cascade)"),
    ({"scm_update": update(FFL, CASCADE, selected_candidate_id="H_ffl"), "scm_final": final("H_cascade")},
     "two different selections: 'H_cascade' and 'H_ffl'"),
    ({"scm_final": final("H_ffl")}, "a final object (scm_final) needs the candidates"),
    ({"candidates": {"H_ffl": FFL}}, "candidates: expected a list"),
    ({"candidates": [{"name": "no id"}]}, "candidates: no candidate with an 'id'"),
    (update({**FFL, "status": "retired"}, {**CASCADE, "status": "retired_capacity"}),
     "no selected_candidate_id and no candidate with status 'active'"),
    ({"scm_update": [FFL]}, "scm_update: expected an object"),
])
def test_a_bad_selection_is_bad_input_with_the_reason(tmp_path, data, reason):
    with pytest.raises(BadInput, match="^" + reason.replace("(", r"\(").replace(")", r"\)")):
        hypothesis(data)
    row, = score(task(tmp_path), json.dumps(data))
    assert row["status"] == "parse_error" and row["error"].startswith(reason) and row["grn_mech_nodes"] == 2


def test_a_reply_text_needs_its_update_and_json_in_its_tags(tmp_path):
    problem = task(tmp_path)
    only_final, broken = score(problem, "<scm_final>" + json.dumps(final("H_ffl")) + "</scm_final>",
                               "<scm_update>{'candidates': []}</scm_update>")
    assert only_final["status"] == "parse_error" and "needs an <scm_update>" in only_final["error"]
    assert broken["status"] == "parse_error" and broken["error"].startswith("<scm_update>: not JSON")


def signed(cand, signs):
    return {**cand, "edges": [{**e, "sign": s} for e, s in zip(cand["edges"], signs)]}


def test_parameters_are_put_in_and_a_near_miss_differs(tmp_path):
    problem = task(tmp_path)
    bare = {**FFL, "parameters": {"a": 2, "k": 0.5}}
    near = {**FFL, "parameters": {"a": {"estimate": 2.002}, "k": {"estimate": 0.5}}}  # 1e-3 off
    k_off = {**FFL, "parameters": {"a": 2.0, "k": 0.5005}}
    rows = score(problem, *(json.dumps(update(c)) for c in (FFL, bare, near, k_off)))
    assert [verdicts(r) for r in rows] == [{"Y": "proven", "Z": "proven"}, {"Y": "proven", "Z": "proven"},
                                           {"Y": "different", "Z": "different"},
                                           {"Y": "proven", "Z": "different"}]
    assert all(r["status"] == "ok" and r["error"] is None and r["grn_exact"] for r in rows)


@pytest.mark.parametrize("parameters, why", [
    ({"a": {"lower": 0.0, "upper": 5.0}, "k": 0.5}, "it has no 'estimate'"),
    ({"a": {"estimate": None}, "k": 0.5}, "its estimate 'None' is not a number"),
    ({"a": {"estimate": "2.0"}, "k": 0.5}, "its estimate '2.0' is not a number"),
    ({"a": {"estimate": True}, "k": 0.5}, "its estimate 'True' is not a number"),
    ({"a": float("nan"), "k": 0.5}, "its estimate nan is not a finite number"),
    ({"a": {"estimate": 10 ** 400}, "k": 0.5}, "is not a finite number"),
    ({"k": 0.5}, "it has no entry in 'parameters'"),  # a declared with role parameter only
])
def test_a_parameter_without_a_usable_estimate_leaves_its_equation_unusable(tmp_path, parameters, why):
    cand = signed({**FFL, "parameters": parameters}, [1, 1, -1])
    row, = score(task(tmp_path), json.dumps(update(cand)))
    assert row["status"] == "ok" and row["grn_exact"] is True
    assert row["error"].startswith("mechanisms[0] (Y): parameter a has no usable estimate: ") and why in row["error"]
    assert verdicts(row) == {"Y": "undecided", "Z": "undecided"}
    assert "Z: undecided: depends on Y, but its mechanism is unusable" in row["grn_mech_reason"]


def test_parameter_values_read_evoscm_shapes():
    values, reasons = parameter_values({"parameters": {"q": {"estimate": 1.0, "lower": 0.0, "upper": 3.0},
                                                       "C": -2, "r": "1"},
                                        "variables": [{"name": "p", "role": "Parameter"}]})
    assert values == {"q": 1.0, "C": -2.0}
    assert reasons == {"r": "its estimate '1' is not a number", "p": "it has no entry in 'parameters'"}


def test_a_parameter_named_like_a_node_stays_the_node(tmp_path):
    cand = {**FFL, "parameters": {**FFL["parameters"], "X": {"estimate": 3.0}}}
    row, = score(task(tmp_path), json.dumps(update(cand)))
    assert row["error"] == "parameters: X is a node of the task, not a parameter (not substituted)"
    assert verdicts(row) == {"Y": "proven", "Z": "proven"} and row["grn_exact"] is True


def test_an_unsigned_edge_takes_the_sign_of_its_equations_derivative():
    hypo = {"variables": GENES, "edges": [["X", "Y"], {"source": "X", "target": "Z"}, {"source": "Y", "target": "Z"}],
            "mechanisms": {"Y": "X**2/(1 + X**2)", "Z": "Z = 3*X/(1 + X + Y**2)"}}
    graph, _ = grn.parse_graph(json.dumps(hypo), NODES)
    assert graph == frozenset({("X", "Y", 1), ("X", "Z", 1), ("Y", "Z", -1)})
    mixed = {**hypo, "edges": [{"source": "X", "target": "Y", "sign": "represses"}, *hypo["edges"][1:]]}
    assert ("X", "Y", -1) in grn.parse_graph(json.dumps(mixed), NODES)[0]  # a given sign stands


@pytest.mark.parametrize("equation, ranges, sign", [
    ("(X - 2)**2 - Y", {"X": (3.0, 5.0)}, 1),       # 2*(X - 2) > 0 over the task's range of X
    ("(X - 2)**2 - Y", {"X": (0.1, 1.9)}, -1),
    ("(X - 2)**2 - Y", {"X": (0.1, 5.0)}, None),     # changes sign at 2
    ("X*(Y + 5)", {}, 1),                            # Y over the default range [0.1, 10]
    ("X*(Y - 5)", {}, None),
    ("log(X - 2)", {"X": (0.1, 5.0)}, None),         # not finite below 2
])
def test_the_sign_is_read_over_the_roots_ranges(equation, ranges, sign):
    hypo = {"edges": [{"source": "X", "target": "Z"}], "mechanisms": [{"target": "Z", "equation": equation}]}
    if sign is None:
        with pytest.raises(BadInput, match=r"edges\[0\]: edge X -> Z has no sign, and the derivative of Z's "
                                           r"equation in X is not of one sign"):
            grn.parse_graph(json.dumps(hypo), NODES, ranges=ranges)
    else:
        assert grn.parse_graph(json.dumps(hypo), NODES, ranges=ranges)[0] == frozenset({("X", "Z", sign)})


@pytest.mark.parametrize("mechanisms, reason", [
    ([{"target": "Z", "equation": "3 - Y"}], "edges[0]: edge X -> Z has no sign, and Z's equation does not depend on X"),
    ([{"target": "Y", "equation": "X"}], "edges[0]: edge X -> Z has no sign, and Z cannot give it: it has no mechanism"),
    ([{"target": "Z", "equation": "k*X"}], "edges[0]: edge X -> Z has no sign, and Z cannot give it: its mechanism "
                                           "is unusable (mechanisms[0] (Z): unknown name k"),
    ("Z = X", "edges[0]: edge X -> Z has no sign, and the mechanisms to take it from cannot be read"),
    ({"Z": "abs(X)"}, "edges[0]: edge X -> Z has no sign, and the derivative of Z's equation in X cannot be evaluated"),
])
def test_an_unsigned_edge_without_a_usable_equation_is_bad_input(mechanisms, reason):
    hypo = {"edges": [{"source": "X", "target": "Z"}], "mechanisms": mechanisms}
    with pytest.raises(BadInput) as caught:
        grn.parse_graph(json.dumps(hypo), NODES)
    assert str(caught.value).startswith(reason)


def test_unsigned_edges_elsewhere_stay_bad_input():
    for text in ('{"edges": [{"source": "X", "target": "Y"}]}', '{"edges": [["X", "Y"]]}'):
        with pytest.raises(BadInput, match=r"edges\[0\]: edge X -> Y has no sign \(give 'sign', or an SCM "):
            grn.parse_graph(text, NODES)
    hypo = {"edges": [{"source": "X", "target": "W"}], "mechanisms": {"W": "X"}}
    with pytest.raises(BadInput, match="node 'W' is not a node of the task"):  # checked before any sign
        grn.parse_graph(json.dumps(hypo), NODES)


def test_the_bundled_sweep_scores_an_evoscm_reply(tmp_path):
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "fastscore", "score", "--problems", str(ROOT / "problems" / "grn"),
                    "--sweep", str(ROOT / "problems" / "grn-example-sweep.jsonl"), "--out", str(out),
                    "--executor", "local"], check=True, capture_output=True)
    scores = pl.read_parquet(out / "scores.parquet")
    row = scores.filter((pl.col("config") == "agent-b") & (pl.col("run") == 1)
                        & (pl.col("task") == "incoherent-ffl")).row(0, named=True)
    assert row["status"] == "ok" and row["error"] is None and row["grn_exact"] is True and row["grn_motif"] is True
    assert verdicts(row) == {"Y": "proven", "Z": "proven"} and row["grn_mech_all"] is True
