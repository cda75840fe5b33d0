"""Every extension point of fastscore from one module: each ``register_*`` function (and
``unregister_*`` where one exists) with the contract class it takes, re-exported from
the module that owns the registry.  Names load on first use, like ``fastscore``'s own,
so ``import fastscore.api`` stays light.

- ``register_problem_format(ProblemFormat(...))``: read problem files of a new format
  (``fastscore.problems.formats``)::

      register_problem_format(ProblemFormat(name="toml", claims=lambda path, data: True,
                                            read=read_toml_problem, yaml=False,
                                            names=lambda name: name.endswith(".toml")))

- ``register_sweep_reader(SweepReader(...), before=None)``: read sweeps of a new format
  (``fastscore.sweeps.read``)::

      register_sweep_reader(SweepReader(".tsv", lambda path: path.suffix == ".tsv",
                                        lambda path, size, options: iter([pl.read_csv(path, separator="\\t")])))

- ``register_scorer(SubmissionScorer(...))`` / ``unregister_scorer(name)``: add (remove)
  a scorer of submissions and its score columns (``fastscore.scoring.scorers``)::

      register_scorer(SubmissionScorer("equation_count", {"n_mechanism_equations": pl.Int64},
                                       count_equations))

- ``register_rate(Rate(...))``: add a rate to the summary, strata, report and CLI
  (``fastscore.outputs.tables``)::

      register_rate(Rate("acc_id_001", "Acc ID 0.01",
                         (pl.col("id_max_rel_err") <= 0.01).fill_null(False).mean(), True))

- ``register_outcome(PassOutcome(...))``: add a binary outcome pass@k is computed for
  (``fastscore.outputs.passk``)::

      register_outcome(PassOutcome("id_acc", "Acc ID", "id_acc"))

- ``register_executor(name, factory)``: run ``score_task`` somewhere new; ``factory(problems,
  settings, *, address, workers)`` returns a started ``Executor``
  (``fastscore.run.executors``)::

      register_executor("threads", lambda problems, settings, *, address, workers:
                        ThreadExecutor(problems, settings))

- ``register_benchmark(Benchmark(...))``: a non-law benchmark, its problem format and
  task scorer (``fastscore.benchmarks``; the built-in ones are named in
  ``fastscore.benchmarks.declared.MODULES``, docs/benchmarks.md)::

      register_benchmark(Benchmark("toy", toy_format, score_toy_task))
"""
from __future__ import annotations

from importlib import import_module

_HOMES = {
    "register_problem_format": "fastscore.problems.formats",
    "ProblemFormat": "fastscore.problems.formats",
    "register_sweep_reader": "fastscore.sweeps.read",
    "SweepReader": "fastscore.sweeps.read",
    "register_scorer": "fastscore.scoring.scorers",
    "unregister_scorer": "fastscore.scoring.scorers",
    "SubmissionScorer": "fastscore.scoring.scorers",
    "register_rate": "fastscore.outputs.tables",
    "Rate": "fastscore.outputs.tables",
    "register_outcome": "fastscore.outputs.passk",
    "PassOutcome": "fastscore.outputs.passk",
    "register_executor": "fastscore.run.executors",
    "Executor": "fastscore.run.executors.base",
    "register_benchmark": "fastscore.benchmarks.base",
    "Benchmark": "fastscore.benchmarks.base",
}
__all__ = list(_HOMES)


def __getattr__(name: str):
    if name in _HOMES:
        return getattr(import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'fastscore.api' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
