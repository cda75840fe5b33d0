"""ActiveSciBench-GRN: signed-edge scores by hand, the submission forms, bad input, a sweep."""
from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from fastscore.benchmarks.base import BadInput
from fastscore.benchmarks.grn import graph_scores, motif_label, parse_graph
from fastscore.run.job import score_sweep

NODES = frozenset({"X", "Y", "Z"})
FFL = frozenset({("X", "Y", 1), ("X", "Z", 1), ("Y", "Z", 1)})
GRN = Path(__file__).resolve().parents[2] / "problems" / "grn"


def scores(text, reference=FFL, motif="coherent_ffl"):
    edges, label = parse_graph(text, NODES)
    return graph_scores(edges, reference, label, motif)


def test_exact_graph_scores_one_everywhere():
    got = scores("X -> Y\nX -> Z\nY -> Z\nmotif: Coherent-FFL")
    assert got == {"grn_precision": 1.0, "grn_recall": 1.0, "grn_f1": 1.0, "grn_sign_accuracy": 1.0,
                   "grn_exact": True, "grn_motif": True, "grn_n_edges": 3}


def test_a_wrong_sign_is_a_wrong_edge_and_counts_in_sign_accuracy():
    got = scores("X -> Y; X -> Z; Y -| Z")  # 2 of 3 triples; 3 shared pairs, 2 signs agree
    assert got["grn_precision"] == pytest.approx(2 / 3) and got["grn_recall"] == pytest.approx(2 / 3)
    assert got["grn_f1"] == pytest.approx(2 / 3)
    assert got["grn_sign_accuracy"] == pytest.approx(2 / 3)
    assert got["grn_exact"] is False and got["grn_motif"] is False  # no label submitted


def test_a_reversed_edge_does_not_count_and_shares_no_pair():
    got = scores("Y -> X, X -> Z")  # X->Z right; Y->X is not X->Y
    assert got["grn_precision"] == pytest.approx(1 / 2) and got["grn_recall"] == pytest.approx(1 / 3)
    assert got["grn_f1"] == pytest.approx(2 * (1 / 2) * (1 / 3) / (1 / 2 + 1 / 3))
    assert got["grn_sign_accuracy"] == 1.0  # one shared pair (X, Z), same sign


def test_no_overlap_and_empty_graphs():
    got = scores("Z -| Z")  # a self-loop, not in the reference
    assert (got["grn_precision"], got["grn_recall"], got["grn_f1"], got["grn_sign_accuracy"]) == (0, 0, 0, 0)
    empty = scores("motif: coherent_ffl")
    assert (empty["grn_precision"], empty["grn_recall"], empty["grn_f1"], empty["grn_n_edges"]) == (0, 0, 0, 0)
    assert empty["grn_motif"] is True
    both_empty = scores("", reference=frozenset())
    assert both_empty["grn_exact"] is True and both_empty["grn_f1"] == 0.0  # undefined ratios are 0


def test_self_loops_and_cycles_are_edges():
    ring = frozenset({("X", "Y", -1), ("Y", "Z", -1), ("Z", "X", -1), ("X", "X", -1)})
    assert scores("X -| Y; Y -| Z; Z -| X; X -| X", reference=ring)["grn_exact"] is True


def test_json_forms_adjacency_and_scm_hypothesis_give_the_same_graph():
    as_objects = json.dumps({"edges": [{"source": "X", "target": "Y", "sign": 1}, ["X", "Z", "+"],
                                       "Y -> Z"], "motif": "coherent ffl"})
    as_matrix = json.dumps({"nodes": ["X", "Y", "Z"], "adjacency": [[0, 1, 1], [0, 0, 1], [0, 0, 0]]})
    scm = json.dumps({"variables": [{"name": "X", "role": "input", "observability": "observed"},
                                    {"name": "H", "role": "hidden", "observability": "latent"},
                                    {"name": "Y"}, {"name": "Z"}],
                      "edges": [{"source": "X", "target": "Y", "sign": "activation"},
                                {"source": "X", "target": "Z", "sign": "activates"},
                                {"source": "Y", "target": "Z", "sign": 1},
                                {"source": "H", "target": "Z", "sign": -1}],  # latent: left out
                      "mechanisms": [{"target": "Z", "parents": ["X", "Y"], "equation": "Z = X*Y"}]})
    for text in (as_objects, as_matrix, scm, json.dumps(["X -> Y", "X -> Z", "Y -> Z"])):
        assert parse_graph(text, NODES)[0] == FFL
    assert parse_graph(as_objects, NODES)[1] == "coherent_ffl" == motif_label(" Coherent FFL ")


@pytest.mark.parametrize("text", [
    "X --> Y; X -> Z; Y --> Z",
    "X \u2192 Y\nX \u2192 Z\nY -> Z",
    "X activates Y, X induces Z, Y promotes Z",
    "X Activates Y; X -> Z; Y PROMOTES Z",
    '{"edges": ["X --> Y", "X activates Z", "Y \u2192 Z"]}',
])
def test_other_written_arrows_and_words_are_activations(text):
    assert parse_graph(text, NODES)[0] == FFL


@pytest.mark.parametrize("text", ["X --| Y", "X \u22a3 Y", "X inhibits Y", "X represses Y", "X ---| Y"])
def test_other_written_repressions(text):
    assert parse_graph(text, NODES)[0] == {("X", "Y", -1)}


@pytest.mark.parametrize("text", ["X => Y", "Xactivates Y", "X inhibitsY", "X -+ Y", "X activates", "X |- Y"])
def test_near_forms_stay_bad_input(text):
    with pytest.raises(BadInput, match="is not an edge"):
        parse_graph(text, NODES)


@pytest.mark.parametrize("text, reason", [
    ("X -> W", "node 'W' is not a node"),
    ('{"edges": [{"source": "X", "target": "Y", "sign": 2}]}', "sign 2 is not +1 or -1"),
    ('{"edges": [{"source": "X", "target": "Y", "sign": "maybe"}]}', "is not +1 or -1"),
    ('{"edges": [{"source": "X", "target": "Y"}]}', "has no sign"),
    ("X -> Y; X -| Y", "both signs"),
    ("X => Y", "is not an edge"),
    ('{"nodes": ["X", "Y"], "adjacency": [[0, 2], [0, 0]]}', "is not -1, 0 or +1"),
    ('{"nodes": ["X", "Y"], "adjacency": [[0, 1]]}', "square"),
    ("{not json", "not JSON"),
])
def test_bad_input_says_why(text, reason):
    with pytest.raises(BadInput, match=re.escape(reason)):
        parse_graph(text, NODES)


def test_a_sweep_scores_graphs_with_rates_strata_and_pass_at_k(tmp_path):
    rows = [{"config": "a", "run": 0, "task": "coherent-ffl", "submission": "X -> Y; X -> Z; Y -> Z\nmotif: coherent_ffl"},
            {"config": "a", "run": 1, "task": "coherent-ffl", "submission": "X -> Y; X -> Z; Y -| Z"},
            {"config": "a", "run": 0, "task": "cascade", "submission": "X -> W"},  # bad: the sweep goes on
            {"config": "a", "run": 1, "task": "cascade", "submission": "X -> Y; Y -> Z"}]
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_sweep(GRN, sweep, tmp_path / "out", executor="local")
    scored = pl.read_parquet(tmp_path / "out" / "scores.parquet")
    got = {(r["run"], r["task"]): r for r in scored.iter_rows(named=True)}
    assert got[(0, "cascade")]["status"] == "parse_error" and "'W'" in got[(0, "cascade")]["error"]
    assert got[(1, "coherent-ffl")]["grn_f1"] == pytest.approx(2 / 3)
    assert got[(0, "repressilator")]["status"] == "missing" and got[(0, "repressilator")]["domain"] == "grn"
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet").row(0, named=True)
    # per run over the 6 tasks: run 0 F1 = 1/6, run 1 F1 = (2/3 + 1)/6; exact: 1/6 and 1/6
    assert summary["grn_f1"] == pytest.approx(((1) / 6 + (2 / 3 + 1) / 6) / 2)
    assert summary["grn_exact"] == pytest.approx(1 / 6) and summary["sa_p"] is None  # no law task
    passk = pl.read_parquet(tmp_path / "out" / "passk.parquet").filter(pl.col("outcome") == "grn_exact")
    # coherent-ffl: n=2 c=1, cascade: n=2 c=1, four tasks n=2 c=0
    assert passk.select("k", "pass_at_k").rows() == [(1, pytest.approx(1 / 6)), (2, pytest.approx(2 / 6))]
    strata = pl.read_parquet(tmp_path / "out" / "strata.parquet")
    easy = strata.filter((pl.col("stratum") == "difficulty") & (pl.col("value") == "easy")).row(0, named=True)
    assert easy["grn_exact"] == pytest.approx(1 / 2)  # cascade and coherent-ffl: one exact of two each run


def test_a_folder_mixing_laws_and_graphs_keeps_each_rate_to_its_own_tasks(tmp_path):
    problems = tmp_path / "problems"
    problems.mkdir()
    example = Path(__file__).resolve().parents[2] / "problems" / "example" / "circular-orbit-period.yaml"
    (problems / "orbit.yaml").write_text(example.read_text())
    (problems / "cascade.yaml").write_text((GRN / "cascade.yaml").read_text())
    rows = [{"config": "a", "run": 0, "task": "orbit", "phenomenal": "T = 2*pi*sqrt(r**3/(G*M))"},
            {"config": "a", "run": 0, "task": "cascade", "submission": "X -> Y; Y -| Z"}]
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_sweep(problems, sweep, tmp_path / "out", executor="local")
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet").row(0, named=True)
    assert summary["sa_p"] == 1.0 and summary["n_tasks"] == 2  # over the law task only
    assert summary["grn_exact"] == 0.0 and summary["grn_f1"] == pytest.approx(0.5)
    passk = pl.read_parquet(tmp_path / "out" / "passk.parquet")
    assert passk.filter(pl.col("outcome") == "sa_p").select("pass_at_k", "n_tasks").rows() == [(1.0, 1)]


def test_the_benchmarks_declare_their_columns_and_names():
    from fastscore.benchmarks import BENCHMARKS, declared
    from fastscore.outputs import tables
    assert set(declared.names()) == set(BENCHMARKS) == {"grn", "llema", "discoverphysics"}
    for module in declared.benchmark_modules():
        assert module.BENCHMARK.name == module.NAME and all(tables.SCORE_SCHEMA[c] == t for c, t in
                                                            module.COLUMNS.items())
        assert {r[0] for r in module.RATES} <= {r.name for r in tables.RATES}
