"""Batches of work units, as both executors send them (``local``, ``ray``): a batch
of one task's rows with its time limit, the split of units into batches, and the row
of a lone submission an executor could not score (its status and error)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from fastscore.outputs import tables
from fastscore.problems.model import Problem
from fastscore.run.executors.base import Result, WorkUnit


@dataclass
class Batch:
    """Rows of one task scored together; ``single``: a lone submission retried after
    its batch failed."""

    units: list[WorkUnit]
    single: bool = False

    @property
    def rows(self) -> int:
        return sum(len(rows) for _, rows in self.units)

    def limit(self, row_timeout: float) -> float:
        """Seconds this batch may take, counted from its start."""
        return row_timeout * (1 if self.single else max(2, self.rows / 50))

    def singles(self) -> list[Batch]:
        return [Batch([(task, [row])], single=True) for task, rows in self.units for row in rows]


def batches(units: Iterable[WorkUnit], size: int) -> Iterator[Batch]:
    """One task per batch, at most ``size`` rows (large units are split)."""
    for task, rows in units:
        for start in range(0, len(rows), size):
            yield Batch([(task, rows[start:start + size])])


def failed(batch: Batch, problems: Mapping[str, Problem], status: tables.Status, error: str) -> Result:
    """The row of a lone submission the executor could not score: no ``submission_sha``,
    so that a resumed run scores it again (the failure may be the machine's)."""
    (task, (row,)), = batch.units
    return [tables.failed_row({**row, "submission_sha": None}, problems[task], status=status, error=error)], []


def timeout_error(row_timeout: float) -> str:
    return f"scoring took longer than {row_timeout:g} s"


DIED = "the worker died while scoring this submission"
