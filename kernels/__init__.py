"""Numba kernels: postfix tapes, batch evaluation, root finding, split metrics.

Installed as ``fastscore.kernels`` (see README).  Kernels know nothing of problems
or files: arrays in, arrays out."""

from .evaluate import evaluate
from .metrics import METRICS, accuracy, split_metrics
from .tape import Tape, TapeBatch, UnsupportedExpression, compile_tape, pack
from .warm import warm_up

__all__ = [
    "METRICS",
    "Tape",
    "TapeBatch",
    "UnsupportedExpression",
    "accuracy",
    "compile_tape",
    "evaluate",
    "pack",
    "split_metrics",
    "warm_up",
]
