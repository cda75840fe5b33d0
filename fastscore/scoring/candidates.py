"""The candidates of a batch: each distinct submitted law parsed, or its mechanism
solved for the derived law (``fastscore.solve.mechanism``), before anything is
evaluated.  A copy of a mechanism solved before takes its solution, renamed
(``fastscore.solve.copies``); what does not parse or solve is a candidate with its
``status`` and ``error``.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field

import symengine as se

from fastscore.algebra.sizes import count_nodes
from fastscore.outputs.tables import Status, SubmissionKind
from fastscore.scoring.memo import Batch, new_copies
from fastscore.scoring.reference import Reference
from fastscore.settings import Settings
from fastscore.solve.copies import Copies, renamed
from fastscore.solve.mechanism import SolveError, SolveTimeout, solve_mechanism
from fastscore.support.caches import memoized
from fastscore.sweeps.submission import Submission
from fastscore.text.answers import defined_constants, read_expression
from fastscore.text.parse import parse_equation
from fastscore.text.tokens import Limits, ParseError

__all__ = ["Candidate", "LARGE_PREFIX", "build_candidate", "build_candidates", "law_expressions"]


@dataclass
class Candidate:
    """A parsed (and, for mechanisms, solved) submission, before evaluation."""

    kind: SubmissionKind | None = None
    expr: se.Basic | None = None
    text: str | None = None  # str(expr), computed once: the key of its values and verdict
    error: str | None = None
    status: Status = "ok"
    equations: tuple = ()  # a mechanism's, parsed; empty for a copy written alike (``renamed_from``)
    solution: object = None
    seconds: float = 0.0
    nodes: tuple[int, ...] = field(default_factory=tuple)
    copy_of: tuple[tuple, Mapping[str, str]] | None = None  # (law key, renaming) of the mechanism it copies
    renamed_from: tuple | None = None  # a copy written alike: the original's equations, renamed when needed

    def mechanism_equations(self) -> tuple:
        """The parsed equations of a mechanism (a copy written alike: the original's, renamed)."""
        if self.renamed_from is not None:
            self.equations, self.renamed_from = tuple(renamed(self.renamed_from, self.copy_of[1])), None
        return self.equations


def build_candidates(reference: Reference, batch: Batch, settings: Settings,
                     progress: Callable[[list[int] | None], None] | None = None) -> dict[tuple, Candidate]:
    """The candidate of every law key the batch needs (``Batch.wanted``), in its order;
    ``progress(indices)`` before each, with the rows that share it, then ``progress(None)``."""
    copies = new_copies(reference, settings)  # a mechanism's copies: solved once
    wanted = batch.wanted()
    if progress is None:
        return {key: build_candidate(reference, batch.by_law[key], settings=settings, copies=copies)
                for key in wanted}
    indices = batch.rows_of()
    candidates = {}
    for key in wanted:
        progress(indices.get(key, []))
        candidates[key] = build_candidate(reference, batch.by_law[key], settings=settings, copies=copies)
    progress(None)
    return candidates


def build_candidate(reference: Reference, submission: Submission, *, settings: Settings,
                    copies: Copies) -> Candidate:
    """The candidate of a submission's law key; ``copies``: the mechanisms solved so far."""
    started = time.perf_counter()
    problem = reference.problem
    try:
        if submission.mechanism is not None:
            candidate = _solve(reference, submission, settings, copies)
        elif submission.law is not None:
            expr = read_expression(submission.law, target=problem.target.name, names=reference.knowns,
                                   limits=settings.limits)
            if reference.constants:
                expr = expr.subs(reference.constants)
            candidate = Candidate(kind="phenomenal", expr=expr, nodes=(count_nodes(expr),))
        else:
            candidate = Candidate(status="parse_error", error="empty submission: no phenomenal formula or mechanism")
    except ParseError as error:
        candidate = Candidate(status="parse_error", error=str(error))
    except SolveTimeout as error:
        candidate = Candidate(kind="mechanism", status="timeout", error=str(error))
    except SolveError as error:
        candidate = Candidate(kind="mechanism", status="solve_error", error=str(error))
    except ValueError as error:
        candidate = Candidate(status="parse_error", error=str(error))
    candidate.seconds = time.perf_counter() - started
    if candidate.expr is not None:
        candidate.text = _key_text(candidate.expr, settings.max_text_nodes)
    return candidate


def law_expressions(batch: Batch, candidates: Mapping[tuple, Candidate]) -> Iterator[tuple[str, se.Basic]]:
    """(text, expression) of every candidate law still to be judged."""
    return ((c.text, c.expr) for key, c in candidates.items() if c.expr is not None and batch.laws[key] is None)


@memoized(1 << 10)
def _key_text(expr: se.Basic, max_nodes: int) -> str:
    """The text of a candidate law (its key, and its ``derived_formula``; memoised: copies
    of a mechanism share their law).  A law over
    ``max_nodes`` tree nodes (``Settings.max_text_nodes``) is not written out: a chain of
    20 substitutions shares one subexpression a million times, and its text would be
    tens of megabytes (``derived_formula`` is then null; the law is still judged)."""
    if count_nodes(expr) > max_nodes:
        return f"{LARGE_PREFIX}{hash(expr):x}>"
    return str(expr)


LARGE_PREFIX = "<a law too large to write out: "


def _solve(reference: Reference, submission: Submission, settings: Settings, copies: Copies) -> Candidate:
    """Parse and solve a submission's mechanism; a copy of one solved before (the same
    equations up to order, sides and internal names: ``fastscore.solve.copies``) takes its
    solution, renamed."""
    problem = reference.problem
    key = submission.law_key
    limits = settings.limits
    texts = submission.equations(limits)
    names = (*reference.knowns, problem.target.name, *defined_constants(texts))
    written = copies.written(texts, limits)  # the same texts, names aside: not parsed again
    if written is not None:
        (original, solution), mapping, equations, nodes = written
        return Candidate(kind="mechanism", expr=solution.law, renamed_from=tuple(equations),
                         solution=solution.renamed(mapping), nodes=nodes, copy_of=(original, mapping))
    equations = [_equation(text, names, limits) for text in texts]
    if reference.constants:
        equations = [(lhs.subs(reference.constants), rhs.subs(reference.constants)) for lhs, rhs in equations]
    nodes = tuple(count_nodes(lhs) + count_nodes(rhs) for lhs, rhs in equations)
    found = copies.find(equations, nodes)
    if found is not None:
        (original, solution), mapping = found
        solution = solution.renamed(mapping)
    else:
        solution = solve_mechanism(equations, knowns=reference.knowns, target=problem.target.name,
                                   points=reference.points, budget=settings.solve_budget, rtol=settings.rtol,
                                   solved_blocks=copies.blocks, limits=settings.limits)
        copies.add(equations, (key, solution), texts, nodes)
    return Candidate(kind="mechanism", expr=solution.law, equations=tuple(equations), solution=solution,
                     nodes=nodes, copy_of=None if found is None else (original, mapping))


@memoized(1 << 10)
def _equation(text: str, names: tuple[str, ...], limits: Limits) -> tuple[se.Basic, se.Basic]:
    """One equation of a submitted mechanism (memoised: a task's submissions share most
    of their equations; a text that does not parse raises each time)."""
    return parse_equation(text, names=names, allow_new_names=True, limits=limits)
