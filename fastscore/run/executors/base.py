"""The executor contract: what ``fastscore.run.job`` hands an executor and what it gets back.

An ``Executor`` has a ``name`` (recorded in ``meta.json``), ``map(units)``, which
yields the ``Result`` of the ``WorkUnit``s as they complete (in any grouping, every
row once; a row it cannot score is a failed row with its status), and ``close()``,
which stops its workers.  A work unit is a task id with sweep rows of that task; a
result is (score rows, probe rows).  A worker keeps a ``ReferenceCache`` for its life
and scores units with ``score_units``, which pauses the garbage collector for each
unit (``fastscore.support.collector``): the scorer itself leaves the collector alone.
"""
from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Protocol

from fastscore.benchmarks import benchmark_of
from fastscore.problems.model import Problem
from fastscore.scoring.reference import Reference, build_reference
from fastscore.scoring.task import ScoreMemo
from fastscore.settings import Settings
from fastscore.support.collector import paused

WorkUnit = tuple[str, Sequence[Mapping]]
Result = tuple[list[dict], list[dict]]


class Executor(Protocol):
    """Runs the scorer over work units (see module doc)."""

    name: str

    def map(self, units: Iterable[WorkUnit]) -> Iterator[Result]:
        """Results of the units, as they complete."""

    def close(self) -> None:
        """Stop the workers."""


class ReferenceCache:
    """References built on first use and kept for the life of the worker, with the
    worker's memory of scored submissions (``ScoreMemo``)."""

    def __init__(self, problems: Mapping[str, Problem], settings: Settings):
        self._problems, self._settings, self._built = problems, settings, {}
        self.memo = ScoreMemo(settings.memo_size)

    def __getitem__(self, task: str) -> Reference | Problem:
        """The task's reference; a non-law benchmark's task (``fastscore.benchmarks``)
        has none: its problem is returned as it is."""
        if task not in self._built:
            problem = self._problems[task]
            self._built[task] = problem if benchmark_of(problem) is not None else \
                build_reference(problem, settings=self._settings)
            gc.freeze()  # long-lived objects leave the collector's scans: no growing pauses
        return self._built[task]


def score_units(units: Iterable[WorkUnit], references: ReferenceCache, settings: Settings,
                score: Callable[..., Result], progress: Callable | None = None) -> Iterator[Result]:
    """Score each (task, rows) unit against its reference with ``score``
    (``fastscore.scoring.task.score_task``, as each executor names it; a non-law benchmark's
    task with its benchmark's ``score_task``), the garbage collector
    paused meanwhile; ``progress`` is handed on to it when given."""
    extra = {} if progress is None else {"progress": progress}
    for task, rows in units:
        reference = references[task]
        with paused():
            if isinstance(reference, Problem):  # a non-law benchmark's task: its own scorer
                result = benchmark_of(reference).score_task(reference, rows, settings), []
            else:
                result = score(reference, rows, settings=settings, memo=references.memo, **extra)
        yield result
