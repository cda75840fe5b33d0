"""The rows ``score_task`` returns: a score row per submission and a probe row per
(submission, reference probe), in the submissions' order, assembled from the columns
scored once per law key and per answers key (``fastscore.scoring.memo.Batch``).
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from fastscore.kernels import METRICS
from fastscore.scoring.candidates import LARGE_PREFIX, Candidate
from fastscore.scoring.memo import Batch
from fastscore.scoring.reference import Reference
from fastscore.scoring.values import SCORED_SPLITS
from fastscore.sweeps.submission import Submission, probe_row_columns

__all__ = ["law_fields", "result_json", "score_rows"]

_NO_METRICS = {column: value for prefix in SCORED_SPLITS
               for column, value in ((f"{prefix}_acc", False), *((f"{prefix}_{name}", None) for name in METRICS))}
"""The split metric columns of a score row, as when a law has no values."""
_JSON = json.JSONEncoder(sort_keys=True).encode


def score_rows(reference: Reference, submissions: Sequence[Submission], batch: Batch) -> tuple[list[dict], list[dict]]:
    """(score rows, probe rows) of the submissions, once every law key and answers key of
    ``batch`` is scored."""
    score_rows, probe_rows = [], []
    extras: dict[object, dict] = {}
    for submission in submissions:
        in_mechanism, law_fields = batch.laws[submission.law_key]
        probe_results = batch.probe_sets[submission.answers_key]
        identity = {"config": submission.config, "run": submission.run, "task": submission.task}
        columns = submission.probe_columns
        if columns not in extras:
            extras[columns] = probe_row_columns(columns)
        for name, fields in zip(reference.probes, probe_results):
            found = None if in_mechanism is None else in_mechanism[name]
            probe_rows.append({**identity, "probe": name, **fields,
                               "probe_in_mechanism": None if in_mechanism is None else found is not None,
                               "probe_mechanism_quantity": found, **extras[columns].get(name, {})})
        n_correct = sum(fields["probe_equivalent"] for fields in probe_results)
        n_proven = sum(fields["probe_verdict"] == "proven" for fields in probe_results)
        score_rows.append(_score_row(identity, submission, law_fields, len(probe_results), n_correct, n_proven))
    return score_rows, probe_rows


def law_fields(reference: Reference, candidate: Candidate, outcome) -> dict:
    """The columns of a score row that depend only on the submitted law or mechanism
    (built once per distinct submission, shared by its repeats); ``outcome``: its
    ``fastscore.scoring.judge.LawOutcome``."""
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
        "p_counterexample": None if verdict is None else result_json(verdict.counterexample),
        "derived_formula": None if candidate.text is None or candidate.text.startswith(LARGE_PREFIX)
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


def _score_row(identity: dict, submission: Submission, law_fields: Mapping, n_probes: int, n_correct: int,
               n_proven: int) -> dict:
    out = {**identity, **law_fields,
           "m_correct": None if n_probes == 0 else n_correct == n_probes,
           "n_probes": n_probes, "n_probes_correct": n_correct, "n_probes_proven": n_proven}
    for key, value in submission.carried.items():
        if key not in out:
            out[key] = value
    if out["status"] == "timeout" and "submission_sha" in out:
        out["submission_sha"] = None  # a solve past its budget depends on the load: scored again on resume
    return out


def result_json(value) -> str | None:
    """A verdict's counterexample as a JSON text (sorted keys), None for None."""
    return None if value is None else _JSON(value)
