"""Pausing Python's cyclic garbage collector around bulk work.

Scoring allocates many short-lived, acyclic objects (SymEngine wrappers, tuples, row
dicts); every few hundred allocations the collector scans the young objects, and every
so often the whole heap, which in a worker holding many references and a large memo
is mostly wasted work (and, inside a timed solve, a pause charged to its budget).
``paused()`` switches the collector off for a block and restores its previous state;
the few cycles a block creates are collected afterwards (measured:
``bench/results/notes.md``).  The executors pause it around each unit of work
(``fastscore.run.executors.base.score_units``, the feedback service's workers), as do the
bulk commands (validate, data, the library build); the scorer and the solver
themselves leave the collector alone.
"""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused() -> Iterator[None]:
    """Run the block with the garbage collector disabled (re-enabled after if it was on)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
