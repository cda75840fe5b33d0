"""The values of a batch: every distinct expression (candidate laws, probe answers)
evaluated once, in one batch through the compiled kernels, at the reference's points
(domain sample + splits), and the split metrics of each law, one kernel call per split.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import symengine as se

from fastscore.algebra.equivalence import Quantity
from fastscore.kernels import METRICS, accuracy, evaluate, split_metrics
from fastscore.scoring.reference import Reference
from fastscore.settings import Settings
from fastscore.tapes.compile import UnsupportedExpression, compile_tape

__all__ = ["SCORED_SPLITS", "evaluate_batch", "law_metrics"]

SCORED_SPLITS = {"id": "id_test", "ood": "ood_test"}


def evaluate_batch(reference: Reference, laws: Iterable[tuple[str, se.Basic]],
                   answers: Iterable[tuple[str, se.Basic]], settings: Settings) -> tuple[dict, dict]:
    """(values, metrics): each expression's text -> its ``Quantity`` at the reference
    points (or why it cannot be evaluated), and each law's or answer's text that has
    values -> its split metrics.  ``laws`` first (the first of a text is kept), then
    ``answers``."""
    expressions: dict[str, se.Basic] = {}
    for text, expr in laws:
        expressions.setdefault(text, expr)
    expressions.update(answers)
    values, matrix = _evaluate(reference, expressions)
    metrics = dict(zip((key for key, value in values.items() if not isinstance(value, str)),
                       law_metrics(reference, matrix, settings)))
    return values, metrics


def _evaluate(reference: Reference, expressions: Mapping[str, se.Basic]) -> tuple[dict[str, Quantity | str],
                                                                                  np.ndarray]:
    """Every distinct expression with its values at the reference points (one kernel
    batch; the reference's own law has them already), and the matrix of those values
    (one row per expression that has values, in the order of the returned dict); an
    expression the kernel cannot compile maps to its error text."""
    values = {}
    law = reference.law
    for key, expr in expressions.items():
        if expr == law.expr:  # the reference's own law (a law-only mechanism): its values are at hand
            values[key] = law
            continue
        try:
            values[key] = compile_tape(expr, reference.domain.names)
        except UnsupportedExpression as error:
            values[key] = f"cannot evaluate: {error}"
    tapes = [tape for tape in values.values() if not isinstance(tape, (str, Quantity))]
    evaluated = iter(evaluate(tapes, reference.domain.points) if tapes else ())
    values = {key: tape if isinstance(tape, (str, Quantity)) else Quantity(expressions[key], next(evaluated), tape)
              for key, tape in values.items()}
    rows = [value.values for value in values.values() if isinstance(value, Quantity)]
    matrix = np.array(rows) if rows else np.zeros((0, reference.domain.points.shape[1]))
    return values, matrix


def law_metrics(reference: Reference, matrix: np.ndarray, settings: Settings) -> list[dict[str, float]]:
    """Split metrics of every row of ``matrix`` (values at the reference points), one
    kernel call per split."""
    out = [{} for _ in range(matrix.shape[0])]
    if not out:
        return out
    for prefix, split in SCORED_SPLITS.items():
        result = split_metrics(matrix[:, reference.segment_slice(split)], reference.target_values(split))
        columns = {f"{prefix}_{name}": result[name].tolist() for name in METRICS}
        columns[f"{prefix}_acc"] = accuracy(result["max_rel_err"], tol=settings.acc_tol).tolist()
        for row, fields in enumerate(out):
            fields.update({name: values[row] for name, values in columns.items()})
    return out
