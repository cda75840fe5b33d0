"""Score one problem's batch of submissions: a pure function of (reference, rows,
settings) that every executor calls, so every executor gives identical tables.

Per row: parse the phenomenal formula, or solve the mechanism for its derived law
(``fastscore.solve.mechanism``); evaluate every distinct candidate once, in one batch through
the compiled kernels, at the reference's points (domain sample + splits), and compute
its split metrics; judge equivalence (``fastscore.algebra.equivalence``); then the registered
submission scorers (``fastscore.scoring.scorers``: the structure scores) add their columns;
judge the probe answers.  Identical submissions (same text, or same canonical expression)
are scored once.  A bad submission becomes a row with its ``status`` and ``error``.
"""
from __future__ import annotations

import json
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable, Mapping, Sequence

import numpy as np
import symengine as se

from fastscore.algebra.agreement import agree
from fastscore.text.answers import defined_constants, parse_probe_answers, read_expression, reply_equation, split_equations
from fastscore.support.caches import memoized
from fastscore.algebra.sizes import count_nodes
from fastscore.tapes.compile import UnsupportedExpression, compile_tape
from fastscore.solve.copies import Copies, renamed
from fastscore.algebra.equivalence import Quantity, Verdict, judge
from fastscore.text.functions import CONSTANTS
from fastscore.kernels import METRICS, accuracy, evaluate, split_metrics
from fastscore.text.parse import parse_equation, symbol
from fastscore.scoring.reference import Reference
from fastscore.scoring.scorers import SubmissionContext, submission_scorers
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.sweeps.read import SUBMISSION_COLUMNS as SUBMISSION_TEXT
from fastscore.solve.mechanism import SolveError, SolveTimeout, solve_mechanism
from fastscore.scoring.structure import recovered_quantities  # also registers the structure scorer
from fastscore.outputs.tables import Status, SubmissionKind
from fastscore.text.tokens import Limits, ParseError

SCORED_SPLITS = {"id": "id_test", "ood": "ood_test"}
_NO_METRICS = {column: value for prefix in SCORED_SPLITS
               for column, value in ((f"{prefix}_acc", False), *((f"{prefix}_{name}", None) for name in METRICS))}
"""The split metric columns of a score row, as when a law has no values."""
_JSON = json.JSONEncoder(sort_keys=True).encode


@dataclass
class _Candidate:
    """A parsed (and, for mechanisms, solved) submission, before evaluation."""

    kind: SubmissionKind | None = None
    expr: se.Basic | None = None
    text: str | None = None  # str(expr), computed once: the key of its values and verdict
    error: str | None = None
    status: Status = "ok"
    equations: tuple = ()  # a mechanism's, parsed; empty for a copy written alike (``renamed_from``)
    solution: object = None
    seconds: float = 0.0
    nodes: tuple[int, ...] = field(default_factory=tuple)
    copy_of: tuple[tuple, Mapping[str, str]] | None = None  # (law key, renaming) of the mechanism it copies
    renamed_from: tuple | None = None  # a copy written alike: the original's equations, renamed when needed

    def mechanism_equations(self) -> tuple:
        """The parsed equations of a mechanism (a copy written alike: the original's, renamed)."""
        if self.renamed_from is not None:
            self.equations, self.renamed_from = tuple(renamed(self.renamed_from, self.copy_of[1])), None
        return self.equations


class ScoreMemo:
    """What a worker has already scored for each task: the row columns of each
    submission text (and verdicts by canonical formula, by derived law and by probe
    expression), probe results by answer text; never the parsed expressions or
    solutions, so it stays small.  Bounded: the least recently used entries are
    dropped.  It holds only pure results of (reference, text, settings), so rows come
    out the same with or without it; one memo serves one ``Settings``."""

    def __init__(self, max_items: int = 200_000):
        self._items: OrderedDict = OrderedDict()
        self.max_items = max_items

    def get(self, key):
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key, value) -> None:
        self._items[key] = value
        if len(self._items) > self.max_items:
            self._items.popitem(last=False)


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
    task = reference.problem.task_id
    laws, probe_sets = {}, {}
    for row in rows:
        law = _law_key(row)
        laws.setdefault(law, memo.get(("law", task, law)))
        answers = _answers_key(row, law)
        probe_sets.setdefault(answers, memo.get(("probes", task, answers)))
    # a probe answer may use the submitted mechanism's quantities: its candidate is needed too.
    # In the rows' order (not a set's, whose order changes from process to process): the
    # first of the candidates that derive one law text gives its values, the same bits in every run
    wanted = dict.fromkeys(key for key, done in laws.items() if done is None)
    wanted.update(dict.fromkeys(answers[2] for answers, done in probe_sets.items()
                                if done is None and answers[2] is not None))
    copies = Copies((*reference.knowns, reference.problem.target.name))  # a mechanism's copies: solved once
    copies.blocks.update(reference.own_blocks(settings))  # and the reference mechanism's blocks
    if progress is None:
        candidates = {key: _build_candidate(reference, key, settings=settings, copies=copies) for key in wanted}
    else:
        indices: dict[tuple, list[int]] = {}
        for i, row in enumerate(rows):
            indices.setdefault(_law_key(row), []).append(i)
        candidates = {}
        for key in wanted:
            progress(indices.get(key, []))
            candidates[key] = _build_candidate(reference, key, settings=settings, copies=copies)
        progress(None)
    # answers read through one solution (a mechanism and its copies in another order share it) are read once
    read: dict[tuple, tuple[dict, str | None]] = {}
    new_answers = {}
    for answers, done in probe_sets.items():
        if done is None:
            candidate = candidates.get(answers[2])
            solved = candidate is not None and candidate.status == "ok" and candidate.solution is not None
            same = (*answers[:2], id(candidate.solution) if solved else None)
            if same not in read:
                read[same] = _parse_answers(reference, *answers[:2], candidate, settings.limits)
            new_answers[answers] = read[same]

    expressions = {}
    for key, c in candidates.items():
        if c.expr is not None and laws[key] is None:
            expressions.setdefault(c.text, c.expr)
    for parsed, _ in new_answers.values():
        expressions.update((_answer_text(e), e) for name, e in parsed.items()
                           if isinstance(e, se.Basic) and not _is_reference_answer(reference, name, e))
    values, matrix = _evaluate(reference, expressions)
    metrics = dict(zip((key for key, value in values.items() if not isinstance(value, str)),
                       _law_metrics(reference, matrix, settings)))
    shared_outcomes, outcomes, scored = {}, {}, {}  # outcomes and columns by law key, for its copies
    known: dict = {}  # closed forms against the reference quantities (`recovered_quantities`)
    scorers = submission_scorers()
    for key, candidate in candidates.items():
        if laws[key] is not None:
            continue
        # phenomenal formulas that canonicalise alike share one verdict
        shared = ("formula", task, candidate.text) if candidate.kind == "phenomenal" else None
        outcome = None if shared is None else shared_outcomes.get(shared) or memo.get(shared)
        if outcome is None:
            original = None if candidate.copy_of is None else outcomes.get(candidate.copy_of[0])
            outcome = _judge_law(reference, candidate, values, metrics, settings, memo,
                                 None if original is None else (original, candidate.copy_of[1]), known)
            outcomes[key] = outcome
            if shared is not None:
                shared_outcomes[shared] = outcome
                memo.put(shared, outcome)
        fields = _law_fields(reference, candidate, outcome)
        if scorers:
            context = None  # built for the first scorer that runs (a copy's equations are renamed then)
            original = None if candidate.copy_of is None else scored.get(candidate.copy_of[0])
            for scorer in scorers:
                if original is not None and scorer.same_for_copies:
                    fields.update((name, original[name]) for name in scorer.columns)
                    continue
                if context is None:
                    context = SubmissionContext(reference, settings, *key, candidate.kind, MappingProxyType(fields),
                                                candidate.expr, candidate.mechanism_equations(), candidate.solution,
                                                outcome.verdict, outcome.recovered)
                added = scorer.score(context)  # its declared columns only, a missing one null
                fields.update(added if added.keys() == scorer.columns.keys() else
                              {name: added.get(name) for name in scorer.columns})
            scored[key] = fields
        laws[key] = (outcome.in_mechanism, fields)
        if candidate.status != "timeout":  # a timeout depends on the machine's load: retried next time
            memo.put(("law", task, key), laws[key])
    judged: dict[int, list] = {}  # by the answers read (shared as above)
    for answers, (parsed, error) in new_answers.items():
        if id(parsed) not in judged:
            judged[id(parsed)] = [_probe_fields(parsed.get(name), _judge_probe(reference, name, parsed.get(name),
                                                                                error, values, settings, memo))
                                  for name in reference.probes]
        probe_sets[answers] = judged[id(parsed)]
        memo.put(("probes", task, answers), probe_sets[answers])

    score_rows, probe_rows = [], []
    extras: dict[str | None, dict] = {}
    for row in rows:
        law = _law_key(row)
        in_mechanism, law_fields = laws[law]
        probe_results = probe_sets[_answers_key(row, law)]
        identity = _identity(row)
        columns = row.get("probe_columns")
        if columns not in extras:
            extras[columns] = _probe_columns(columns)
        for name, fields in zip(reference.probes, probe_results):
            found = None if in_mechanism is None else in_mechanism[name]
            probe_rows.append({**identity, "probe": name, **fields,
                               "probe_in_mechanism": None if in_mechanism is None else found is not None,
                               "probe_mechanism_quantity": found, **extras[columns].get(name, {})})
        n_correct = sum(fields["probe_equivalent"] for fields in probe_results)
        n_proven = sum(fields["probe_verdict"] == "proven" for fields in probe_results)
        score_rows.append(_score_row(row, law_fields, len(probe_results), n_correct, n_proven))
    return score_rows, probe_rows


def _law_key(row: Mapping) -> tuple:
    """What the law of a row depends on: its phenomenal and mechanism texts."""
    return _text(row.get("phenomenal")), _text(row.get("mechanism"))


def _answers_key(row: Mapping, law: tuple) -> tuple:
    """What a row's probe results depend on: its answer texts and, for a mechanism (whose
    quantities the answers may use), its law key."""
    return _text(row.get("probes")), _text(row.get("probe_replies")), law if law[1] is not None else None


def _probe_columns(text: str | None) -> dict[str, dict]:
    """``probe_columns`` (JSON {probe: {column: value}}): extra columns of the probe rows."""
    if not text:
        return {}
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return {str(k): dict(v) for k, v in value.items() if isinstance(v, Mapping)} if isinstance(value, Mapping) else {}


def _probe_fields(answer, verdict: Verdict) -> dict:
    """The columns of a probe row that depend only on the answer (shared by repeats)."""
    text = answer[0] if isinstance(answer, tuple) else None if answer is None else _answer_text(answer)
    return {"answer": text, "probe_equivalent": verdict.equivalent,
            "probe_verdict": verdict.provenance, "probe_reason": verdict.reason,
            "probe_counterexample": _json(verdict.counterexample)}


def _text(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return _JSON(dict(value))
    text = str(value).strip()
    return text or None


def _build_candidate(reference: Reference, key: tuple, *, settings: Settings, copies: Copies) -> _Candidate:
    """The candidate of a law key (`_law_key`); ``copies``: the mechanisms solved so far."""
    started = time.perf_counter()
    problem = reference.problem
    phenomenal, mechanism = key
    try:
        if mechanism is not None:
            candidate = _solve(reference, key, settings, copies)
        elif phenomenal is not None:
            expr = read_expression(phenomenal, target=problem.target.name, names=reference.knowns,
                                   limits=settings.limits)
            if reference.constants:
                expr = expr.subs(reference.constants)
            candidate = _Candidate(kind="phenomenal", expr=expr, nodes=(count_nodes(expr),))
        else:
            candidate = _Candidate(status="parse_error", error="empty submission: no phenomenal formula or mechanism")
    except ParseError as error:
        candidate = _Candidate(status="parse_error", error=str(error))
    except SolveTimeout as error:
        candidate = _Candidate(kind="mechanism", status="timeout", error=str(error))
    except SolveError as error:
        candidate = _Candidate(kind="mechanism", status="solve_error", error=str(error))
    except ValueError as error:
        candidate = _Candidate(status="parse_error", error=str(error))
    candidate.seconds = time.perf_counter() - started
    if candidate.expr is not None:
        candidate.text = _key_text(candidate.expr, settings.max_text_nodes)
    return candidate


@memoized(1 << 10)
def _key_text(expr: se.Basic, max_nodes: int) -> str:
    """The text of a candidate law (its key, and its ``derived_formula``; memoised: copies
    of a mechanism share their law).  A law over
    ``max_nodes`` tree nodes (``Settings.max_text_nodes``) is not written out: a chain of
    20 substitutions shares one subexpression a million times, and its text would be
    tens of megabytes (``derived_formula`` is then null; the law is still judged)."""
    if count_nodes(expr) > max_nodes:
        return f"{_LARGE_PREFIX}{hash(expr):x}>"
    return str(expr)


_LARGE_PREFIX = "<a law too large to write out: "


def _solve(reference: Reference, key: tuple, settings: Settings, copies: Copies) -> _Candidate:
    """Parse and solve the mechanism of a law key; a copy of one solved before (the same
    equations up to order, sides and internal names: ``fastscore.solve.copies``) takes its
    solution, renamed."""
    problem = reference.problem
    mechanism = key[1]
    limits = settings.limits
    texts = split_equations(mechanism, limits=limits)
    names = (*reference.knowns, problem.target.name, *defined_constants(texts))
    written = copies.written(texts, limits)  # the same texts, names aside: not parsed again
    if written is not None:
        (original, solution), mapping, equations, nodes = written
        return _Candidate(kind="mechanism", expr=solution.law, renamed_from=tuple(equations),
                          solution=solution.renamed(mapping), nodes=nodes, copy_of=(original, mapping))
    equations = [_equation(text, names, limits) for text in texts]
    if reference.constants:
        equations = [(lhs.subs(reference.constants), rhs.subs(reference.constants)) for lhs, rhs in equations]
    nodes = tuple(count_nodes(lhs) + count_nodes(rhs) for lhs, rhs in equations)
    found = copies.find(equations, nodes)
    if found is not None:
        (original, solution), mapping = found
        solution = solution.renamed(mapping)
    else:
        solution = solve_mechanism(equations, knowns=reference.knowns, target=problem.target.name,
                                   points=reference.points, budget=settings.solve_budget, rtol=settings.rtol,
                                   solved_blocks=copies.blocks, limits=settings.limits)
        copies.add(equations, (key, solution), texts, nodes)
    return _Candidate(kind="mechanism", expr=solution.law, equations=tuple(equations), solution=solution,
                      nodes=nodes, copy_of=None if found is None else (original, mapping))


@memoized(1 << 10)
def _equation(text: str, names: tuple[str, ...], limits: Limits) -> tuple[se.Basic, se.Basic]:
    """One equation of a submitted mechanism (memoised: a task's submissions share most
    of their equations; a text that does not parse raises each time)."""
    return parse_equation(text, names=names, allow_new_names=True, limits=limits)


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


def _parse_answers(reference: Reference, probes: str | None, replies: str | None,
                   candidate: _Candidate | None, limits: Limits) -> tuple[dict, str | None]:
    """Probe answers of a row: {probe: expression, (text, values) or error text},
    and a row-level error.  ``probes`` are answers as expressions (``name = expr`` or a
    bare ``expr``); ``replies`` are MechBench's probe replies (exactly one equation
    ``probe = expr``).  Either may use the quantities of the submitted mechanism
    (``candidate``), expanded through its solution."""
    solution = None if candidate is None or candidate.status != "ok" else candidate.solution
    parsed: dict = {}
    error = None
    if probes is not None:
        unusable: dict[str, str] = {}
        try:
            raw = parse_probe_answers(probes, limits=limits, errors=unusable)
        except ParseError as failure:
            raw, unusable, error = {}, {}, str(failure)
        for name, answer in raw.items():
            parsed[name] = _answer(reference, name, answer, solution, limits, strict=False)
        for name, reason in unusable.items():
            parsed[name] = f"parse error: {reason}"
    if replies is not None:
        try:
            raw = json.loads(replies)
        except (json.JSONDecodeError, RecursionError):
            raw = None
        if not isinstance(raw, Mapping):
            return parsed, error or "probe replies are not a JSON object {probe: reply}"
        for name, reply in raw.items():
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


@dataclass(frozen=True)
class _LawOutcome:
    verdict: Verdict | None = None
    metrics: Mapping[str, float] = field(default_factory=dict)
    error: str | None = None
    in_mechanism: Mapping[str, str | None] | None = None  # probe -> equal internal quantity
    recovered: Mapping[str, tuple[str, ...]] | None = None  # reference quantity -> equal submitted ones


def _law_metrics(reference: Reference, matrix: np.ndarray, settings: Settings) -> list[dict[str, float]]:
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


def _judge_law(reference: Reference, candidate: _Candidate, values, metrics, settings: Settings,
               memo: ScoreMemo, original: tuple[_LawOutcome, Mapping[str, str]] | None = None,
               known: dict | None = None) -> _LawOutcome:
    """The law's verdict and metrics, and the reference quantities its mechanism recovers;
    ``original``: the outcome of the mechanism this one copies, and the renaming (its
    quantities are that one's, renamed); ``known``: the batch's closed forms judged against
    the reference quantities so far (`recovered_quantities`)."""
    if candidate.status != "ok":
        return _LawOutcome()
    if candidate.text is not None:
        predicted = values[candidate.text]
        if isinstance(predicted, str):
            return _LawOutcome(error=predicted)
        law_metrics = metrics[candidate.text]
    else:  # a mechanism solved numerically: values only
        target = reference.problem.target.name
        predicted = Quantity(None, candidate.solution.values([target], reference.points)[target])
        law_metrics = _law_metrics(reference, predicted.values[None, :], settings)[0]
    # renamed or reordered mechanisms derive the same law, judged once (a phenomenal
    # formula's whole outcome is shared already)
    verdict = _judged(memo, reference, None, candidate.text if candidate.kind == "mechanism" else None,
                      predicted, settings)
    if candidate.solution is None:
        return _LawOutcome(verdict=verdict, metrics=law_metrics)
    if original is not None and original[0].recovered is not None:
        outcome, mapping = original
        recovered = {name: tuple(mapping.get(n, n) for n in found) for name, found in outcome.recovered.items()}
        in_mechanism = {probe: None if found is None else mapping.get(found, found)
                        for probe, found in outcome.in_mechanism.items()}
    else:
        recovered = recovered_quantities(reference, candidate.solution, settings, known=known)
        in_mechanism = _probes_in_mechanism(reference, candidate.solution, recovered, settings)
    return _LawOutcome(verdict=verdict, metrics=law_metrics, recovered=recovered, in_mechanism=in_mechanism)


def _probes_in_mechanism(reference: Reference, solution, recovered: Mapping[str, tuple[str, ...]],
                         settings: Settings) -> dict[str, str | None]:
    """For each reference probe, the internal quantity of a submitted mechanism that is
    equivalent to it (whatever the submitter named it), or None: from the reference
    quantities the submission recovers (``recovered``), else sought among its quantities."""
    found = {}
    target = reference.problem.target.name
    internal = values = None
    for probe, expected in reference.probes.items():
        if probe in recovered:
            found[probe] = recovered[probe][0] if recovered[probe] else None
            continue
        if internal is None:
            internal = [n for n in (*solution.expressions, *solution.numeric) if n != target]
            values = solution.values(internal, reference.points) if internal else {}
        found[probe] = next((name for name in internal if _likely_equal(values[name], expected.values, settings)
                             and judge(Quantity(solution.expressions.get(name), values[name]), expected,
                                       domain=reference.domain, settings=settings, prove=False).equivalent), None)
    return found


def _likely_equal(a: np.ndarray, b: np.ndarray, settings: Settings) -> bool:
    """A float64 pre-screen of a diagnostic pair: finite on the same points and agreeing
    within ``rtol`` at most of them (the full judgement re-checks the rest exactly)."""
    finite = np.isfinite(a)
    if not np.array_equal(finite, np.isfinite(b)) or not finite.any():
        return False
    return bool(agree(a[finite], b[finite], rtol=settings.rtol).mean() >= 0.5)


def _judged(memo: ScoreMemo, reference: Reference, probe: str | None, text: str | None, predicted: Quantity,
            settings: Settings) -> Verdict:
    """The verdict of ``predicted`` against the law (``probe`` None) or a probe; memoised
    by ``text``, the expression it holds the values of (a verdict depends on nothing
    else), unless that is None."""
    key = None if text is None else ("verdict", reference.problem.task_id, probe, text)
    verdict = None if key is None else memo.get(key)
    if verdict is None:
        expected = reference.law if probe is None else reference.probes[probe]
        verdict = judge(predicted, expected, domain=reference.domain, settings=settings)
        if key is not None:
            memo.put(key, verdict)
    return verdict


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
    return _judged(memo, reference, name, text, predicted, settings)


def _is_reference_answer(reference: Reference, name: str, answer: se.Basic) -> bool:
    """The answer is the reference's own expression of the probe: its values are the
    reference's (not evaluated again), and it is judged identical."""
    expected = reference.probes.get(name)
    return expected is not None and expected.expr is not None and answer == expected.expr


def _identity(row: Mapping) -> dict:
    return {"config": row["config"], "run": row["run"], "task": row["task"]}


def _law_fields(reference: Reference, candidate: _Candidate, outcome: _LawOutcome) -> dict:
    """The columns of a score row that depend only on the submitted law or mechanism
    (built once per distinct submission, shared by its repeats)."""
    problem = reference.problem
    status, error = candidate.status, candidate.error
    if status == "ok" and outcome.error is not None:
        status, error = "eval_error", outcome.error
    verdict = outcome.verdict
    nodes = candidate.nodes
    fields = {
        "family": problem.family, "domain": problem.domain, "n_mutations": problem.n_mutations,
        "status": status, "error": error, "kind": candidate.kind,
        "p_equivalent": bool(verdict is not None and verdict.equivalent),
        "p_verdict": None if verdict is None else verdict.provenance,
        "p_reason": None if verdict is None else verdict.reason,
        "p_counterexample": None if verdict is None else _json(verdict.counterexample),
        "derived_formula": None if candidate.text is None or candidate.text.startswith(_LARGE_PREFIX)
        else candidate.text,
        "n_probes_in_mechanism": None if outcome.in_mechanism is None else
        sum(v is not None for v in outcome.in_mechanism.values()),
        "complexity_mean": sum(nodes) / len(nodes) if nodes else None,
        "complexity_max": max(nodes) if nodes else None,
        "complexity_total": sum(nodes) if nodes else None,
        "parse_solve_seconds": candidate.seconds,
        "n_branches": None if candidate.solution is None else max(candidate.solution.branches.values(), default=1),
        "task_warnings": "; ".join(f"{check}: {message}" for check, message in reference.warnings) or None,
    }
    fields.update(_NO_METRICS)
    fields.update(outcome.metrics)
    return fields


def _score_row(row: Mapping, law_fields: Mapping, n_probes: int, n_correct: int, n_proven: int) -> dict:
    out = {**_identity(row), **law_fields,
           "m_correct": None if n_probes == 0 else n_correct == n_probes,
           "n_probes": n_probes, "n_probes_correct": n_correct, "n_probes_proven": n_proven}
    for key, value in row.items():
        if key not in SUBMISSION_TEXT and key not in out:
            out[key] = value
    if out["status"] == "timeout" and "submission_sha" in out:
        out["submission_sha"] = None  # a solve past its budget depends on the load: scored again on resume
    return out


def _json(value) -> str | None:
    return None if value is None else _JSON(value)
