"""The probe answers of a batch: each distinct set read once (expressions in the
knowns, or through the submitted mechanism's solution), then judged once against the
reference's probes.  ``probes`` answers are ``name = expr`` or a bare ``expr``;
MechBench's ``probe_replies`` must each be exactly one equation ``probe = expr``
(``fastscore.text.answers.reply_equation``).
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping

import numpy as np
import symengine as se

from fastscore.algebra.equivalence import Quantity, Verdict
from fastscore.kernels import evaluate
from fastscore.scoring.candidates import Candidate
from fastscore.scoring.judge import judged
from fastscore.scoring.memo import Batch, ScoreMemo, judged_key, read_key
from fastscore.scoring.reference import Reference
from fastscore.scoring.rows import result_json
from fastscore.settings import Settings
from fastscore.support.caches import memoized
from fastscore.sweeps.submission import ProbeAnswers
from fastscore.tapes.compile import UnsupportedExpression, compile_tape
from fastscore.text.answers import read_expression, reply_equation
from fastscore.text.functions import CONSTANTS
from fastscore.text.parse import symbol
from fastscore.text.tokens import Limits

__all__ = ["answer_expressions", "judge_probe_sets", "read_answers"]


def read_answers(reference: Reference, batch: Batch, candidates: Mapping[tuple, Candidate],
                 settings: Settings) -> dict[tuple, tuple[dict, str | None]]:
    """The answers of every answers key not scored yet: ({probe: expression, (text,
    values) or error text}, row-level error); answers read through one solution (a
    mechanism and its copies in another order share it) are read once (``read_key``)."""
    read: dict[tuple, tuple[dict, str | None]] = {}
    new_answers = {}
    for answers in batch.unscored_answers():
        candidate = candidates.get(answers[2])
        same = read_key(answers, candidate)
        if same not in read:
            read[same] = _parse_answers(reference, batch.by_answers[answers].answers(settings.limits), candidate,
                                        settings.limits)
        new_answers[answers] = read[same]
    return new_answers


def answer_expressions(reference: Reference, answers: Mapping[tuple, tuple[dict, str | None]]
                       ) -> Iterator[tuple[str, se.Basic]]:
    """(text, expression) of every answer to evaluate: not the reference's own expression
    of its probe (its values are at hand)."""
    for parsed, _ in answers.values():
        yield from ((_answer_text(e), e) for name, e in parsed.items()
                    if isinstance(e, se.Basic) and not _is_reference_answer(reference, name, e))


def judge_probe_sets(reference: Reference, batch: Batch, answers: Mapping[tuple, tuple[dict, str | None]],
                     values, settings: Settings, memo: ScoreMemo) -> None:
    """Judge every answers key's answers against the reference probes (once per answers
    read, ``judged_key``) and keep the probe rows' columns in ``batch``."""
    judged_sets: dict[int, list] = {}
    for key, (parsed, error) in answers.items():
        same = judged_key(parsed)
        if same not in judged_sets:
            judged_sets[same] = [_probe_fields(parsed.get(name), _judge_probe(reference, name, parsed.get(name),
                                                                               error, values, settings, memo))
                                 for name in reference.probes]
        batch.keep_probes(key, judged_sets[same])


def _probe_fields(answer, verdict: Verdict) -> dict:
    """The columns of a probe row that depend only on the answer (shared by repeats)."""
    text = answer[0] if isinstance(answer, tuple) else None if answer is None else _answer_text(answer)
    return {"answer": text, "probe_equivalent": verdict.equivalent,
            "probe_verdict": verdict.provenance, "probe_reason": verdict.reason,
            "probe_counterexample": result_json(verdict.counterexample)}


@memoized(1 << 12)
def _answer_text(expr: se.Basic) -> str:
    """The text of a probe answer's expression (its key; memoised: a row's answer is
    written out for its values, its verdict and its row)."""
    return str(expr)


@memoized(1 << 12)
def _answer_expression(text: str, name: str, knowns: tuple[str, ...], limits: Limits) -> se.Basic:
    """A probe answer's expression (memoised: rows repeat their answers, ``p = p`` above
    all; a text that does not parse raises each time)."""
    return read_expression(text, target=name, names=knowns, allow_new_names=True, limits=limits)


def _parse_answers(reference: Reference, answers: ProbeAnswers, candidate: Candidate | None,
                   limits: Limits) -> tuple[dict, str | None]:
    """Probe answers of a submission: {probe: expression, (text, values) or error text},
    and a row-level error.  ``answers.written`` are answers as expressions (``name =
    expr`` or a bare ``expr``); ``answers.replies`` are MechBench's probe replies (exactly
    one equation ``probe = expr``).  Either may use the quantities of the submitted
    mechanism (``candidate``), expanded through its solution."""
    solution = None if candidate is None or candidate.status != "ok" else candidate.solution
    parsed: dict = {}
    error = answers.error
    for name, answer in answers.written.items():
        parsed[name] = _answer(reference, name, answer, solution, limits, strict=False)
    for name, reason in answers.unusable.items():
        parsed[name] = f"parse error: {reason}"
    if answers.replies_error is not None:
        return parsed, error or answers.replies_error
    if answers.replies is not None:
        for name, reply in answers.replies.items():
            if name in reference.probes and name not in parsed:
                parsed[name] = ("no reply (reply.txt missing or unreadable)" if not isinstance(reply, str)
                                else _answer(reference, name, reply, solution, limits, strict=True))
    return parsed, error


def _answer(reference: Reference, name: str, text: str, solution, limits: Limits, *, strict: bool):
    """One probe answer: an expression in the knowns, (text, ``Quantity`` of values) when
    it uses quantities the submission solved only numerically, or the reason it is unusable."""
    try:
        if strict:
            text = reply_equation(text, name, limits=limits)
        # a constant's name that the submitted mechanism defines means its quantity here too
        defined = () if solution is None else \
            tuple(n for n in CONSTANTS if n in solution.expressions or n in solution.numeric)
        expr = _answer_expression(text, name, (*reference.knowns, *defined), limits)
    except ValueError as failure:
        return f"parse error: {failure}"
    expr = expr.subs(reference.constants)
    known = set(reference.knowns)
    used = {s.name for s in expr.free_symbols} - known
    if not used:
        return expr
    closed = {} if solution is None else solution.expressions
    numeric = () if solution is None else solution.numeric
    left = sorted(n for n in used if n not in closed and n not in numeric)
    if left:
        what = "neither inputs nor quantities of the submitted mechanism" if solution is not None else \
            "not inputs (a phenomenal submission's answers use the inputs only)"
        return f"names left after expansion: {', '.join(left)} ({what})"
    expr = expr.xreplace({symbol(n): closed[n] for n in used if n in closed})
    rest = sorted(s.name for s in expr.free_symbols if s.name not in known)
    if not rest:
        return expr
    points = reference.points
    env = {**points, **solution.values(rest, points)}
    names = (*reference.domain.names, *rest)
    try:
        tape = compile_tape(expr, names)
    except UnsupportedExpression as failure:
        return f"cannot evaluate: {failure}"
    return str(expr), Quantity(None, evaluate(tape, np.vstack([env[n] for n in names])))


def _judge_probe(reference, name, answer, answers_error, values, settings, memo) -> Verdict:
    if answers_error is not None and answer is None:
        return Verdict("undecided", f"probe answers unreadable: {answers_error}")
    if answer is None:
        return Verdict("undecided", "no answer")
    if isinstance(answer, str):
        return Verdict("undecided", answer)
    if isinstance(answer, tuple):  # values of the submission's numeric quantities: not memoised by text
        text, predicted = None, answer[1]
    else:
        text = _answer_text(answer)
        predicted = reference.probes[name] if _is_reference_answer(reference, name, answer) else values[text]
        if isinstance(predicted, str):
            return Verdict("undecided", predicted)
    return judged(memo, reference, name, text, predicted, settings)


def _is_reference_answer(reference: Reference, name: str, answer: se.Basic) -> bool:
    """The answer is the reference's own expression of the probe: its values are the
    reference's (not evaluated again), and it is judged identical."""
    expected = reference.probes.get(name)
    return expected is not None and expected.expr is not None and answer == expected.expr
