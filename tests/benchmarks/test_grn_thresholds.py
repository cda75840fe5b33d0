"""ActiveSciBench-GRN edge cases by hand: self-loops, 2-cycles of opposite signs, an
adjacency matrix in another node order or with entries that are not -1/0/+1, empty
graphs, motif label variants, and the version / difficulty strata of a sweep through
``fastscore score`` (missing cells included)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from fastscore.benchmarks.base import BadInput
from fastscore.benchmarks.grn import graph_scores, motif_label, parse_graph

NODES = frozenset({"X", "Y", "Z"})
GRN = Path(__file__).resolve().parents[2] / "problems" / "grn"


def scores(text, reference, motif=None):
    edges, label = parse_graph(text, NODES)
    return graph_scores(edges, reference, label, motif)


def test_self_loop_and_two_cycle_of_opposite_signs():
    reference = frozenset({("X", "X", -1), ("X", "Y", 1), ("Y", "X", -1)})  # autorepression, X <-> Y opposite
    exact = scores("X -| X\nX -> Y\nY -| X", reference)
    assert (exact["grn_precision"], exact["grn_recall"], exact["grn_f1"], exact["grn_sign_accuracy"],
            exact["grn_exact"]) == (1.0, 1.0, 1.0, 1.0, True)
    # the 2-cycle with its signs swapped: both pairs shared, no sign agrees; the self-loop right
    swapped = scores("X -| X; X -| Y; Y -> X", reference)
    assert swapped["grn_precision"] == pytest.approx(1 / 3) and swapped["grn_recall"] == pytest.approx(1 / 3)
    assert swapped["grn_f1"] == pytest.approx(1 / 3) and swapped["grn_sign_accuracy"] == pytest.approx(1 / 3)
    assert swapped["grn_exact"] is False
    # the self-loop with the wrong sign and one direction of the cycle only
    partial = scores("X -> X; X -> Y", reference)  # pairs shared: (X,X) disagrees, (X,Y) agrees
    assert (partial["grn_precision"], partial["grn_recall"]) == (0.5, pytest.approx(1 / 3))
    assert partial["grn_f1"] == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    assert partial["grn_sign_accuracy"] == 0.5 and partial["grn_n_edges"] == 2


def test_an_adjacency_matrix_in_another_node_order():
    reference = frozenset({("X", "Y", 1), ("Y", "Z", -1), ("Z", "Z", 1)})
    # nodes Z, X, Y: row = source, column = target
    matrix = {"nodes": ["Z", "X", "Y"], "adjacency": [[1, 0, 0], [0, 0, 1], [-1, 0, 0]]}
    got = scores(json.dumps(matrix), reference)
    assert got["grn_exact"] is True and got["grn_f1"] == 1.0
    transposed = {"nodes": ["Z", "X", "Y"], "adjacency": [[1, 0, -1], [0, 0, 0], [0, 1, 0]]}
    got = scores(json.dumps(transposed), reference)  # Y -> X and Z -| Y: reversed, only Z -> Z right
    assert got["grn_precision"] == pytest.approx(1 / 3) and got["grn_sign_accuracy"] == 1.0
    subset = {"nodes": ["Y", "X"], "adjacency": [[0, 0], [1.0, 0]]}  # a matrix over some nodes; 1.0 is +1
    assert parse_graph(json.dumps(subset), NODES)[0] == frozenset({("X", "Y", 1)})


@pytest.mark.parametrize("entry, shown", [("2", "'2'"), ("0.5", "'0.5'"), ("NaN", "'nan'"), ("-1.5", "'-1.5'"),
                                          ('"1"', "'1'"), ("true", "'True'"), ("null", "'None'"),
                                          ("Infinity", "'inf'")])
def test_matrix_entries_that_are_not_a_sign_are_bad_input(entry, shown):
    text = '{"nodes": ["X", "Y"], "adjacency": [[0, %s], [0, 0]]}' % entry
    with pytest.raises(BadInput, match=re.escape(f"adjacency[0][1]: {shown} is not -1, 0 or +1")):
        parse_graph(text, NODES)


@pytest.mark.parametrize("text, reason", [
    ('{"nodes": ["X", "X"], "adjacency": [[0, 1], [0, 0]]}', "node 'X' is named twice"),
    ('{"nodes": ["X", "W"], "adjacency": [[0, 1], [0, 0]]}', "node 'W' is not a node of the task"),
    ('{"nodes": ["X", "Y"], "adjacency": [[0, 1], [0]]}', "adjacency[1]: expected 2 entries"),
    ('{"edges": [{"source": "X", "target": "Y", "sign": 0}]}', "sign 0 is not +1 or -1"),
    ('{"edges": [{"source": "X", "target": "Y", "sign": NaN}]}', "sign nan is not +1 or -1"),
    ('{"edges": [{"source": "X", "target": "Y", "sign": true}]}', "sign True is not +1 or -1"),
    ('{"edges": [{"source": "X", "target": "x", "sign": 1}]}', "node 'x' is not a node"),  # names are exact
    ('{"edges": [["X", "Y", "+"], ["X", "Y", "-"]]}', "given with both signs"),
])
def test_bad_graphs_say_why(text, reason):
    with pytest.raises(BadInput, match=re.escape(reason)):
        parse_graph(text, NODES)


def test_empty_graphs():
    empty = frozenset()
    both = scores("", empty)
    assert both == {"grn_precision": 0.0, "grn_recall": 0.0, "grn_f1": 0.0, "grn_sign_accuracy": 0.0,
                    "grn_exact": True, "grn_motif": False, "grn_n_edges": 0}
    against_empty = scores("X -> Y", empty)  # precision 0/1, recall undefined: 0
    assert (against_empty["grn_precision"], against_empty["grn_recall"], against_empty["grn_exact"]) == (
        0.0, 0.0, False)
    nothing = scores(json.dumps({"nodes": ["X", "Y", "Z"], "adjacency": [[0] * 3] * 3}),
                     frozenset({("X", "Y", 1)}))
    assert (nothing["grn_precision"], nothing["grn_recall"], nothing["grn_f1"], nothing["grn_exact"]) == (
        0.0, 0.0, 0.0, False)


@pytest.mark.parametrize("label", ["incoherent_ffl", "Incoherent FFL", " incoherent-ffl ", "INCOHERENT__FFL",
                                   "incoherent - ffl", "_incoherent_ffl_", "incoherent\tffl"])
def test_motif_label_variants_match(label):
    assert motif_label(label) == "incoherent_ffl"
    assert scores(f"X -> Y\nmotif: {label}", frozenset(), "incoherent_ffl")["grn_motif"] is True
    assert scores(json.dumps({"edges": [], "motif": label}), frozenset(), "incoherent_ffl")["grn_motif"] is True


@pytest.mark.parametrize("label", ["incoherentffl", "coherent_ffl", "incoherent_ffl_1", "ffl", "", "   "])
def test_other_motif_labels_do_not_match(label):
    assert scores(json.dumps({"edges": [], "motif": label}), frozenset(), "incoherent_ffl")["grn_motif"] is False
    assert motif_label("  ") is None and motif_label(None) is None


def test_strata_by_version_and_difficulty_count_missing_cells(tmp_path):
    problems = tmp_path / "problems"
    problems.mkdir()
    for name in ("cascade", "coherent-ffl", "repressilator"):  # easy, easy, hard
        (problems / f"{name}.yaml").write_text((GRN / f"{name}.yaml").read_text())
    (problems / "cascade-v2.yaml").write_text(
        (GRN / "cascade.yaml").read_text().replace('version: "1"', 'version: "2"').replace("easy", "medium"))
    rows = [{"config": "a", "run": 0, "task": "cascade", "submission": "X -> Y\nY -> Z"},          # exact
            {"config": "a", "run": 0, "task": "cascade-v2", "submission": "X -> Y"},               # F1 2/3
            {"config": "a", "run": 0, "task": "repressilator", "submission": "X -| Y; W -| Z"},    # bad input
            {"config": "a", "run": 1, "task": "repressilator", "submission": "X -| Y\nY -| Z\nZ -| X"}]
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    subprocess.run([sys.executable, "-m", "fastscore", "score", "--problems", str(problems), "--sweep", str(sweep),
                    "--out", str(out), "--executor", "local"], check=True, capture_output=True)
    strata = pl.read_parquet(out / "strata.parquet")
    got = {(r["stratum"], r["value"]): r for r in strata.iter_rows(named=True)}
    # run 0: cascade exact, coherent-ffl missing; run 1: both missing
    assert got[("difficulty", "easy")]["grn_exact"] == pytest.approx((1 / 2 + 0) / 2)
    assert got[("difficulty", "easy")]["n_tasks"] == 2
    assert got[("difficulty", "hard")]["grn_exact"] == pytest.approx((0 + 1) / 2)  # run 0 bad input, run 1 exact
    assert got[("difficulty", "medium")]["grn_f1"] == pytest.approx((2 / 3 + 0) / 2)
    # version 1: cascade, coherent-ffl, repressilator; version 2: cascade-v2
    assert got[("version", "1")]["grn_exact"] == pytest.approx((1 / 3 + 1 / 3) / 2)
    assert got[("version", "2")]["grn_exact"] == 0.0 and got[("version", "2")]["n_tasks"] == 1
    scores_table = pl.read_parquet(out / "scores.parquet")
    missing = scores_table.filter(pl.col("status") == "missing")
    assert missing.height == 4 and missing["difficulty"].null_count() == 0 and missing["version"].null_count() == 0
    bad = scores_table.filter(pl.col("status") == "parse_error").row(0, named=True)
    assert bad["task"] == "repressilator" and "'W'" in bad["error"] and bad["difficulty"] == "hard"


def test_an_evoscm_candidate_marks_latent_variables_with_observed_false():
    hypothesis = {"id": "H_ffl", "variables": [{"name": "X", "role": "state", "observed": True},
                                               {"name": "q", "role": "parameter", "observed": False},
                                               {"name": "Y", "observed": True}],
                  "edges": [{"source": "X", "target": "Y", "sign": "+"}, {"source": "q", "target": "Y", "sign": "-"}],
                  "mechanisms": [{"target": "Y", "parents": ["X", "q"], "equation": "Y = X - q"}]}
    assert parse_graph(json.dumps(hypothesis), NODES)[0] == frozenset({("X", "Y", 1)})
    hypothesis["variables"][1]["observed"] = True  # an observed variable must be a node of the task
    with pytest.raises(BadInput, match="node 'q' is not a node of the task"):
        parse_graph(json.dumps(hypothesis), NODES)
