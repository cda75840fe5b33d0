"""The field's other discovery benchmarks, scored in the same sweep as laws: one
module per benchmark (``grn``: ActiveSciBench-GRN signed graphs, ``scm`` the
equations of an SCM hypothesis against a task's reference mechanism, and ``evoscm``
EvoSCM's wrappers of candidate hypotheses and their parameters; ``materials``:
LLEMA materials screens; ``trajectories``: DiscoverPhysics held-out trajectories),
each a ``fastscore.benchmarks.base.Benchmark`` (problem format + ``score_task`` +
columns, rates and pass@k outcomes).  Importing this package registers them (the
problem-format registry imports it on first use); ``declared`` holds what the tables
read without loading a scorer.  docs/benchmarks.md is the manual.

May import: ``fastscore.support``, ``fastscore.text``, ``fastscore.kernels``,
``fastscore.tapes``, ``fastscore.algebra``, ``fastscore.solve``, ``fastscore.problems``,
``fastscore.settings`` (a GRN task's reference mechanism is solved and judged
as a law problem's mechanism is).
"""
from __future__ import annotations

from fastscore.benchmarks.base import BENCHMARKS, Benchmark, benchmark_of, law_problems, register_benchmark
from fastscore.benchmarks.declared import MODULES, benchmark_modules

__all__ = ["BENCHMARKS", "Benchmark", "benchmark_of", "law_problems", "register_benchmark", "MODULES"]

for _module in benchmark_modules():
    if _module.NAME not in BENCHMARKS:
        register_benchmark(_module.BENCHMARK)
