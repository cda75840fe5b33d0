"""The extension points: a new problem format, a new sweep format and a new
submission scorer are each one registration, in the test that adds them."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import polars as pl
import pytest

from fastscore.outputs import tables
from fastscore.problems import formats as problem_registry
from fastscore.problems.formats import ProblemFormat, load_problems, register_problem_format
from fastscore.problems.model import Equation, Problem, Sampling, Variable
from fastscore.run.job import score_sweep
from fastscore.scoring.scorers import SubmissionContext, SubmissionScorer, register_scorer, unregister_scorer
from fastscore.settings import Settings
from fastscore.sweeps import read as sweep_registry
from fastscore.sweeps.read import SweepReader, approximate_rows, read_sweep, register_sweep_reader

SMALL = Settings(n_samples=64, n_points=64)


def _toml_problem(path: Path, root: Path, data) -> Problem:
    """A toy format: one TOML table per problem (name, law, inputs with ranges)."""
    spec = tomllib.loads(path.read_text())
    inputs = tuple(Variable(name, sampling=Sampling(low, high, (low + high) / 2, "uniform"))
                   for name, (low, high) in spec["inputs"].items())
    return Problem(task_id=path.stem, name=spec["name"], description="", target=Variable(spec["target"]),
                   inputs=inputs, auxiliary_inputs=(), intermediates=(), constants=(), law=spec["law"],
                   mechanism=(Equation(spec["law"]),), source=str(path))


@pytest.fixture
def toml_format():
    register_problem_format(ProblemFormat(name="toml", claims=lambda path, data: True, read=_toml_problem,
                                          yaml=False, names=lambda name: name.endswith(".toml")))
    yield
    problem_registry.PROBLEM_FORMATS[:] = [f for f in problem_registry.PROBLEM_FORMATS if f.name != "toml"]


@pytest.fixture
def tsv_reader():
    register_sweep_reader(SweepReader(".tsv", lambda path: path.suffix == ".tsv",
                                      lambda path, size, options: iter([pl.read_csv(path, separator="\t")]),
                                      rows=lambda path: path.read_text().count("\n") - 1))
    yield
    sweep_registry.SWEEP_READERS[:] = [r for r in sweep_registry.SWEEP_READERS if r.name != ".tsv"]


def test_a_registered_problem_format_is_read_beside_the_others(tmp_path, toml_format):
    (tmp_path / "ohm.toml").write_text('name = "Ohm"\ntarget = "V"\nlaw = "V = I*R"\n'
                                       '[inputs]\nI = [0.1, 2.0]\nR = [1.0, 10.0]\n')
    example = Path(__file__).resolve().parents[1] / "problems" / "example" / "circular-orbit-period.yaml"
    (tmp_path / "orbit.yaml").write_text(example.read_text())
    loaded = {p.task_id: p for p in load_problems(tmp_path)}
    assert set(loaded) == {"ohm", "orbit"} and loaded["ohm"].law == "V = I*R"
    sweep = tmp_path / "s.jsonl"
    sweep.write_text(json.dumps({"config": "c", "task": "ohm", "phenomenal": "V = R*I"}))
    score_sweep(tmp_path, sweep, tmp_path / "out", executor="local", settings=SMALL)
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("task") == "ohm")
    assert scores.select("status", "p_verdict").rows() == [("ok", "proven")]


def test_a_registered_sweep_reader_is_used_for_its_files(tmp_path, tsv_reader):
    sweep = tmp_path / "s.tsv"
    sweep.write_text("config\ttask\tphenomenal\nc\tcircular-orbit-period\tT = 2*pi*sqrt(r**3/(G*M))\n")
    assert read_sweep(sweep).__next__().select("config", "run", "task").rows() == [("c", 0, "circular-orbit-period")]
    assert approximate_rows(sweep) == 1  # the reader's own estimate (a file's size / 200 would say 0)
    problems = Path(__file__).resolve().parents[1] / "problems" / "example"
    score_sweep(problems, sweep, tmp_path / "out", executor="local", settings=SMALL)
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("status") != "missing")
    assert scores.select("task", "p_equivalent").rows() == [("circular-orbit-period", True)]


def _count_equations(context: SubmissionContext) -> dict:
    """A toy scorer: how many equations a solved mechanism has (null for a phenomenal law)."""
    return {"n_mechanism_equations": len(context.equations) if context.kind == "mechanism" else None}


@pytest.fixture
def equation_counter():
    register_scorer(SubmissionScorer("equation_count", {"n_mechanism_equations": pl.Int64}, _count_equations))
    yield
    unregister_scorer("equation_count")
    assert "n_mechanism_equations" not in tables.SCORE_SCHEMA


def test_a_registered_scorer_adds_its_column_to_the_score_rows(tmp_path, equation_counter):
    with pytest.raises(ValueError, match="already a score column"):
        register_scorer(SubmissionScorer("status_again", {"status": pl.Utf8}, _count_equations))
    mechanism = "F_g = G*M*m/r**2; F_c = m*v**2/r; F_g = F_c; T = 2*pi*r/v"
    rows = [{"config": "law", "run": 0, "task": "circular-orbit-period", "phenomenal": "T = 2*pi*sqrt(r**3/(G*M))"},
            *({"config": "mech", "run": run, "task": "circular-orbit-period", "mechanism": mechanism}
              for run in (0, 1))]  # the repeat is scored once (memoised with the law)
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(row) + "\n" for row in rows))
    problems = Path(__file__).resolve().parents[1] / "problems" / "example"
    score_sweep(problems, sweep, tmp_path / "out", executor="local", settings=SMALL)
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("status") != "missing")
    assert scores.schema["n_mechanism_equations"] == pl.Int64
    assert scores.select("config", "run", "kind", "p_equivalent", "n_mechanism_equations").rows() == [
        ("law", 0, "phenomenal", True, None), ("mech", 0, "mechanism", True, 4), ("mech", 1, "mechanism", True, 4)]
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet")
    assert not any(name.startswith("n_mechanism_equations") for name in summary.columns)  # a score, not a cost
