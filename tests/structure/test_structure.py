"""Structure scores: the dependency graph, the graph and AST scores on
hand-made pairs with known answers, the quantities recovered by value, and the new
columns end to end on the bundled example."""
from __future__ import annotations

import random
import re
from collections import Counter

import polars as pl
import pytest

from fastscore.outputs.tables import STRUCTURE_MEANS
from fastscore.problems.formats import load_problems
from fastscore.report.document import write_report
from fastscore.report.structure import gap_table
from fastscore.run.job import score_sweep
from fastscore.scoring.reference import build_reference
from fastscore.scoring.structure import STRUCTURE_COLUMNS
from fastscore.scoring.task import score_task
from fastscore.structure.ast_score import ast_similarity, equation_shapes
from fastscore.structure.graph_score import graph_similarity
from fastscore.structure.graphs import EXPLICIT, IMPLICIT, UNDER, fixed_numbers, mechanism_graph
from fastscore.text.parse import parse_equation

KNOWNS = {"x", "z", "w"}
# nodes x, z, h1, h2, y; edges x->h1, z->h1, h1->h2, x->h2, h2->y: |V| + |E| = 10
CHAIN = ["h1 = x*z", "h2 = h1 + x", "y = h2**2"]


def _equations(texts):
    return [parse_equation(text, allow_new_names=True) for text in texts]


def _graph(texts, knowns=KNOWNS, target="y"):
    return mechanism_graph(_equations(texts), knowns, target)


def _graph_score(a, b, **kwargs) -> float:
    return graph_similarity(_graph(a), _graph(b), **kwargs).score


def _ast_score(a, b) -> float:
    return ast_similarity([equation_shapes(*e) for e in _equations(a)],
                          [equation_shapes(*e) for e in _equations(b)]).score


# ------------------------------------------------------------ the graph

def test_an_explicit_chain_has_edges_from_used_to_defined_quantities():
    graph = _graph(CHAIN)
    assert graph.edges == {("x", "h1"), ("z", "h1"), ("h1", "h2"), ("x", "h2"), ("h2", "y")}
    assert [b.kind for b in graph.blocks] == [EXPLICIT] * 3
    assert graph.roles == {"x": "known", "z": "known", "h1": "internal", "h2": "internal", "y": "target"}


def test_a_coupled_block_points_its_members_at_each_other_both_ways():
    graph = _graph(["a + b = x", "a - b = z", "y = a*b"])
    assert [(b.kind, b.unknowns) for b in graph.blocks] == [(IMPLICIT, ("a", "b")), (EXPLICIT, ("y",))]
    assert {("a", "b"), ("b", "a"), ("x", "a"), ("x", "b"), ("z", "a"), ("z", "b")} <= graph.edges


def test_an_under_determined_mechanism_still_has_a_graph():
    graph = _graph(["h1 = x*z", "y = h1 + g"])
    kinds = {b.kind: b.unknowns for b in graph.blocks}
    assert kinds == {EXPLICIT: ("h1",), UNDER: ("g", "y")}
    assert ("h1", "y") in graph.edges and ("g", "y") in graph.edges and ("y", "g") in graph.edges


# ----------------------------------------------------- graph score: known answers

def test_identical_renamed_and_shuffled_copies_score_exactly_one():
    renamed = ["y = speed**2", "speed = force + x", "force = z*x"]
    match = graph_similarity(_graph(CHAIN), _graph(renamed))
    assert match.score == 1.0 and match.exact
    assert match.mapping == {"h1": "force", "h2": "speed"}
    assert _graph_score(CHAIN, CHAIN) == 1.0
    coupled = ["a + b = x", "a - b = z", "y = a*b"]
    assert _graph_score(coupled, ["y = q*p", "q - p = z", "x = p + q"]) == 1.0


def test_the_same_graph_is_matched_to_itself_as_the_search_would():
    from fastscore.structure.graph_score import _Search
    for texts in (CHAIN, ["a + b = x", "a - b = z", "y = a*b"], ["h1 = x*z", "g = h1*z", "h2 = g + x", "y = h2**2"]):
        reference, shuffled = _graph(texts), _graph([_swap(t) for t in reversed(texts)])
        match = graph_similarity(reference, shuffled)
        assert (match.score, match.exact, match.steps) == (1.0, True, 0)
        assert match.mapping == {n: n for n in reference.internal}
        search = _Search(reference, shuffled, 10**6)  # what the search finds on the same pair
        value, _ = search.run()
        assert match.common_edges == search.fixed + value and match.common_nodes == len(reference.roles)
    # a renamed copy whose nodes colour refinement tells apart: the one map, as the search finds it
    renamed = _graph(["q7 = x*z", "a = q7 + x", "y = a**2"])
    match = graph_similarity(_graph(CHAIN), renamed)
    assert (match.score, match.exact, match.steps) == (1.0, True, 0) and match.mapping == {"h1": "q7", "h2": "a"}
    value, mapping = _Search(_graph(CHAIN), renamed, 10**6).run()
    assert mapping == match.mapping
    # two interchangeable quantities (an automorphism): colours cannot pick the map, the search does
    symmetric = ["h1 = x*z", "h2 = x*z", "y = h1 + h2"]
    match = graph_similarity(_graph(symmetric), _graph([t.replace("h1", "p").replace("h2", "q") for t in symmetric]))
    assert match.score == 1.0 and match.steps > 0
    # a renamed copy with one edge moved is not matched by colours
    assert graph_similarity(_graph(CHAIN), _graph(["q7 = x*z", "a = q7 + z", "y = a**2"])).steps > 0


def _swap(text):
    left, right = text.split("=")
    return f"{right.strip()} = {left.strip()}"


def test_one_equation_changed_keeps_the_graph():
    assert _graph_score(CHAIN, ["h1 = 2*x*z", "h2 = h1 + x", "y = h2**2"]) == 1.0


def test_a_missing_edge():
    # h2 = h1: the edge x->h2 is lost; 5 nodes and 4 edges kept: 2(5 + 4) / (10 + 9)
    assert _graph_score(CHAIN, ["h1 = x*z", "h2 = h1", "y = h2**2"]) == pytest.approx(18 / 19)


def test_a_wrong_extra_quantity():
    # g between h1 and h2: 6 nodes, 7 edges; best map h1->h1, h2->h2 keeps x->h1, z->h1,
    # x->h2, h2->y: 2(5 + 4) / (10 + 13)
    extra = ["h1 = x*z", "g = h1*z", "h2 = g + x", "y = h2**2"]
    match = graph_similarity(_graph(CHAIN), _graph(extra))
    assert match.score == pytest.approx(18 / 23)
    assert (match.common_nodes, match.common_edges) == (5, 4)


def test_a_completely_different_mechanism_shares_only_the_target():
    # nodes w, y and edge w->y: only y in common: 2 * 1 / (10 + 3)
    assert _graph_score(CHAIN, ["y = w"]) == pytest.approx(2 / 13)


def test_the_law_alone_keeps_the_anchors_but_no_edge():
    # y = (x*z + x)**2: nodes x, z, y, edges x->y, z->y: 2 * 3 / (10 + 5)
    assert _graph_score(CHAIN, ["y = (x*z + x)**2"]) == pytest.approx(0.4)
    # nothing internal to map on one side: no search, and what the search finds
    from fastscore.structure.graph_score import _Search
    for a, b in ((CHAIN, ["y = (x*z + x)**2"]), (["y = (x*z + x)**2"], CHAIN), (["y = x*z"], ["y = x + z"])):
        match = graph_similarity(_graph(a), _graph(b))
        search = _Search(_graph(a), _graph(b), 10**6)
        value, mapping = search.run()
        assert (match.exact, match.steps, match.mapping) == (True, 0, mapping)
        assert match.common_edges == search.fixed + value


def test_the_score_is_symmetric_and_in_range():
    pairs = [(CHAIN, ["y = w"]), (CHAIN, ["h1 = x*z", "g = h1*z", "h2 = g + x", "y = h2**2"])]
    for a, b in pairs:
        assert _graph_score(a, b) == pytest.approx(_graph_score(b, a))
        assert 0.0 <= _graph_score(a, b) <= 1.0


# ------------------------------------------------------------ AST score

def test_shapes_ignore_names_and_numeric_values():
    assert equation_shapes(*_equations(["a = 3*b**2 + c"])[0]) == equation_shapes(*_equations(["u = 7.5*v**4 + w"])[0])
    assert equation_shapes(*_equations(["a = 2*pi*b"])[0]) == equation_shapes(*_equations(["a = 3*b"])[0])
    assert equation_shapes(*_equations(["a = b + c"])[0]) != equation_shapes(*_equations(["a = b*c"])[0])
    assert equation_shapes(*_equations(["a = b + c"])[0]) == equation_shapes(*_equations(["c + b = a"])[0])


def test_ast_score_known_answers():
    assert _ast_score(CHAIN, ["y = speed**3", "speed = force + x", "force = z*x"]) == 1.0
    # h1 = x*z is {var x3, x*z, (=)}: 5 shapes; h1 = 2*x*z is {var x3, num, 2*x*z, (=)}: 6;
    # 3 in common: Dice 6/11; with the two other equations unchanged: (2 + 6/11) / 3
    assert _ast_score(CHAIN, ["h1 = 2*x*z", "h2 = h1 + x", "y = h2**2"]) == pytest.approx(28 / 33)
    # a missing equation costs its share: the two others pair perfectly
    assert _ast_score(CHAIN, ["h2 = h1 + x", "y = h2**2"]) == pytest.approx(2 / 3)
    assert _ast_score(CHAIN, []) == 0.0


def test_ast_pairs_follow_the_graph_map_on_ties():
    reference = _equations(["a = x*z", "b = x*w", "y = a + b"])
    submitted = _equations(["q = x*w", "p = x*z", "y = p + q"])
    match = graph_similarity(mechanism_graph(reference, KNOWNS, "y"), mechanism_graph(submitted, KNOWNS, "y"))
    names = lambda eqs: [{s.name for side in e for s in side.free_symbols} for e in eqs]  # noqa: E731
    ast = ast_similarity([equation_shapes(*e) for e in reference], [equation_shapes(*e) for e in submitted],
                         reference_names=names(reference), submitted_names=names(submitted), mapping=match.mapping)
    assert ast.score == 1.0 and sorted(ast.pairs) == [(0, 1, 1.0), (1, 0, 1.0), (2, 2, 1.0)]


# ------------------------------------------------ determinism and bounded search

def _random_dag(rng: random.Random, n: int, density: float) -> list[str]:
    texts = []
    for i in range(n):
        used = ["x"] + [f"h{j}" for j in range(i) if rng.random() < density] + (["z"] if rng.random() < 0.5 else [])
        texts.append(f"h{i} = " + " + ".join(used))
    texts.append("y = " + " + ".join(f"h{i}" for i in range(n) if rng.random() < 0.5 or i == n - 1))
    return texts


def test_determinism_and_invariance_to_order():
    rng = random.Random(7)
    a, b = _random_dag(rng, 8, 0.4), _random_dag(rng, 8, 0.4)
    first = graph_similarity(_graph(a), _graph(b))
    assert first == graph_similarity(_graph(a), _graph(b))
    shuffled = b[:]
    random.Random(1).shuffle(shuffled)
    assert graph_similarity(_graph(a), _graph(shuffled)).score == first.score and first.exact


def test_a_huge_mechanism_is_bounded_by_the_step_cap():
    rng = random.Random(3)
    a, b = _random_dag(rng, 60, 0.3), _random_dag(rng, 60, 0.3)
    cap = 20_000
    match = graph_similarity(_graph(a), _graph(b), max_steps=cap)
    assert not match.exact and 0.0 < match.score < 1.0
    # the cap, passed by at most one search node (its candidates and bound: 62 x 61 units)
    assert cap < match.steps <= cap + 62 * 61
    renamed = [text.replace("h", "q") for text in a]
    assert graph_similarity(_graph(a), _graph(renamed), max_steps=cap).score == 1.0


def test_fixed_numbers_are_substituted_until_none_is_left():
    equations = _equations(["k = 1.4", "2.5 = mu", "g = k*mu", "h1 = g*x", "y = h1 + z"])
    assert [tuple(map(str, e)) for e in fixed_numbers(equations, KNOWNS, "y")] == [("h1", "(7/2)*x"), ("y", "h1 + z")]
    # a name fixed twice, a known and the target stay; a number-free equation is kept
    kept = _equations(["k = 1", "k = 2", "x = 3", "y = 4", "h1 = k*x"])
    assert fixed_numbers(kept, KNOWNS, "y") == kept


def test_a_copy_of_a_task_mechanism_with_its_coefficient_lines_scores_one(mechbench_tasks):
    """A MechBench task's fixed coefficients (``charge = 1.602176634e-19``, undeclared) are
    substituted in the reference; a copy of its mechanism text keeps them as lines."""
    problem = next(p for p in load_problems(mechbench_tasks) if p.task_id == "Hall Response - Original")
    reference = build_reference(problem)
    formulas = [m["formula"] for m in problem.task["mechanism_model"]]
    assert any(f.startswith("charge =") for f in formulas)
    internal = sorted({v.name for v in problem.intermediates} | {c.name for c in problem.coefficients}, key=len)
    renamed = "\n".join(formulas)
    for i, name in enumerate(reversed(internal)):  # longest first, whole words
        renamed = re.sub(rf"\b{name}\b", f"q{i}", renamed)
    inline = "\n".join(f for f in formulas if not any(f.startswith(f"{c.name} =") for c in problem.coefficients))
    for coefficient in problem.coefficients:
        inline = re.sub(rf"\b{coefficient.name}\b", coefficient.formula, inline)
    for text in ("\n".join(formulas), renamed, inline):
        row = _score(reference, mechanism=text)
        assert row["p_equivalent"] and row["structure_graph_score"] == 1.0 and row["structure_ast_score"] == 1.0


# ------------------------------------------ score rows: recovery by value, notes

@pytest.fixture(scope="module")
def references(example_dir):
    return {p.task_id: build_reference(p) for p in load_problems(example_dir)}


VACANCY = "cv = exp(-(Ef + p*Omega)/(kB*T)); cm = cv; Eb = Em; r = nu*exp(-Eb/(kB*T)); D = a**2*cm*r/6"


def _score(reference, **fields) -> dict:
    rows, _ = score_task(reference, [{"config": "c", "run": 0, "task": reference.problem.task_id, **fields}])
    return rows[0]


def test_a_renamed_reference_mechanism_recovers_every_quantity(references):
    names = {"cv": "vac", "cm": "mob", "Eb": "barrier", "r": "rate"}
    renamed = re.sub(r"\b\w+\b", lambda m: names.get(m.group(0), m.group(0)), VACANCY)
    row = _score(references["vacancy-diffusion-original"], mechanism=renamed)
    assert row["p_equivalent"] and row["structure_graph_score"] == 1.0 and row["structure_ast_score"] == 1.0
    assert (row["n_quantities_recovered"], row["n_reference_quantities"]) == (4, 4)
    assert row["structure_note"] is None


def test_a_wrong_barrier_loses_the_quantities_that_depend_on_it(references):
    row = _score(references["vacancy-diffusion-original"], mechanism=VACANCY.replace("Eb = Em", "Eb = 2*Em"))
    assert not row["p_equivalent"] and row["structure_graph_score"] == 1.0 and row["structure_ast_score"] < 1.0
    assert (row["n_quantities_recovered"], row["n_reference_quantities"]) == (2, 4)  # cv and cm only


def test_a_mechanism_that_does_not_solve_is_scored_from_its_equations(references):
    row = _score(references["vacancy-diffusion-original"], mechanism="cv = exp(-Ef/(kB*T)); D = a**2*cv*r/6")
    assert row["status"] == "solve_error"
    assert 0.0 < row["structure_graph_score"] < 1.0 and 0.0 < row["structure_ast_score"] < 1.0
    assert row["n_quantities_recovered"] is None and row["n_reference_quantities"] == 4
    assert "does not solve" in row["structure_note"]


def test_phenomenal_and_unparsable_submissions_have_no_structure_scores(references):
    reference = references["michaelis-menten-rate"]
    phenomenal = _score(reference, phenomenal="v = k3*E_T*S/((k2 + k3)/k1 + S)")
    assert all(phenomenal[c] is None for c in STRUCTURE_COLUMNS)
    broken = _score(reference, mechanism="r_on = k1*(E_free; v = r_on")
    assert broken["status"] == "parse_error" and broken["structure_graph_score"] is None
    assert broken["structure_note"] == "the mechanism does not parse"


@pytest.mark.slow
def test_the_new_columns_end_to_end_on_the_example(tmp_path, example_dir, example_sweep):
    summary = score_sweep(example_dir, example_sweep, tmp_path, executor="local")
    scores = pl.read_parquet(tmp_path / "scores.parquet")
    assert set(STRUCTURE_COLUMNS) <= set(scores.columns)
    mechanisms = scores.filter(pl.col("kind") == "mechanism")
    assert mechanisms.height and mechanisms["structure_graph_score"].null_count() == 0
    assert scores.filter(pl.col("kind") == "phenomenal")["structure_graph_score"].null_count() == \
        scores.filter(pl.col("kind") == "phenomenal").height
    by_config = {row["config"]: row for row in summary.iter_rows(named=True)}
    for mean in STRUCTURE_MEANS:
        assert by_config["oracle"][mean] == 1.0 and f"{mean}_std" in summary.columns
    # model-b's only mechanism does not solve: scored from its equations, no values
    assert 0.0 < by_config["model-b"]["structure_graph_score"] < 1.0
    assert by_config["model-b"]["quantities_recovered"] is None
    strata = pl.read_parquet(tmp_path / "strata.parquet")
    assert set(STRUCTURE_MEANS) <= set(strata.columns)
    oracle = strata.filter((pl.col("config") == "oracle") & (pl.col("stratum") == "domain"))
    assert oracle.filter(pl.col("value") == "materials")["structure_graph_score"].to_list() == [1.0]
    assert Counter(mechanisms["structure_note"].drop_nulls().to_list()) == Counter(
        ["the mechanism does not solve: graph and AST scores from its equations, no values"])


# ------------------------------------------------------------ the report

def test_gap_table_on_hand_made_rows():
    scores = pl.DataFrame({
        "config": ["a", "a", "a", "b"], "p_equivalent": [True, True, False, None],
        "structure_graph_score": [1.0, 0.5, 0.2, 0.9], "structure_ast_score": [1.0, 0.6, 0.1, 0.3],
        "n_quantities_recovered": [3, None, 0, 1], "n_reference_quantities": [3, 3, 3, 4]})
    rows = {(r["config"], r["law"]): r for r in gap_table(scores).iter_rows(named=True)}
    right = rows[("a", "right")]
    assert (right["n"], right["graph_mean"], right["graph_median"], right["graph_exact"]) == (2, 0.75, 0.75, 0.5)
    assert right["ast_mean"] == pytest.approx(0.8) and right["recovered"] == 1.0  # the null row has no values
    assert rows[("a", "wrong")]["recovered"] == 0.0
    assert rows[("b", "wrong")]["n"] == 1 and rows[("b", "wrong")]["recovered"] == 0.25  # null law is wrong


@pytest.mark.slow
def test_the_report_shows_the_gap_and_the_graphs(tmp_path, example_dir, example_sweep):
    score_sweep(example_dir, example_sweep, tmp_path, executor="local")
    report = write_report(tmp_path).read_text()
    section = report[report.index("## Structure recovery"):]
    assert "| oracle | right | 6 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 |" in section
    assert "| model-b | wrong | 1 | " in section
    assert "](structure_by_law.png)" in section and (tmp_path / "report" / "structure_by_law.png").is_file()
    # model-b's vacancy-diffusion-variant-1-2 mechanism is the only wrong graph
    assert "![vacancy-diffusion-variant-1-2: reference (left) and the most common wrong graph" in section
    assert (tmp_path / "report" / "structure_graph_1.png").read_bytes().startswith(b"\x89PNG")
    meta = tmp_path / "meta.json"
    meta.write_text(meta.read_text().replace(str(example_sweep), "/nonexistent"))
    report = write_report(tmp_path).read_text()
    assert "graphs skipped" in report and not (tmp_path / "report" / "structure_graph_1.png").exists()
