"""Score one problem's batch of submissions: a pure function of (reference, rows,
settings) that every executor calls, so every executor gives identical tables.

``score_task`` reads each row once as a ``Submission`` (``fastscore.sweeps.submission``)
and then goes step by step, one module each:

1. group the submissions by what their results depend on, taking what the worker's
   memo already holds (``fastscore.scoring.memo``: every de-duplication key);
2. the candidates: each distinct phenomenal formula parsed, or mechanism solved for
   its derived law (``fastscore.scoring.candidates``);
3. the probe answers read, through the submitted mechanism's solution when they use
   its quantities (``fastscore.scoring.probes``);
4. every distinct law and answer evaluated once, in one batch through the compiled
   kernels, at the reference's points, and the laws' split metrics
   (``fastscore.scoring.values``);
5. the laws judged (``fastscore.scoring.judge``; equivalence by
   ``fastscore.algebra.equivalence``);
6. the submission scorers add their columns (``fastscore.scoring.scorers``: the
   structure scores);
7. the probe answers judged (``fastscore.scoring.probes``);
8. a score row per submission and a probe row per reference probe
   (``fastscore.scoring.rows``).

Identical submissions (same text, or same canonical expression) are scored once.  A
bad submission becomes a row with its ``status`` and ``error``.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from fastscore.scoring.candidates import build_candidates, law_expressions
from fastscore.scoring.judge import judge_laws
from fastscore.scoring.memo import Batch, ScoreMemo
from fastscore.scoring.probes import answer_expressions, judge_probe_sets, read_answers
from fastscore.scoring.reference import Reference
from fastscore.scoring.rows import score_rows
from fastscore.scoring.scorers import add_scorer_columns
from fastscore.scoring.values import evaluate_batch
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.sweeps.submission import Submission

__all__ = ["ScoreMemo", "score_task"]


def score_task(reference: Reference, rows: Sequence[Mapping], *, settings: Settings = DEFAULT_SETTINGS,
               memo: ScoreMemo | None = None,
               progress: Callable[[list[int] | None], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Score submissions to one problem: returns (score rows, probe rows).  ``memo``
    carries results across calls (identical submissions are scored once).  The caller
    decides about the garbage collector (the executors pause it, ``fastscore.support.collector``).
    ``progress(indices)`` is called before each submission's mechanism or law is solved,
    with the indices of the rows that share it, and with None once all are solved (an
    executor bounds each by its own time)."""
    memo = ScoreMemo(settings.memo_size) if memo is None else memo
    submissions = [Submission.from_row(row) for row in rows]
    batch = Batch(reference.problem.task_id, submissions, memo)
    candidates = build_candidates(reference, batch, settings, progress)
    answers = read_answers(reference, batch, candidates, settings)
    values, metrics = evaluate_batch(reference, law_expressions(batch, candidates),
                                     answer_expressions(reference, answers), settings)
    judged = judge_laws(reference, batch, candidates, values, metrics, settings, memo)
    add_scorer_columns(reference, settings, judged)
    batch.keep_laws(judged)
    judge_probe_sets(reference, batch, answers, values, settings, memo)
    return score_rows(reference, submissions, batch)
