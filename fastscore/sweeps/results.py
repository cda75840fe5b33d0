"""MechBench's published results layer as a sweep (``docs/results-layer.md``).

The harness's repository publishes its experiments as
``results/<experiment>/<domain>/<family>/<task_name>.json``: one JSON record per
attempt (the harness's ``performance.json`` plus ``submission``, the frozen mechanism
text), and ``results/<experiment>/setup.json``.  ``read_results(DIR)`` turns such a tree
(one experiment folder, or a folder of them; ``_summaries`` is skipped) into sweep rows:

- ``config`` / ``run`` from the experiment folder's name, by the rules of MechBench run
  folders (``fastscore.sweeps.mechbench_runs.ExperimentNames``: ``--exp-pattern``, ``--exp-map``, or the
  default that reads a trailing ``-r1`` / ``_run1`` as the run);
- ``task`` = ``evaluation.task_name``, else the file's stem; ``mechanism`` = ``submission``
  without comments; ``probe_replies`` = {probe: ``reply``} of
  ``evaluation.mechanism_probes``, scored by the harness's probe-reply rule;
- the harness's record: ``harness_*`` columns (``HARNESS_COLUMNS`` of the run-folder
  reader, the symbolic verdict per split, the record's ``error_type``, the post-hoc
  recovery flag, the task file's sha256) and, per probe (``probe_columns``), its
  ``ok``, reply, expanded expression and verdicts; timings, tokens and cost;
- ``harness_p_num`` / ``harness_m_num``: the published counting policy applied to the
  record's booleans (``decide``): true, false, or null when the record cannot say.

Only ``submission`` and ``evaluation`` matter; every other key is optional.  A file
that is not read (not a regular file, a symbolic link, over ``MAX_RECORD_BYTES``, not
UTF-8, not JSON, not an object) gives its row the reason in ``read_error`` (and
``record_error``), never a traceback.  ``triage`` says what ``fastscore.run.job`` does with
a row it cannot score: a task outside the problem set (``no_task``) or a record without
a submission (``missing``).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import polars as pl

from fastscore.sweeps.mechbench_runs import (
    HARNESS_COLUMNS,
    HARNESS_PROBE_COLUMNS,
    ExperimentNames,
    _entries,
    _flag,
    _folders,
    _read,
    _seconds,
    harness_verdicts,
    submission_text,
)
from fastscore.sweeps.read import TREE, SweepReader, register_sweep_reader
from fastscore.sweeps.rows import READ_ERROR, ROW_SCHEMA, SUBMISSION_COLUMNS, batched_frames

__all__ = ["RECORD_COLUMNS", "PROBE_RECORD_COLUMNS", "decide", "is_results_tree", "read_results", "record_row",
           "task_file_digests", "triage", "no_task_row", "n_mutations_of"]

SETUP = "setup.json"
SUMMARIES = "_summaries"
MAX_RECORD_BYTES = 16 << 20  # published records reach about 1.3 MB
NO_TASK = "no_task"
_SHA = re.compile(r"[0-9a-f]{64}")
_SPLITS = {"id_test": "id", "ood_test": "ood"}
RECORD_COLUMNS = {  # the columns a record adds to the harness columns of the run-folder reader
    "harness_id_symbolic": pl.Boolean, "harness_ood_symbolic": pl.Boolean, "harness_error_type": pl.String,
    "harness_posthoc": pl.Boolean, "harness_task_sha256": pl.String, "harness_p_num": pl.Boolean,
    "harness_m_num": pl.Boolean, "harness_policy": pl.String, "harness_n_probes_planned": pl.Int64,
    "agent_seconds": pl.Float64, "evaluation_seconds": pl.Float64, "tokens_input": pl.Int64,
    "tokens_output": pl.Int64, "tokens_total": pl.Int64, "cost_usd": pl.Float64,
    "result_file": pl.String, "results_domain": pl.String, "record_error": pl.String,
}
PROBE_RECORD_COLUMNS = (*HARNESS_PROBE_COLUMNS, "harness_probe_reply", "harness_probe_expression",
                        "harness_probe_id_numeric", "harness_probe_ood_numeric", "harness_probe_id_symbolic",
                        "harness_probe_ood_symbolic", "harness_probe_num")
MAX_TEXT = 20_000  # a reply or an expanded expression kept in the probes table, at most
_VALIDATION_MESSAGES = ("empty submission", "expression is too complex", "formula must be a nonempty string")
_NO_SUBMISSION_MESSAGES = ("no nonempty current submission", "no submission")


# --- the tree ------------------------------------------------------------------------------

def _attempt_files(experiment: str) -> Iterator[tuple[str, os.DirEntry]]:
    """(domain, file entry) of every ``<domain>/<family>/<name>.json`` below an experiment
    folder (folders are never entered through a symbolic link; files are listed as
    they are, links included, so a link gives a row that says so)."""
    for domain in _folders(experiment):
        for family in _folders(domain.path):
            for entry in _entries(family.path):
                if entry.name.lower().endswith(".json") and entry.name != SETUP \
                        and not entry.is_dir(follow_symlinks=False):
                    yield domain.name, entry


def _experiments(root: str) -> list[tuple[str, str]]:
    """(name, path) of the experiment folders of a results tree: the root itself when it
    holds ``setup.json`` or attempt files, else its sub-folders but ``_summaries``."""
    children = [c for c in _folders(root) if c.name != SUMMARIES]
    if os.path.isfile(os.path.join(root, SETUP)) or (
            not any(os.path.isfile(os.path.join(c.path, SETUP)) for c in children)
            and next(_attempt_files(root), None) is not None):
        return [(os.path.basename(os.path.abspath(root)), root)]
    return [(c.name, c.path) for c in children]


def _has_submission_files(root: str) -> bool:
    for _, _, files in os.walk(root):
        if "submission.txt" in files or "performance.json" in files or "probes.txt" in files:
            return True
    return False


def is_results_tree(root: str | Path) -> bool:
    """Whether ``root`` is a results tree: an experiment folder (or a folder of them) with
    attempt records ``<domain>/<family>/<task>.json``, and no run-folder or
    ``<config>/<run>/<task>/`` submission files."""
    root = str(root)
    if not os.path.isdir(root):
        return False
    found = any(next(_attempt_files(path), None) is not None for _, path in _experiments(root))
    return found and not _has_submission_files(root)


def read_results(root: str | Path, names: ExperimentNames | None = None) -> Iterator[dict]:
    """Sweep rows of every attempt record of a results tree (see module doc)."""
    names = names or ExperimentNames()
    root = str(root)
    for experiment, path in _experiments(root):
        cell = names.read(experiment)
        if cell is None:
            continue
        for domain, entry in _attempt_files(path):
            relative = "/".join((experiment, os.path.relpath(entry.path, path).replace(os.sep, "/")))
            yield {"config": cell[0], "run": cell[1], **record_row(entry.path, domain, relative)}


def record_row(path: str, domain: str, relative: str) -> dict:
    """The sweep row of one attempt record (its ``config`` and ``run`` aside)."""
    stem = os.path.basename(path)[:-len(".json")]
    row = {"task": stem, "phenomenal": None, "mechanism": None, "probes": None, "probe_replies": None,
           "probe_columns": None, READ_ERROR: None, **dict.fromkeys(HARNESS_COLUMNS),
           **dict.fromkeys(RECORD_COLUMNS), "result_file": relative, "results_domain": domain}
    text, error = _read(path, MAX_RECORD_BYTES)
    data = None
    if text is not None:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            error = f"{os.path.basename(path)} is not JSON: {getattr(exc, 'msg', 'nested too deeply')}"
        else:
            if not isinstance(data, Mapping):
                error, data = f"{os.path.basename(path)} is not a JSON object", None
    if data is None:
        row.update({READ_ERROR: error, "record_error": error, "harness_policy": f"unknown: {error}"})
        return row
    harness, per_probe = harness_verdicts(data)
    row.update(harness)
    evaluation = data.get("evaluation") if isinstance(data.get("evaluation"), Mapping) else None
    if evaluation is not None and isinstance(evaluation.get("task_name"), str) and evaluation["task_name"].strip():
        row["task"] = evaluation["task_name"].strip()
    submission = data.get("submission")
    if isinstance(submission, str):
        row["mechanism"] = submission_text(submission) or None
    if row["harness_error"] is None and evaluation is None:
        row["harness_error"] = "the record has no evaluation"
    phenomenal = evaluation.get("phenomenal") if evaluation and isinstance(evaluation.get("phenomenal"),
                                                                           Mapping) else {}
    for split, prefix in _SPLITS.items():
        scores = phenomenal.get(split) if isinstance(phenomenal.get(split), Mapping) else {}
        row[f"harness_{prefix}_symbolic"] = _flag(scores.get("symbolically_equivalent"))
    row["harness_error_type"] = _short(data.get("error_type"))
    row.update(_provenance(data), **_usage(data))
    entries = (evaluation or {}).get("mechanism_probes")
    items = [item for item in entries if isinstance(item, Mapping) and isinstance(item.get("probe"), str)] \
        if isinstance(entries, list) else []
    replies = {item["probe"]: item["reply"] if isinstance(item.get("reply"), str) else None for item in items}
    row["probe_replies"] = json.dumps(replies, sort_keys=True, ensure_ascii=False) if replies else None
    probe_rows = {name: dict(columns) for name, columns in per_probe.items()}
    for item in items:
        columns = probe_rows.setdefault(item["probe"], dict.fromkeys(HARNESS_PROBE_COLUMNS))
        columns.update(_probe_record(item))
    row["harness_n_probes_planned"] = _planned(data, evaluation, items)
    decision = decide(data, evaluation, probe_rows, row["harness_n_probes_planned"], row["mechanism"] is not None)
    row["harness_p_num"], row["harness_m_num"], row["harness_policy"] = decision
    row["probe_columns"] = json.dumps(probe_rows, sort_keys=True, ensure_ascii=False) if probe_rows else None
    return row


def _short(value, limit: int = 500) -> str | None:
    return str(value)[:limit] if isinstance(value, str) and value else None


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _mapping(data, *keys) -> Mapping:
    for key in keys:
        data = data.get(key) if isinstance(data, Mapping) else None
    return data if isinstance(data, Mapping) else {}


def _provenance(data: Mapping) -> dict:
    """The post-hoc recovery flag and the sha256 of the task file the attempt ran against
    (either provenance layout)."""
    candidates = (_mapping(data, "source", "task_definition_at_import").get("file_sha256"),
                  _mapping(data, "experiment_provenance", "job").get("task_sha256"))
    sha = next((c.lower() for c in candidates if isinstance(c, str) and _SHA.fullmatch(c.lower())), None)
    posthoc = _flag(_mapping(data, "experiment_provenance").get("posthoc_not_an_original_deadline_submission"))
    return {"harness_task_sha256": sha, "harness_posthoc": posthoc}


def _usage(data: Mapping) -> dict:
    """Tokens (``token_usage``, else ``used_token`` as a number or an object) and cost."""
    usage = _mapping(data, "token_usage")
    tokens = {"tokens_input": _count(usage.get("input_tokens")), "tokens_output": _count(usage.get("output_tokens")),
              "tokens_total": _count(usage.get("total_tokens_observed"))}
    used = data.get("used_token")
    if isinstance(used, Mapping):
        tokens = {"tokens_input": tokens["tokens_input"] if tokens["tokens_input"] is not None
                  else _count(used.get("input")),
                  "tokens_output": tokens["tokens_output"] if tokens["tokens_output"] is not None
                  else _count(used.get("output")),
                  "tokens_total": tokens["tokens_total"] if tokens["tokens_total"] is not None
                  else _count(used.get("total"))}
    elif tokens["tokens_total"] is None:
        tokens["tokens_total"] = _count(used)
    cost = data.get("cost_in_USD")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and math.isfinite(cost) \
        and cost >= 0 else None
    return {**tokens, "cost_usd": cost, "agent_seconds": _seconds(data.get("agent_seconds")),
            "evaluation_seconds": _seconds(data.get("evaluation_seconds"))}


def _probe_record(item: Mapping) -> dict:
    """A probe's reply, expanded expression and verdicts per split, and its policy verdict."""
    scores = item.get("scores") if isinstance(item.get("scores"), Mapping) else {}
    columns = {"harness_probe_reply": item["reply"][:MAX_TEXT] if isinstance(item.get("reply"), str) else None,
               "harness_probe_expression": item["expression"][:MAX_TEXT]
               if isinstance(item.get("expression"), str) else None}
    for split, prefix in _SPLITS.items():
        split_scores = scores.get(split) if isinstance(scores.get(split), Mapping) else {}
        columns[f"harness_probe_{prefix}_numeric"] = _flag(split_scores.get("numerically_equivalent"))
        columns[f"harness_probe_{prefix}_symbolic"] = _flag(split_scores.get("symbolically_equivalent"))
    columns["harness_probe_num"] = _probe_decision(item, columns)[0]
    return columns


def _planned(data: Mapping, evaluation: Mapping | None, items: list) -> int | None:
    """How many probes the task plans: ``evaluation.probe_count``, else the job's
    ``probe_count``, else the number of probe entries of the record (null without evaluation)."""
    for value in ((evaluation or {}).get("probe_count"), _mapping(data, "experiment_provenance", "job")
                  .get("probe_count")):
        if _count(value) is not None:
            return value
    return len(items) if evaluation is not None else None


# --- the published counting policy ---------------------------------------------------------

def _probe_decision(item: Mapping, columns: Mapping) -> tuple[bool | None, str]:
    """A probe under the policy: its ID and OOD numeric verdicts when it ran.  A failure
    of the runner ("... probe failed: {...}") is an answer timeout when it says
    ``'timed_out': True`` (wrong), else unknown (an agent or infrastructure failure);
    any other error is the harness rejecting the reply (a validation error such as
    "Expected one equality", or its own timeout): wrong."""
    ok = _flag(item.get("ok"))
    if ok is True:
        flags = (columns["harness_probe_id_numeric"], columns["harness_probe_ood_numeric"])
        if None in flags:
            return None, "numeric verdicts missing"
        return all(flags), "numeric ID and OOD"
    error = item.get("error") if isinstance(item.get("error"), str) else ""
    if ok is False and error:
        if re.search(r"probe failed", error, re.IGNORECASE):
            if re.search(r"""['"]timed_out['"]\s*:\s*true""", error, re.IGNORECASE):
                return False, "answer timeout"
            return None, "runner failure"
        return False, "validation error"
    return None, "no verdict"


def decide(data: Mapping, evaluation: Mapping | None, probes: Mapping[str, Mapping], planned: int | None,
           has_submission: bool) -> tuple[bool | None, bool | None, str]:
    """(P, M, why) of a record under the published counting policy:

    - P: the law numerically equivalent on both ID and OOD (``numerically_equivalent``);
    - M: every planned probe numerically equivalent on both; an answer timeout or a
      validation error of a probe makes that probe wrong;
    - a validation error of the submission (a record without evaluation whose
      ``error_type`` is ``ValidationError`` or whose error is one of the harness's
      submission checks, or ``phenomenal.ok`` false: a law the harness cannot solve)
      makes P and M wrong;
    - no submission, an infrastructure failure (any other error), a missing verdict or
      fewer probe entries than planned is unknown: null, never false."""
    error = " ".join(str(data.get(key)) for key in ("error_type", "error") if isinstance(data.get(key), str))
    lowered = error.lower()
    if evaluation is None:
        if not has_submission or any(m in lowered for m in _NO_SUBMISSION_MESSAGES):
            return None, None, "unknown: no submission" + (f" ({error[:200]})" if error else "")
        if "validationerror" in lowered.replace(" ", "") or any(m in lowered for m in _VALIDATION_MESSAGES):
            return False, False, f"wrong: submission validation error ({error[:200]})"
        return None, None, "unknown: " + (f"failure without evaluation ({error[:200]})" if error
                                          else "the record has no evaluation")
    phenomenal = evaluation.get("phenomenal") if isinstance(evaluation.get("phenomenal"), Mapping) else {}
    if phenomenal.get("ok") is False:
        why = phenomenal.get("error") if isinstance(phenomenal.get("error"), str) else "phenomenal.ok is false"
        return False, False, f"wrong: the harness could not evaluate the law ({why[:200]})"
    flags = [_flag((phenomenal.get(split) if isinstance(phenomenal.get(split), Mapping) else {})
                   .get("numerically_equivalent")) for split in _SPLITS]
    p = None if None in flags else all(flags)
    decisions = [columns.get("harness_probe_num") for columns in probes.values()]
    if planned is None or planned == 0:
        m, why = None, "no planned probes"
    elif len(decisions) < planned:
        m, why = None, f"{len(decisions)} of {planned} planned probes in the record"
    elif None in decisions:
        m, why = None, "a probe without a verdict"
    else:
        m, why = all(decisions), "every planned probe decided"
    return p, m, ("P " + ("unknown: verdicts missing" if p is None else "decided") + "; M " + why)


# --- task versions, rows fastscore does not score ------------------------------------------

def task_file_digests(path: str | Path) -> frozenset[str]:
    """The sha256 of a task file as the harness may have recorded it: over its bytes, and
    over them with LF and with CRLF line ends (a record made on a Windows checkout names
    the CRLF digest).  Empty when the file cannot be read."""
    try:
        data = Path(path).read_bytes()
    except OSError:
        return frozenset()
    lf = data.replace(b"\r\n", b"\n")
    return frozenset(hashlib.sha256(b).hexdigest() for b in (data, lf, lf.replace(b"\n", b"\r\n")))


def n_mutations_of(task: str) -> int | None:
    """Mutations named by a MechBench task name ('... - Original' 0, '... - Variant 1-3' 2)."""
    from fastscore.problems.mechbench import parse_task_name
    family, mutations = parse_task_name(task)
    return None if mutations is None else len(mutations)


def no_task_row(row: Mapping) -> dict:
    """The row of an attempt whose task is not in the problem set: the harness's columns
    kept, fastscore's empty (status ``no_task``)."""
    from fastscore.problems.mechbench import parse_task_name
    kept = {k: v for k, v in row.items() if k not in SUBMISSION_COLUMNS and k != READ_ERROR}
    return {**kept, "family": parse_task_name(row["task"])[0], "domain": row.get("results_domain"),
            "n_mutations": n_mutations_of(row["task"]), "status": NO_TASK,
            "error": "the task is not in the problem set: harness columns only"}


def triage(row: dict, by_task: Mapping, digests: dict, *, unread: str | None = None) -> str | None:
    """What ``fastscore.run.job`` does with a results-layer row: ``"no_task"`` (its task is not
    in ``by_task``), ``"missing"`` (the record has no submission and was read: ``unread``
    is null), else None
    (scored); a scored row gets ``task_sha_mismatch`` (its task file's digests, cached in
    ``digests``, do not include the one the record names; null when either is unknown)."""
    problem = by_task.get(row["task"])
    if problem is None:
        return NO_TASK
    recorded = row.get("harness_task_sha256")
    source = getattr(problem, "source", None)
    if source is not None and source not in digests:
        digests[source] = task_file_digests(source)
    known = digests.get(source) if source is not None else None
    row["task_sha_mismatch"] = None if not recorded or not known else recorded not in known
    if unread is None and row.get("mechanism") is None and row.get("phenomenal") is None:
        return "missing"
    return None


# --- the sweep reader ----------------------------------------------------------------------

_SCHEMA = {**ROW_SCHEMA, "probe_replies": pl.String, "probe_columns": pl.String, "harness_error": pl.String,
           **{name: pl.Boolean for name in HARNESS_COLUMNS if name != "harness_error"}, **RECORD_COLUMNS}


def _frames(root: Path, batch_size: int, options: Mapping) -> Iterator[pl.DataFrame]:
    return batched_frames(read_results(root, options.get("experiments")), batch_size, _SCHEMA)


register_sweep_reader(SweepReader("MechBench results layer", is_results_tree, _frames,
                                  rows=lambda path: sum(1 for _, p in _experiments(str(path))
                                                        for _ in _attempt_files(p))), before=TREE)
