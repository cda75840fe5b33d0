"""In-process executor: scores work units one after another in this process."""
from __future__ import annotations

import gc
from typing import Iterable, Iterator, Mapping, Sequence

from fastscore.problems import Problem
from fastscore.reference import Reference, build_reference
from fastscore.score import ScoreMemo, score_task
from fastscore.settings import Settings

WorkUnit = tuple[str, Sequence[Mapping]]
Result = tuple[list[dict], list[dict]]


class ReferenceCache:
    """References built on first use and kept for the life of the worker, with the
    worker's memory of scored submissions (``ScoreMemo``)."""

    def __init__(self, problems: Mapping[str, Problem], settings: Settings):
        self._problems, self._settings, self._built = problems, settings, {}
        self.memo = ScoreMemo()

    def __getitem__(self, task: str) -> Reference:
        if task not in self._built:
            self._built[task] = build_reference(self._problems[task], settings=self._settings)
            gc.freeze()  # long-lived objects leave the collector's scans: no growing pauses
        return self._built[task]


def score_units(units: Iterable[WorkUnit], references: ReferenceCache, settings: Settings) -> Iterator[Result]:
    """Score each (task, rows) unit against its reference."""
    for task, rows in units:
        yield score_task(references[task], rows, settings=settings, memo=references.memo)


class LocalExecutor:
    """Runs ``fastscore.score.score_task`` in this process."""

    name = "local"

    def __init__(self, problems: Mapping[str, Problem], settings: Settings):
        self._references = ReferenceCache(problems, settings)
        self._settings = settings

    def map(self, units: Iterable[WorkUnit]) -> Iterator[Result]:
        """Results of the units, in order."""
        return score_units(units, self._references, self._settings)

    def close(self) -> None:
        """Nothing to release."""
