"""The benchmark contract: a discovery benchmark that is not a law (a regulatory
graph, a materials screen, held-out trajectories) scored in the same sweep.

A ``Benchmark`` is
- a problem format (``fastscore.problems.formats.ProblemFormat``): its task files become
  ``Problem``s whose ``format`` is the benchmark's name, whose ``domain`` is the
  benchmark's name too (the strata and the rates pick a benchmark's rows by it; a
  ``missing`` row keeps it) and whose ``task`` holds the benchmark's parsed task;
- ``score_task(problem, rows, settings)``: the score rows of a batch of sweep rows of
  one task (``row_of`` builds one, ``scored_rows`` a batch of them); each row reads its
  submission with ``submission_text``;
- ``columns``: its score columns (name -> Polars dtype), ``rates``: its summary rates
  as ``(name, label, expr, higher_is_better)`` and ``outcomes``: its binary per-attempt
  outcomes for pass@k as ``(name, label, column)``.  These three are declared where
  ``fastscore.outputs.tables`` and ``fastscore.outputs.passk`` read them without loading a scorer
  (``fastscore.benchmarks.declared``).

The executors score a benchmark's task with its ``score_task`` in place of the law
pipeline (``fastscore.run.executors.base``): no reference is built.  Bad input is a row
with ``status`` ``parse_error`` and the reason in ``error``; the sweep goes on.

This module loads neither SymEngine nor Numba.
"""
from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fastscore.problems.formats import ProblemFormat, task_id_of
from fastscore.problems.model import Problem, ProblemError, Variable

SUBMISSION_KEYS = ("submission", "mechanism", "phenomenal")
"""Sweep columns a benchmark row's submission is read from, the first one given."""
_CELL = ("config", "run", "task")
_NOT_A_LAW = frozenset(("phenomenal", "mechanism", "probes", "probe_replies", "probe_columns", "submission"))


@dataclass(frozen=True)
class Benchmark:
    """A non-law benchmark (module doc): name, problem format, ``score_task``."""

    name: str
    problem_format: ProblemFormat
    score_task: Callable[[Problem, Sequence[Mapping], object], list[dict]]
    columns: Mapping[str, object] = field(default_factory=dict)


BENCHMARKS: dict[str, Benchmark] = {}


def register_benchmark(benchmark: Benchmark) -> None:
    """Add a benchmark and its problem format (asked before those registered earlier)."""
    from fastscore.problems.formats import register_problem_format
    if benchmark.name in BENCHMARKS:
        raise ValueError(f"benchmark {benchmark.name!r} is taken")
    BENCHMARKS[benchmark.name] = benchmark
    register_problem_format(benchmark.problem_format)


def benchmark_of(problem) -> Benchmark | None:
    """The benchmark that scores ``problem`` (None for a law problem)."""
    return BENCHMARKS.get(getattr(problem, "format", None))


def law_problems(problems) -> list[Problem]:
    """The law problems of a problem set (those no benchmark scores), in order."""
    return [problem for problem in problems if benchmark_of(problem) is None]


def task_problem(path: Path, root: Path, *, benchmark: str, task: object, name: str, description: str = "",
                 family: str | None = None) -> Problem:
    """The ``Problem`` of a benchmark task: no law, its task in ``task``."""
    return Problem(task_id=task_id_of(path, root), name=name, description=description,
                   target=Variable(benchmark), inputs=(), auxiliary_inputs=(), intermediates=(), constants=(),
                   law="", mechanism=(), family=family, domain=benchmark, source=str(path),
                   format=benchmark, task=task)


def yaml_format(name: str, key: str, read: Callable[[Path, Path, Mapping], Problem]) -> ProblemFormat:
    """A problem format of YAML task files that hold ``benchmark: <key>``."""
    def claims(path: Path, data) -> bool:
        return isinstance(data, Mapping) and data.get("benchmark") == key

    def checked(path: Path, root: Path, data) -> Problem:
        try:
            return read(path, root, data)
        except ProblemError:
            raise
        except (TypeError, ValueError, KeyError) as error:
            raise ProblemError(f"{path}: {error}") from None
    return ProblemFormat(name=name, claims=claims, read=checked)


def submission_text(row: Mapping) -> str | None:
    """The submission of a benchmark row: the first of ``SUBMISSION_KEYS`` given."""
    for key in SUBMISSION_KEYS:
        value = row.get(key)
        if value is not None and (not isinstance(value, str) or (value and not value.isspace())):
            return value if isinstance(value, str) else str(value)
    return None


def base_fields(problem: Problem, **extra) -> dict:
    """The columns every score row of a benchmark task shares (its family, domain, the
    law columns a benchmark row leaves empty) and ``extra`` ones: made once a batch."""
    return {"family": problem.family, "domain": problem.domain, "n_mutations": None, "kind": None,
            "p_equivalent": None, "id_acc": None, "ood_acc": None, "m_correct": None, "n_probes": 0,
            "n_probes_correct": 0, **extra}


def row_of(row: Mapping, base: Mapping, status: str = "ok", error: str | None = None,
           fields: Mapping | None = None) -> dict:
    """A benchmark's score row: the cell, ``base`` (``base_fields``), the status and
    error, its own ``fields``, then the sweep row's other columns carried through."""
    out = {"config": row["config"], "run": row["run"], "task": row["task"], **base, "status": status,
           "error": error}
    if fields:
        out.update(fields)
    for key, value in row.items():
        if key not in out and key not in _NOT_A_LAW:
            out[key] = value
    return out


class BadInput(ValueError):
    """A submission a benchmark cannot score: its row's ``parse_error`` reason."""


def judged_rows(rows: Sequence[Mapping],
                attempt: Callable[[str], tuple[str | None, Mapping]]) -> list[tuple[Mapping, str, str | None, dict]]:
    """Each row of a batch with its (status, error, fields): ``attempt`` scores a
    submission's text into (error or None, fields), raising `BadInput` (a
    ``parse_error``) or ``OverflowError`` (an ``eval_error``); repeats are scored once
    (and share their fields: read, not changed), a row without a submission is a ``parse_error``."""
    done: dict = {}
    out = []
    for row in rows:
        text = submission_text(row)
        if text not in done:
            done[text] = _judged(text, attempt)
        out.append((row, *done[text]))
    return out


def _judged(text: str | None, attempt: Callable[[str], tuple[str | None, Mapping]]) -> tuple[str, str | None, dict]:
    """(status, error, fields) of one submission's text (``judged_rows``)."""
    if text is None:
        return "parse_error", "no submission", {}
    try:
        error, fields = attempt(text)
        return "ok", error, fields if type(fields) is dict else dict(fields)
    except BadInput as failure:
        return "parse_error", str(failure), {}
    except OverflowError as failure:
        return "eval_error", str(failure), {}


def scored_rows(rows: Sequence[Mapping], base: Mapping,
                attempt: Callable[[str], tuple[str | None, Mapping]]) -> list[dict]:
    """``row_of(row, base, status, error, fields)`` of each of ``judged_rows(rows,
    attempt)``: the same rows, made faster.  Results with the same status, error and
    field names share a template in ``row_of``'s order: a row is its copy, updated with
    its fields, then its cell and other columns, whose names are worked out once per
    template and tuple of column names.  The garbage collector is paused meanwhile: the
    batch's rows all stay alive, so its collections (which grow with the rows) would
    free nothing."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        done: dict = {}       # text -> (template, cell names, {column names: names to take}, fields)
        templates: dict = {}  # (status, error, field names) -> (template, cell names, {...})
        out: list = []
        append = out.append
        first = SUBMISSION_KEYS[0]
        for row in rows:
            text = row.get(first)
            if type(text) is not str or not text or text.isspace():
                text = submission_text(row)
            known = done.get(text)
            if known is None:
                status, error, fields = _judged(text, attempt)
                key = (status, error, tuple(fields))
                shared = templates.get(key)
                if shared is None:
                    template = {"config": None, "run": None, "task": None, **base, "status": status,
                                "error": error, **fields}
                    shared = templates[key] = (template, tuple(n for n in _CELL if n not in base and n not in fields),
                                               {})
                known = done[text] = (*shared, fields)
            template, cell, taken, fields = known
            names = tuple(row)
            take = taken.get(names)
            if take is None:
                take = taken[names] = cell + tuple(n for n in names if n not in template and n not in _NOT_A_LAW)
            scored = template.copy()
            scored.update(fields)  # the same names: their places stay
            for name in take:
                scored[name] = row[name]
            append(scored)
        return out
    finally:
        if collecting:
            gc.enable()
