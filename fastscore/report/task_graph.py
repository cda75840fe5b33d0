"""The graph of one task (``fastscore graph``): its reference mechanism, or one
submission from a sweep with the quantities it recovers by value marked."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import polars as pl

from fastscore.problems.formats import load_problems
from fastscore.problems.model import Problem
from fastscore.scoring.reference import build_reference, constant_substitutions, reference_equations
from fastscore.scoring.structure import parse_submitted, recovered_quantities, roles_of, structure_fields
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.solve.mechanism import SolveError, solve_mechanism
from fastscore.structure.drawing import render
from fastscore.structure.graphs import MechanismGraph, mechanism_graph
from fastscore.sweeps.read import read_sweep
from fastscore.text.answers import read_expression
from fastscore.text.parse import symbol
from fastscore.text.tokens import ParseError


@dataclass(frozen=True)
class TaskGraph:
    """A graph to draw, its title and the value matches (submitted -> reference names)."""

    graph: MechanismGraph
    title: str
    recovered: Mapping[str, tuple[str, ...]]


def reference_graph(problem: Problem) -> TaskGraph:
    """The problem's own mechanism as a graph (raises ValueError without one)."""
    if not problem.mechanism:
        raise ValueError(f"{problem.task_id}: the problem has no mechanism")
    equations = reference_equations(problem, constant_substitutions(problem))
    graph = mechanism_graph(equations, problem.known_names, problem.target.name, roles_of(problem))
    return TaskGraph(graph, f"{problem.task_id}: reference mechanism", {})


def find_submission(sweep: str | Path, *, task: str, config: str, run: int) -> Mapping:
    """The first sweep row of (config, run, task), as scoring keeps it (ValueError when none)."""
    for batch in read_sweep(sweep):
        rows = batch.filter((pl.col("config") == config) & (pl.col("run") == run) & (pl.col("task") == task))
        if rows.height:
            return rows.row(0, named=True)
    raise ValueError(f"{sweep}: no submission for config {config!r}, run {run}, task {task!r}")


def submission_graph(problem: Problem, row: Mapping, *, settings: Settings = DEFAULT_SETTINGS) -> TaskGraph:
    """A submission's mechanism (or its phenomenal law, as a one-equation mechanism) as a
    graph, with its structure scores in the title and its value matches."""
    reference = build_reference(problem, settings=settings)
    target = problem.target.name
    label = f"{problem.task_id}: {row['config']} run {row['run']}"
    text = row.get("mechanism")
    try:
        if text:
            equations = parse_submitted(problem, reference.constants, text)
        elif row.get("phenomenal"):
            law = read_expression(row["phenomenal"], target=target, names=reference.knowns)
            equations = [(symbol(target), law.subs(reference.constants))]
        else:
            raise ValueError(f"{label}: the submission has no phenomenal formula or mechanism")
    except ParseError as error:
        raise ValueError(f"{label}: the submission does not parse: {error}") from None
    graph = mechanism_graph(equations, reference.knowns, target, roles_of(problem))
    try:
        solution = solve_mechanism(equations, knowns=reference.knowns, target=target, points=reference.points,
                                   budget=settings.solve_budget, rtol=settings.rtol)
    except SolveError:
        solution = None
    recovered: dict[str, list[str]] = {}
    if solution is not None:
        for ref_name, names in recovered_quantities(reference, solution, settings, every=True).items():
            for name in names:
                recovered.setdefault(name, []).append(ref_name)
    fields = structure_fields(reference, text or row["phenomenal"], solution, settings, equations=equations)
    facts = [f"graph {fields['structure_graph_score']:.2f}", f"AST {fields['structure_ast_score']:.2f}"]
    if fields["n_quantities_recovered"] is not None:
        facts.append(f"recovered {fields['n_quantities_recovered']}/{fields['n_reference_quantities']}")
    if solution is None:
        facts.append("does not solve")
    return TaskGraph(graph, f"{label} ({', '.join(facts)})", {k: tuple(v) for k, v in recovered.items()})


def draw_task(problems: str | Path, task: str, out: str | Path, *, sweep: str | Path | None = None,
              config: str | None = None, run: int = 0, engine: str = "auto") -> Path:
    """Draw a task's reference mechanism, or with ``sweep`` and ``config`` the submission
    of (config, run), to ``out`` (.dot, .svg or .png)."""
    by_task = {p.task_id: p for p in load_problems(problems)}
    if task not in by_task:
        raise ValueError(f"{problems}: no task {task!r}")
    if sweep is None:
        drawn = reference_graph(by_task[task])
    else:
        if config is None:
            raise ValueError("--sweep needs --config (and --run, default 0)")
        drawn = submission_graph(by_task[task], find_submission(sweep, task=task, config=config, run=run))
    return render(drawn.graph, out, title=drawn.title, recovered=drawn.recovered, engine=engine)
