"""Submission scorers: columns of a score row computed from one submission (an
extension point: ``register_scorer``), and the step of ``score_task`` that adds them
(``add_scorer_columns``).

The built-in scorer kinds (``ScorerKind``: the phenomenal law, the mechanism and its
derived law, the probe answers) are fused in ``fastscore.scoring.task``'s batch pipeline
(parse -> solve -> evaluate every expression of a task at once -> judge).  After the
laws are judged, each ``SubmissionScorer`` is called once per unique submission (its
phenomenal and mechanism texts) with a ``SubmissionContext`` and adds its columns to
the row: first the built-in ones (``BUILTIN_SCORERS``: the structure scores,
``fastscore.scoring.structure``, declared here and loaded when first called), then the
registered ones.

The contract:

- ``columns``: the columns it adds, name -> Polars dtype; they join
  ``fastscore.outputs.tables.SCORE_SCHEMA`` when it is registered (a name already there is
  refused), so the tables give them that type and the summary does not take a
  numeric one for a solver cost column.  The built-in scorers' columns are declared
  in ``fastscore.outputs.tables`` (``BUILTIN_SCORER_COLUMNS``), so reading tables loads no
  scorer.
- ``score(context)``: a mapping of its columns; a missing column is null, other keys
  are ignored.  Called for every submission, whatever its status (a phenomenal one,
  one that does not parse or solve: return nulls, or say why in a column of your own).
  It must be a pure function of (reference, submission texts, settings) and must not
  change the context: its columns are memoised with the law's (``ScoreMemo``) and
  shared by every repeat of the submission.  Not called with probe answers: a column
  of a row may not depend on them.
- ``same_for_copies`` (default False): its columns are the same for copies of one
  mechanism (the same equations up to their order, sides and internal names:
  ``fastscore.solve.copies``), so a copy in the batch takes the first one's and is not scored.  An exception fails the batch like any scoring
  error (the executor retries the submission alone, then writes an ``eval_error`` row).
- Register it before scoring starts, in every process that scores or writes tables:
  the local executor's child is forked from the registering process; Ray workers
  must import the registering module themselves.  A worker's memo keeps the rows it
  has scored.

This module loads neither SymEngine nor Numba.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal, NamedTuple, get_args

import polars as pl

from fastscore.outputs import tables

if TYPE_CHECKING:
    import symengine as se

    from fastscore.algebra.equivalence import Verdict
    from fastscore.scoring.reference import Reference
    from fastscore.settings import Settings
    from fastscore.solve.solution import Solution

ScorerKind = Literal["law", "mechanism", "probes"]
"""The built-in scorer kinds, fused in ``fastscore.scoring.task``; their names are reserved."""
SCORER_KINDS: tuple[ScorerKind, ...] = get_args(ScorerKind)


class SubmissionContext(NamedTuple):
    """What a submission scorer reads (read-only), after the law is judged (a named
    tuple: one is made per unique submission, cheaper than a frozen dataclass).

    ``phenomenal``, ``mechanism``: the submitted texts (stripped; None when absent);
    ``kind``: ``phenomenal`` or ``mechanism`` (the row's ``kind``; None when nothing
    was submitted or the formula does not parse); ``fields``: the row's law columns so
    far (``status``, ``error``, ``p_equivalent``, ``p_verdict``, the split metrics, ...);
    ``law``: the phenomenal formula or the derived law (constants substituted; None
    when there is none, or a mechanism was solved numerically only); ``equations``:
    a solved mechanism's parsed equations (lhs, rhs), constants substituted (empty
    otherwise: parse ``mechanism`` if you need them); ``solution``: the solved
    mechanism (None unless it solved); ``verdict``: the law's
    verdict against the reference (None unless it was judged); ``recovered``: for a
    solved mechanism, each reference quantity -> the submitted quantities equal to it
    by value (``fastscore.scoring.structure.recovered_quantities``), else None."""

    reference: Reference
    settings: Settings
    phenomenal: str | None
    mechanism: str | None
    kind: tables.SubmissionKind | None
    fields: Mapping[str, object]
    law: se.Basic | None = None
    equations: tuple = ()
    solution: Solution | None = None
    verdict: Verdict | None = None
    recovered: Mapping[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class SubmissionScorer:
    """A submission scorer (an extension point: ``register_scorer``; module doc):
    ``name``, the ``columns`` it adds (name -> Polars dtype), ``score(context)``, which
    returns them, and whether they are the same for copies of a mechanism."""

    name: str
    columns: Mapping[str, pl.DataType]
    score: Callable[[SubmissionContext], Mapping[str, object]]
    same_for_copies: bool = False


def _structure(context: SubmissionContext) -> Mapping[str, object]:
    """The structure scorer (``fastscore.scoring.structure.structure_score``), imported on
    first call: it loads SymEngine and Numba."""
    from fastscore.scoring.structure import structure_score
    return structure_score(context)


BUILTIN_SCORERS: tuple[SubmissionScorer, ...] = (
    SubmissionScorer("structure", tables.STRUCTURE_SCHEMA, _structure, same_for_copies=True),
)
"""The built-in scorers, called first, in order; their columns are declared in
``fastscore.outputs.tables.BUILTIN_SCORER_COLUMNS``."""
SCORERS: list[SubmissionScorer] = []
"""The registered scorers, called in order after the built-in ones."""


def register_scorer(scorer: SubmissionScorer) -> None:
    """Add a scorer (after those there are) and its columns to ``SCORE_SCHEMA``."""
    taken = {*SCORER_KINDS, *(s.name for s in (*BUILTIN_SCORERS, *SCORERS))}
    if scorer.name in taken:
        raise ValueError(f"scorer name {scorer.name!r} is taken")
    declared = tables.BUILTIN_SCORER_COLUMNS.get(scorer.name)
    if declared is not None:
        if dict(scorer.columns) != dict(declared):
            raise ValueError(f"scorer {scorer.name!r}: its columns differ from those fastscore.outputs.tables declares")
    else:
        clash = [name for name in scorer.columns if name in tables.SCORE_SCHEMA]
        if clash:
            raise ValueError(f"scorer {scorer.name!r}: column {clash[0]!r} is already a score column")
        tables.SCORE_SCHEMA.update(scorer.columns)
    SCORERS.append(scorer)


def unregister_scorer(name: str) -> None:
    """Remove a registered scorer, and its columns unless ``fastscore.outputs.tables`` declares them."""
    scorer = next((s for s in SCORERS if s.name == name), None)
    if scorer is None:
        raise ValueError(f"no scorer {name!r}; registered: {', '.join(s.name for s in SCORERS) or 'none'}")
    SCORERS.remove(scorer)
    if name not in tables.BUILTIN_SCORER_COLUMNS:
        for column in scorer.columns:
            tables.SCORE_SCHEMA.pop(column, None)


def submission_scorers() -> list[SubmissionScorer]:
    """Every scorer, in the order called: the built-in ones, then the registered ones."""
    return [*BUILTIN_SCORERS, *SCORERS]


def add_scorer_columns(reference: Reference, settings: Settings, judged: Mapping[tuple, object]) -> None:
    """Add every scorer's columns to the fields of each law ``judged`` in the batch (law
    key -> ``fastscore.scoring.judge.JudgedLaw``), in order; a copy of a mechanism judged
    before it takes that one's columns of the scorers ``same_for_copies``."""
    scorers = submission_scorers()
    scored: dict[tuple, dict] = {}  # columns by law key, for its copies
    for key, (candidate, outcome, fields) in judged.items():
        context = None  # built for the first scorer that runs (a copy's equations are renamed then)
        original = None if candidate.copy_of is None else scored.get(candidate.copy_of[0])
        for scorer in scorers:
            if original is not None and scorer.same_for_copies:
                fields.update((name, original[name]) for name in scorer.columns)
                continue
            if context is None:
                context = SubmissionContext(reference, settings, *key, candidate.kind, MappingProxyType(fields),
                                            candidate.expr, candidate.mechanism_equations(), candidate.solution,
                                            outcome.verdict, outcome.recovered)
            added = scorer.score(context)  # its declared columns only, a missing one null
            fields.update(added if added.keys() == scorer.columns.keys() else
                          {name: added.get(name) for name in scorer.columns})
        scored[key] = fields
