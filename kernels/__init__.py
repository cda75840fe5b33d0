"""Numba kernels: postfix tapes, batch evaluation, error bounds, the equivalence
screen, root finding, split metrics.

Installed as ``fastscore.kernels`` (see README).  Kernels know nothing of problems
or files: arrays in, arrays out."""

from .bounds import evaluate_bounded
from .evaluate import evaluate
from .metrics import METRICS, accuracy, split_metrics
from .screen import Screen, classify, screen, worst
from .tape import Tape, TapeBatch, UnsupportedExpression, compile_tape, pack

__all__ = [
    "METRICS",
    "Screen",
    "Tape",
    "TapeBatch",
    "UnsupportedExpression",
    "accuracy",
    "classify",
    "compile_tape",
    "evaluate",
    "evaluate_bounded",
    "pack",
    "screen",
    "split_metrics",
    "worst",
]
