"""Numba kernels: postfix tapes, batch evaluation, error bounds, the equivalence
screen, root finding, split metrics.

Kernels know nothing of problems, files or SymEngine: arrays in, arrays out (tapes are
compiled by ``fastscore.tapes.compile``).  Numba caches each compiled kernel on disk
next to its source, so the kernels compile once per machine.

May import: numpy, numba and the standard library only (a test keeps it so).
"""

from .bounds import evaluate_bounded
from .evaluate import evaluate
from .metrics import METRICS, TINY, accuracy, split_metrics
from .screen import Screen, classify, screen, worst
from .tape import Tape, TapeBatch, pack

__all__ = [
    "METRICS",
    "Screen",
    "Tape",
    "TapeBatch",
    "TINY",
    "accuracy",
    "classify",
    "evaluate",
    "evaluate_bounded",
    "pack",
    "screen",
    "split_metrics",
    "worst",
]
