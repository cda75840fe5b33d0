"""Copies of a mechanism (``fastscore.solve.copies``): the same equations up to order, sides
and internal names are found, with the right renaming, and solved once by ``score_task``;
near copies are not."""
from __future__ import annotations

import numpy as np
import pytest

import fastscore.scoring.candidates as candidates_module
from fastscore.scoring.task import score_task
from fastscore.solve.copies import Copies
from fastscore.solve.copies import renamed as renamed_equations
from fastscore.solve.mechanism import solve_mechanism
from fastscore.text.parse import parse_equation
from tests.support.scoring import MM_MECHANISM, mm_row

KNOWNS = ("x", "t")
FIXED = (*KNOWNS, "y")


def _equations(text: str):
    return [parse_equation(e, names=FIXED, allow_new_names=True) for e in text.split(";")]


def _found(original: str, copy: str):
    copies = Copies(FIXED)
    copies.add(_equations(original), "value")
    return copies.find(_equations(copy))


def test_a_shuffled_copy_with_sides_swapped_is_found_with_no_renaming():
    assert _found("a = 2*x; b = a + t; y = a*b", "y = a*b; a + t = b; a = 2*x") == ("value", {})


def test_a_renamed_copy_is_found_with_its_renaming():
    found = _found("a = 2*x; b = 3*x; y = a*b + b", "q = 3*x; y = p*q + q; p = 2*x")
    assert found == ("value", {"a": "p", "b": "q"})


def test_names_swapped_between_roles_are_mapped_by_role():
    # the same names, each doing the other's job: a copy only under a <-> b
    assert _found("a = 2*x; b = 3*x; y = a + b**2", "b = 2*x; a = 3*x; y = b + a**2") == \
        ("value", {"a": "b", "b": "a"})


def test_near_copies_are_not_copies():
    original = "a = 2*x; b = 3*x; y = a*b + b"
    for near in ("a = 2*x; b = 3*x; y = a*b + a",  # another name in one place
                 "a = 2*x; b = 3.5*x; y = a*b + b",  # another coefficient
                 "a = 2*t; b = 3*x; y = a*b + b",  # another known
                 "a = 2*x; b = 3*x; y = a*b + b; c = a"):  # one more equation
        assert _found(original, near) is None, near


def test_a_name_renamed_in_one_place_only_is_no_copy():
    assert _found("a = 2*x; b = a*x; y = a + b", "p = 2*x; b = a*x; y = p + b") is None
    assert _found("a = 2*x; b = a*x; y = a + b", "b = 2*x; b = a*x; y = b + b") is None  # two names onto one


def test_names_no_equation_tells_apart_give_no_renaming():
    # a and b are interchangeable: any renaming would do, and none is guessed
    assert _found("a = x; b = x; y = a*b", "p = x; q = x; y = p*q") is None


@pytest.mark.slow
def test_a_renamed_solution_gives_the_same_values_under_the_new_names():
    points = {"x": np.linspace(0.5, 2.0, 40), "t": np.linspace(1.0, 3.0, 40)}
    equations = _equations("a + exp(a) = x; b = a*t; y = b + a")  # a: numeric root finding
    solution = solve_mechanism(equations, knowns=KNOWNS, target="y", points=points)
    assert solution.numeric  # a is solved per point, b and y from it
    renamed = solution.renamed({"a": "p", "b": "q"})
    assert renamed.numeric == ("p", "q", "y") and renamed.law is solution.law is None
    before, after = solution.values(["a", "b", "y"], points), renamed.values(["p", "q", "y"], points)
    for old, new in (("a", "p"), ("b", "q"), ("y", "y")):
        np.testing.assert_array_equal(before[old], after[new])


def test_copies_in_a_batch_score_as_each_would_alone(reference, monkeypatch):  # noqa: F811
    renamed = MM_MECHANISM.replace("C", "complex_conc").replace("E_free", "free")
    shuffled = "; ".join(reversed(MM_MECHANISM.split("; ")))
    rows = [mm_row(i, mechanism=m, probes=p) for i, (m, p) in enumerate([
        (MM_MECHANISM, '{"C": "C"}'), (renamed, '{"C": "complex_conc"}'), (shuffled, '{"C": "C"}'),
        (renamed, '{"C": "free"}')])]
    alone = [score_task(reference, [row]) for row in rows]
    solved = []
    monkeypatch.setattr(candidates_module, "solve_mechanism", lambda *a, **k: solved.append(1) or solve_mechanism(*a, **k))
    together, together_probes = score_task(reference, rows)
    assert len(solved) == 1  # the copies take the first one's solution
    timing = "parse_solve_seconds"
    for (scores, probes), row, probe in zip(alone, together, together_probes):
        assert {k: v for k, v in scores[0].items() if k != timing} == {k: v for k, v in row.items() if k != timing}
        assert probes[0] == probe
    assert together_probes[1]["probe_mechanism_quantity"] == "complex_conc"
    assert [p["probe_equivalent"] for p in together_probes] == [True, True, True, False]


def test_a_scorer_same_for_copies_is_called_once_for_a_mechanism_and_its_copies(reference):  # noqa: F811
    import polars as pl

    from fastscore.scoring.scorers import SubmissionScorer, register_scorer, unregister_scorer
    calls = {"alike": [], "own": []}

    def scorer(name):
        return lambda context: calls[name].append(context.mechanism) or {f"n_{name}": len(context.equations)}

    register_scorer(SubmissionScorer("alike", {"n_alike": pl.Int64}, scorer("alike"), same_for_copies=True))
    register_scorer(SubmissionScorer("own", {"n_own": pl.Int64}, scorer("own")))
    try:
        renamed = MM_MECHANISM.replace("C", "complex_conc")
        other = MM_MECHANISM.replace("r_cat = k3*C", "r_cat = 2*k3*C")
        scores, _ = score_task(reference, [mm_row(i, mechanism=m) for i, m in enumerate([MM_MECHANISM, renamed, other])])
    finally:
        unregister_scorer("alike")
        unregister_scorer("own")
    assert calls["alike"] == [MM_MECHANISM, other] and calls["own"] == [MM_MECHANISM, renamed, other]
    assert [s["n_alike"] for s in scores] == [6, 6, 6] == [s["n_own"] for s in scores]


def _written(original: str, copy: str):
    from fastscore.text.tokens import Limits
    copies = Copies(FIXED)
    copies.add(_equations(original), "value", original.split(";"))
    found = copies.written(copy.split(";"), Limits())
    if found is None:
        return None
    value, mapping, equations, _ = found  # the sizes aside
    return value, mapping, renamed_equations(equations, mapping)  # its equations once renamed


def test_a_copy_written_the_same_but_for_its_names_is_renamed_not_parsed():
    value, mapping, equations = _written("a = 2*x + t; b = a*exp(-a/t); y = b**2 - a",
                                         "p = 2*x + t; q = p*exp(-p/t); y = q**2 - p")
    assert value == "value" and mapping == {"a": "p", "b": "q"}
    assert equations == _equations("p = 2*x + t; q = p*exp(-p/t); y = q**2 - p")  # as parsing would give
    assert _written("a = 2*x; y = a", "a  =  2 * x;y=a")[1:] == ({}, _equations("a = 2*x; y = a"))  # spacing


def test_names_the_parser_reads_otherwise_are_never_renamed():
    original = "a = 2*x; b = a*t; y = a + b"
    for copy in ("pi = 2*x; b = pi*t; y = pi + b",  # a constant
                 "exp = 2*x; b = exp*t; y = exp + b",  # a function
                 "a = 2*t; b = a*x; y = a + b",  # knowns swapped
                 "a = 2*x; b = a*t; q = a + b",  # the target
                 "a = 2*x; b = a*t; y = a + b + 0"):  # another text
        assert _written(original, copy) is None, copy


def test_a_batch_starts_from_the_reference_mechanisms_own_blocks(reference, monkeypatch):
    """The reference mechanism's closed-form blocks, solved once per reference over the
    submissions' points, seed each batch: a submission that shares a block with it (here
    the whole mechanism, written alike) solves nothing itself, and its rows are those it
    gets solving every block."""
    from fastscore.scoring.reference import Reference
    from fastscore.settings import DEFAULT_SETTINGS
    from fastscore.solve.mechanism import _Solver
    assert reference.own_blocks(DEFAULT_SETTINGS)  # its coupled balance among them
    mechanism = "; ".join(e.text for e in reference.problem.mechanism)
    rows = [mm_row(0, mechanism=mechanism), mm_row(1, mechanism=mechanism + "; w = 2*v")]  # the second: one block more
    calls = []
    solve_equations = _Solver.solve_equations
    monkeypatch.setattr(_Solver, "solve_equations", lambda self, *a: calls.append(a[1]) or solve_equations(self, *a))
    seeded, seeded_probes = score_task(reference, rows)
    assert calls == [["w"]]  # only the block the reference mechanism has not
    calls.clear()
    monkeypatch.setattr(Reference, "own_blocks", lambda self, settings: {})
    alone, alone_probes = score_task(reference, rows)
    assert len(calls) > 1 and ["w"] in calls
    for a, b in zip(seeded, alone):
        assert {k: v for k, v in a.items() if k != "parse_solve_seconds"} == \
            {k: v for k, v in b.items() if k != "parse_solve_seconds"}
    assert seeded_probes == alone_probes
