"""The structure columns of a mechanism submission's score row.

Against the problem's own mechanism (``fastscore.structure.graph_score`` and
``fastscore.structure.ast_score`` define the scores):

- ``structure_graph_score``: dependency-graph similarity up to renaming, in [0, 1];
- ``structure_ast_score``: formula-AST similarity of the paired equations, in [0, 1];
- ``n_quantities_recovered`` / ``n_reference_quantities``: how many internal
  quantities of the reference mechanism (every unknown but the target) some
  internal quantity of the submission equals *by value*, whatever its name: float64
  values at the reference's points screen the pairs (within 1e-3 at 90% of the first
  64 domain points), then ``fastscore.algebra.equivalence.judge`` decides (proven or numeric);
- ``structure_note``: why a column is null or approximate, else null.

The graph and AST scores compare the two mechanisms with their fixed numbers
substituted (``fastscore.structure.graphs.fixed_numbers``: a ``k = 1.4`` line is a
coefficient, not structure), so a copy of the task's mechanism scores 1 whether it
keeps the task's coefficient lines or writes the numbers in.

A mechanism that parses but does not solve (under- or over-determined, inconsistent,
timed out) still gets its graph and AST scores from its equations; having no values,
its ``n_quantities_recovered`` is null. A phenomenal submission, a mechanism that does
not parse, or a problem without a mechanism get nulls. The graph search is capped at
``Settings.structure_steps`` work units, so any mechanism (at most 64
equations, the parser's limit) is bounded in time.

The columns are the built-in submission scorer ``structure``'s
(``fastscore.scoring.scorers.BUILTIN_SCORERS`` calls `structure_score`); their types are
``fastscore.outputs.tables.STRUCTURE_SCHEMA``.  They are the
same for copies of a mechanism (its equations in another order, sides swapped,
internal quantities renamed: ``fastscore.solve.copies``): every score is up to renaming and
order, so a copy in a batch takes the first one's columns.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import symengine as se

from fastscore.algebra.agreement import agree
from fastscore.algebra.equivalence import Quantity, judge
from fastscore.outputs.tables import STRUCTURE_SCHEMA
from fastscore.problems.model import Problem
from fastscore.scoring.reference import Reference, reference_equations
from fastscore.scoring.scorers import SubmissionContext
from fastscore.settings import Settings
from fastscore.solve.solution import Solution
from fastscore.structure.ast_score import AstReference, equation_shapes
from fastscore.structure.graph_score import graph_similarity
from fastscore.structure.graphs import MechanismGraph, fixed_numbers, mechanism_graph
from fastscore.tapes.compile import UnsupportedExpression
from fastscore.text.answers import defined_constants, split_equations
from fastscore.text.parse import parse_equation
from fastscore.text.tokens import ParseError

STRUCTURE_COLUMNS = tuple(STRUCTURE_SCHEMA)
_SCREEN_POINTS = 64
_SCREEN_RTOL = 1e-3
_SCREEN_SHARE = 0.9


def roles_of(problem: Problem) -> dict[str, str]:
    """The role of every known name of a problem: input, auxiliary or constant."""
    return {**{v.name: "input" for v in problem.inputs}, **{v.name: "auxiliary" for v in problem.auxiliary_inputs},
            **{c.name: "constant" for c in problem.constants}}


@dataclass(frozen=True)
class ReferenceStructure:
    """The reference side, prepared once per reference: its graph, the graph and
    equation bags it is compared by (its fixed numbers substituted) and the values of its
    internal quantities."""

    graph: MechanismGraph
    compared: MechanismGraph
    ast: AstReference  # its equation bags and names, prepared for `ast_similarity`
    quantities: Mapping[str, Quantity]
    by_expr: Mapping[se.Basic, str]  # the closed form of each quantity that has one -> its name
    screen: np.ndarray  # values of ``quantities`` at the screening points, one row each
    error: str | None  # why the quantities are unavailable (the reference mechanism did not solve)


_PREPARED: dict[int, tuple[weakref.ref, ReferenceStructure | None]] = {}


def reference_structure(reference: Reference) -> ReferenceStructure | None:
    """The prepared reference side (cached per reference object), None without a mechanism."""
    key = id(reference)
    cached = _PREPARED.get(key)
    if cached is not None and cached[0]() is reference:
        return cached[1]
    prepared = _prepare(reference)
    _PREPARED[key] = (weakref.ref(reference, lambda _, key=key: _PREPARED.pop(key, None)), prepared)
    return prepared


def _prepare(reference: Reference) -> ReferenceStructure | None:
    problem = reference.problem
    if not problem.mechanism:
        return None
    equations = reference_equations(problem, reference.constants)
    graph = mechanism_graph(equations, reference.knowns, problem.target.name, roles_of(problem))
    quantities, error = {}, reference.mechanism_error
    solution = reference.mechanism
    if solution is not None:
        internal = [n for n in graph.internal if n in solution.expressions or n in solution.numeric]
        values = solution.values(internal, reference.points) if internal else {}
        for name in internal:
            expr = solution.expressions.get(name)
            try:
                quantities[name] = Quantity.bounded(expr, reference.domain) if expr is not None else None
            except UnsupportedExpression:
                quantities[name] = None
            if quantities[name] is None:
                quantities[name] = Quantity(None, values[name])
    screen = np.array([q.values[_screen_columns(reference)] for q in quantities.values()]).reshape(
        len(quantities), -1)
    by_expr = {q.expr: name for name, q in reversed(quantities.items()) if q.expr is not None}
    compared, equations = compared_graph(reference.problem, equations)
    ast = AstReference([equation_shapes(*e) for e in equations], [_names(e) for e in equations])
    return ReferenceStructure(graph=graph, compared=compared, ast=ast, quantities=quantities, by_expr=by_expr,
                              screen=screen,
                              error=None if solution is not None else f"reference mechanism: {error}")


def compared_graph(problem: Problem, equations) -> tuple[MechanismGraph, list]:
    """What the structure scores compare of a mechanism for ``problem``: its equations
    with their fixed numbers substituted (`fixed_numbers`), and their graph."""
    target = problem.target.name
    equations = fixed_numbers(equations, problem.known_names, target)
    return mechanism_graph(equations, problem.known_names, target, roles_of(problem)), equations


def _screen_columns(reference: Reference) -> slice:
    domain = reference.segment_slice("domain")
    return slice(domain.start, min(domain.stop, domain.start + _SCREEN_POINTS))


def _names(equation) -> frozenset[str]:
    return frozenset(s.name for side in equation for s in side.free_symbols)


def parse_submitted(problem: Problem, constants: Mapping[se.Basic, se.Basic],
                    mechanism: str) -> list[tuple[se.Basic, se.Basic]]:
    """A submitted mechanism's equations as ``fastscore.scoring.candidates`` reads them, ``constants``
    substituted (raises ``ParseError``)."""
    texts = split_equations(mechanism)
    names = (*problem.known_names, problem.target.name, *defined_constants(texts))
    equations = [parse_equation(text, names=names, allow_new_names=True) for text in texts]
    return [(lhs.subs(constants), rhs.subs(constants)) for lhs, rhs in equations]


def structure_fields(reference: Reference, mechanism: str | None, solution: Solution | None, settings: Settings,
                     *, equations=(), recovered: Mapping[str, tuple[str, ...]] | None = None) -> dict:
    """The structure columns of one submission (module doc); ``equations``: the parsed
    mechanism when at hand (it is parsed from ``mechanism`` otherwise); ``recovered``:
    `recovered_quantities` of ``solution`` when already known."""
    fields = dict.fromkeys(STRUCTURE_COLUMNS)
    if mechanism is None:
        return fields
    prepared = reference_structure(reference)
    if prepared is None:
        return {**fields, "structure_note": "the problem has no mechanism"}
    fields["n_reference_quantities"] = len(prepared.graph.internal)
    try:
        equations = list(equations) or parse_submitted(reference.problem, reference.constants, mechanism)
    except (ParseError, ValueError):
        return {**fields, "structure_note": "the mechanism does not parse"}
    graph, equations = compared_graph(reference.problem, equations)
    match = graph_similarity(prepared.compared, graph, max_steps=settings.structure_steps)
    ast = prepared.ast.similarity([equation_shapes(*e) for e in equations], [_names(e) for e in equations],
                                  mapping=match.mapping)
    fields.update(structure_graph_score=match.score, structure_ast_score=ast.score)
    notes = [] if match.exact else [f"graph match approximate (search stopped after {match.steps} steps)"]
    if solution is None:
        notes.append("the mechanism does not solve: graph and AST scores from its equations, no values")
    elif prepared.error is not None:
        notes.append(f"no reference values ({prepared.error})")
    else:
        found = recovered if recovered is not None else recovered_quantities(reference, solution, settings)
        fields["n_quantities_recovered"] = sum(bool(v) for v in found.values())
    fields["structure_note"] = "; ".join(notes) or None
    return fields


def structure_score(context: SubmissionContext) -> dict:
    """The built-in ``structure`` scorer (``fastscore.scoring.scorers.BUILTIN_SCORERS``):
    `structure_fields` of a submission, after its law is judged."""
    return structure_fields(context.reference, context.mechanism, context.solution, context.settings,
                            equations=context.equations, recovered=context.recovered)


def recovered_quantities(reference: Reference, solution: Solution, settings: Settings, *,
                         every: bool = False, known: dict | None = None) -> dict[str, tuple[str, ...]]:
    """For each internal quantity of the reference mechanism, the internal quantities of
    the submitted ``solution`` equal to it by value (whatever their names): the first
    one found, or with ``every`` all of them; empty when none is.  ``known``: a dict
    shared by the calls of one batch (one reference and settings), in which the values,
    screen and verdicts of each closed form are kept: a batch's mechanisms share most of
    theirs."""
    prepared = reference_structure(reference)
    if prepared is None or not prepared.quantities:
        return {}
    target = reference.problem.target.name
    internal = [n for n in (*solution.expressions, *solution.numeric) if n != target]
    found = {name: () for name in prepared.quantities}
    if not internal:
        return found
    known = {} if known is None else known
    exprs = [solution.expressions.get(n) for n in internal]
    rest = [n for n, e in zip(internal, exprs) if e is None or (e not in known and e not in prepared.by_expr)]
    values = solution.values(rest, reference.points) if rest else {}
    columns = _screen_columns(reference)
    new = {}  # the closed forms met first here, and their values
    for n, e in zip(internal, exprs):
        if e is not None and e not in known and e not in new:
            # a closed form that is a reference quantity's own has its values already
            new[e] = prepared.quantities[prepared.by_expr[e]].values if e in prepared.by_expr else values[n]
    numeric = [n for n, e in zip(internal, exprs) if e is None]
    screened = [*new.values(), *(values[n] for n in numeric)]  # screened at once, one column each
    if screened:
        shares = _screen(prepared.screen, np.array([v[columns] for v in screened])).T
        for (e, value), column in zip(new.items(), shares):
            known[e] = _Known(value, column)
        by_name = dict(zip(numeric, shares[len(new):]))
    share = np.array([known[e].share if e is not None else by_name[n] for n, e in zip(internal, exprs)]).T
    for row, (name, expected) in enumerate(prepared.quantities.items()):
        for col in sorted(np.flatnonzero(share[row] >= _SCREEN_SHARE), key=lambda c: (-share[row, c], internal[c])):
            candidate, expr = internal[col], exprs[col]
            if expr is None:
                equal = judge(Quantity(None, values[candidate]), expected, domain=reference.domain,
                              settings=settings, prove=False).equivalent
            else:
                equal = known[expr].equal.get(name)
                if equal is None:
                    quantity = Quantity(expr if expected.expr is not None else None, known[expr].values)
                    equal = known[expr].equal[name] = judge(quantity, expected, domain=reference.domain,
                                                            settings=settings, prove=False).equivalent
            if equal:
                found[name] += (candidate,)
                if not every:
                    break
    return found


@dataclass
class _Known:
    """A closed form met in a batch (`recovered_quantities`): its values, its screen share
    against each reference quantity, and its verdicts so far (by reference quantity)."""

    values: np.ndarray
    share: np.ndarray
    equal: dict[str, bool] = field(default_factory=dict)


def _screen(reference: np.ndarray, submitted: np.ndarray) -> np.ndarray:
    """Share of screening points where each (reference, submitted) pair agrees
    loosely: both finite within ``_SCREEN_RTOL``, or both not finite."""
    a, b = reference[:, None, :], submitted[None, :, :]
    close = agree(a, b, rtol=_SCREEN_RTOL) | (~np.isfinite(a) & ~np.isfinite(b))
    return close.mean(axis=2) if close.shape[2] else np.zeros(close.shape[:2])
