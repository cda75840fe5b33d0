"""Every problem of a set written out: its data splits (``write_splits``: ``fastscore
data``) and its public task view (``write_task_views``: ``fastscore prepare``).

The splits are the ones scoring draws, so this module sits on top of the scoring stack
(``fastscore.scoring.reference`` builds each reference) and of the benchmarks (a
non-law benchmark's task has no splits).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import get_args

from fastscore.benchmarks import law_problems
from fastscore.problems.formats import load_problems
from fastscore.problems.model import Problem
from fastscore.problems.splits import Layout, Splits, write_npz, write_prepared
from fastscore.scoring.reference import build_reference
from fastscore.settings import Settings
from fastscore.support.collector import paused

__all__ = ["write_splits", "write_task_views"]


def _splits_of(problems: str | Path | Iterable[Problem], settings: Settings) -> Iterator[tuple[Problem, Splits]]:
    """Each problem (of a directory, or given) with the splits scoring draws for it
    (each reference built with the garbage collector paused, ``fastscore.support.collector``)."""
    for problem in law_problems(load_problems(problems) if isinstance(problems, (str, Path)) else problems):
        with paused():
            splits = build_reference(problem, settings=settings).splits
        yield problem, splits


def write_splits(problems: str | Path | Iterable[Problem], out: str | Path, *, settings: Settings) -> int:
    """Write every problem's splits (``settings``: seed and sample count) to
    ``out/<task>.npz`` in MDBench's synthetic-data layout; return how many."""
    count = 0
    for problem, splits in _splits_of(problems, settings):
        write_npz(splits, Path(out) / f"{problem.task_id}.npz",
                  generation_config={"seed": settings.data_seed, "n_samples": settings.n_samples,
                                     "task": problem.task_id, "generator": "fastscore"})
        count += 1
    return count


def write_task_views(problems: str | Path | Iterable[Problem], out: str | Path, *, layout: Layout = "mdbench",
                     save_answer: bool = False, settings: Settings) -> int:
    """Write every problem's public task view to ``out/<task>/`` in ``layout``
    (``fastscore.problems.splits.write_prepared``, or MechBench's ``fastscore.problems.mechbench.write_task_folder``), the
    answers too with ``save_answer``; return how many."""
    if layout not in get_args(Layout):
        raise ValueError(f"unknown layout {layout!r}; expected one of {', '.join(get_args(Layout))}")
    if layout == "mechbench":
        from fastscore.problems.mechbench import write_task_folder as write
    else:
        write = write_prepared
    count = 0
    for problem, splits in _splits_of(problems, settings):
        write(problem, splits, Path(out) / problem.task_id, save_answer=save_answer)
        count += 1
    return count
