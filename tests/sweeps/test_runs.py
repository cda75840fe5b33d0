"""MechBench run folders as a sweep (``fastscore.sweeps.mechbench_runs``) and probe replies scored the
harness's way: expanded through the submitted mechanism, one equation ``probe = expr``."""
from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from fastscore.cli import main
from fastscore.problems.formats import load_problem
from fastscore.problems.mechbench import write_task_folder
from fastscore.run.job import score_sweep
from fastscore.scoring.reference import build_reference
from fastscore.sweeps.mechbench_runs import ExperimentNames, RunTreeError, is_run_tree, read_runs
from tests.support.mechbench_tasks import SMALL, orbit_task, write_task

TASK = "Toy Orbit - Variant 1-3"
REFERENCE = "\n".join(m["formula"] for m in orbit_task()["mechanism_model"])
RENAMED = "grav = 6.674e-11*M/r**2  # gravity\nomega**2*r = grav; T = 2*pi/omega"
WRONG = "grav = 2*6.674e-11*M/r**2\nomega**2*r = grav\nT = 2*pi/omega"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tasks")
    problem = load_problem(write_task(root / "src", orbit_task()), root=root / "src")
    write_task_folder(problem, build_reference(problem, settings=SMALL).splits, root / "private" / TASK,
                      save_answer=True)
    return root / "private"


def run_folder(root: Path, exp: str, task: str, submission: str | bytes | None, replies: dict, performance=None):
    folder = root / exp / task
    folder.mkdir(parents=True)
    if submission is not None:
        data = submission.encode() if isinstance(submission, str) else submission
        (folder / "submission.txt").write_bytes(data)
    for index, (probe, reply) in enumerate(replies.items()):
        (folder / "probe" / f"{index:03d}-{probe}").mkdir(parents=True)
        if reply is not None:
            (folder / "probe" / f"{index:03d}-{probe}" / "reply.txt").write_text(reply)
    if performance is not None:
        (folder / "performance.json").write_text(performance if isinstance(performance, str)
                                                 else json.dumps(performance))
    return folder


def performance(p_equivalent: bool, probes_ok: dict) -> dict:
    scores = {s: {"symbolically_equivalent": p_equivalent, "numerically_equivalent": p_equivalent}
              for s in ("train", "id_test", "ood_test")}
    return {"algorithm": "codex", "agent_seconds": 120.5, "evaluation_seconds": 4.25, "ok": True,
            "evaluation": {"phenomenal": {"ok": True, **scores},
                           "mechanism_probes": [{"probe": p, "ok": ok, "expression": "x",
                                                 "scores": {"train": {"symbolically_equivalent": ok}}}
                                                for p, ok in probes_ok.items()]}}


def score(tasks: Path, sweep: Path, out: Path, **options):
    score_sweep(tasks, sweep, out, executor="local", settings=SMALL, **options)
    return (pl.read_parquet(out / "scores.parquet"), pl.read_parquet(out / "probes.parquet"),
            json.loads((out / "meta.json").read_text()))


def test_experiment_names_map_to_config_and_run(tmp_path):
    default = ExperimentNames()
    assert [default.read(n) for n in ("gpt-4_run2", "codex-seed-3", "claude-3", "baseline")] == [
        ("gpt-4", 2), ("codex", 3), ("claude-3", 0), ("baseline", 0)]
    pattern = ExperimentNames(pattern="{config}.r{run}")
    assert pattern.read("m1.r7") == ("m1", 7) and pattern.read("m1_r7") is None and pattern.unread == ["m1_r7"]
    mapping = tmp_path / "map.csv"
    mapping.write_text("exp_name,config,run\n20260101_run_1,gpt,0\n20260102_run_2,gpt,1\nsolo,other\n")
    names = ExperimentNames.from_file(mapping)
    assert [names.read(n) for n in ("20260101_run_1", "20260102_run_2", "solo", "x")] == [
        ("gpt", 0), ("gpt", 1), ("other", 0), None]
    mapping.write_text("a,b,c,d\n")
    with pytest.raises(RunTreeError, match="expected 'exp_name,config\\[,run\\]'"):
        ExperimentNames.from_file(mapping)
    with pytest.raises(RunTreeError, match="no {config} placeholder"):
        ExperimentNames(pattern="run{run}")


@pytest.mark.slow
def test_a_run_tree_is_scored_with_probe_replies_expanded_through_the_submission(tasks, tmp_path):
    runs = tmp_path / "runs"
    run_folder(runs, "alpha_run1", TASK, "# the reference, copied\n" + REFERENCE,
               {"w": "w = w\n", "g": "g = M*6.674e-11/r**2"}, performance(True, {"w": True, "g": True}))
    run_folder(runs, "alpha_run2", TASK, RENAMED, {"w": "w = omega", "g": "g = (2*pi/T)**2*r"},
               performance(True, {"w": True, "g": False}))
    run_folder(runs, "beta", TASK, WRONG, {"w": "w = 2*pi/T  # from my period", "g": "g = grav"},
               performance(False, {"w": True, "g": True}))
    assert is_run_tree(runs)
    scores, probes, meta = score(tasks, runs, tmp_path / "out")
    got = {(r["config"], r["run"]): r for r in scores.iter_rows(named=True)}
    assert set(got) == {("alpha", 1), ("alpha", 2), ("beta", 0)}
    assert [got[("alpha", 1)][k] for k in ("status", "kind", "p_equivalent", "m_correct")] == ["ok", "mechanism",
                                                                                               True, True]
    assert got[("alpha", 2)]["p_equivalent"] and got[("alpha", 2)]["m_correct"]
    assert got[("beta", 0)]["status"] == "ok" and not got[("beta", 0)]["p_equivalent"]
    # beta's probes follow its own (wrong) mechanism: w from its own period is wrong, so is g
    assert got[("beta", 0)]["n_probes_correct"] == 0
    # the harness's verdicts and timings travel along
    assert got[("alpha", 2)]["harness_p_equivalent"] is True and got[("beta", 0)]["harness_p_equivalent"] is False
    assert got[("alpha", 2)]["harness_m_correct"] is False and got[("alpha", 1)]["agent_seconds"] == 120.5
    probe = {(r["config"], r["run"], r["probe"]): r for r in probes.iter_rows(named=True)}
    assert probe[("alpha", 2, "g")]["harness_probe_equivalent"] is False
    assert probe[("alpha", 2, "g")]["probe_equivalent"] is True  # an audit finding: the harness disagrees
    assert meta["counts"]["status"] == {"ok": 3}
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet")
    assert "agent_seconds_median" in summary.columns and "harness_ok_median" not in summary.columns
    # the report audits the harness: where the two disagree, with fastscore's proof or counterexample
    assert main(["report", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "## Audit against MechBench's harness" in report
    assert "verdicts for 3 laws and 6 probe answers. They disagree with fastscore on 0 laws and 3 probe" in report
    audit = pl.read_parquet(tmp_path / "out" / "report" / "harness_audit.parquet")
    assert audit.select("config", "run", "probe", "probe_verdict").rows() == [
        ("alpha", 2, "g", "proven"), ("beta", 0, "g", "different"), ("beta", 0, "w", "different")]
    assert audit.filter(pl.col("config") == "beta")["probe_counterexample"].str.contains('"candidate"').all()


@pytest.mark.slow
def test_no_audit_without_harness_verdicts(tmp_path):
    from fastscore.report.audit import harness_audit
    sweep = tmp_path / "s.jsonl"
    sweep.write_text(json.dumps({"config": "c", "task": "circular-orbit-period", "phenomenal": "T = r"}))
    score_sweep(Path(__file__).resolve().parents[2] / "problems" / "example", sweep, tmp_path / "out",
                executor="local", settings=SMALL)
    assert harness_audit(tmp_path / "out") is None
    assert main(["report", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "This sweep carries no verdicts of MechBench's harness" in report and "agrees with every" not in report


@pytest.mark.slow
@pytest.mark.parametrize(("reply", "reason"), [
    ("", "holds no equation"),
    ("# nothing\n", "holds no equation"),
    ("w = omega; g = grav", "holds 2 equations"),
    ("omega", "is not an equation 'w = expression'"),
    ("omega = w", "left-hand side must be 'w'"),
    ("w = speed", "names left after expansion: speed"),
    ("w = omega ** (", "parse error"),
    (None, "no reply"),
])
def test_bad_replies_make_that_probe_wrong_and_keep_the_row(tasks, tmp_path, reply, reason):
    runs = tmp_path / "runs"
    run_folder(runs, "m_run0", TASK, RENAMED, {"w": reply, "g": "g = grav"})
    scores, probes, _ = score(tasks, runs, tmp_path / "out")
    assert scores["status"].to_list() == ["ok"] and scores["p_equivalent"].to_list() == [True]
    row = {r["probe"]: r for r in probes.iter_rows(named=True)}
    assert row["g"]["probe_equivalent"] is True
    assert row["w"]["probe_equivalent"] is False and reason in row["w"]["probe_reason"]


def test_the_probes_column_may_use_mechanism_quantities_but_a_phenomenal_answer_may_not(tasks, tmp_path):
    sweep = tmp_path / "s.jsonl"
    rows = [{"config": "m", "run": 0, "task": TASK, "mechanism": RENAMED, "probes": {"w": "omega", "g": "grav"}},
            {"config": "p", "run": 0, "task": TASK, "phenomenal": "T = 2*pi*sqrt(r**3/(6.674e-11*M))",
             "probes": {"w": "omega", "g": "6.674e-11*M/r**2"}}]
    sweep.write_text("\n".join(json.dumps(r) for r in rows))
    _, probes, _ = score(tasks, sweep, tmp_path / "out")
    row = {(r["config"], r["probe"]): r for r in probes.iter_rows(named=True)}
    assert row[("m", "w")]["probe_equivalent"] and row[("m", "g")]["probe_equivalent"]
    assert row[("p", "g")]["probe_equivalent"]
    assert not row[("p", "w")]["probe_equivalent"] and "names left after expansion: omega" in \
        row[("p", "w")]["probe_reason"]


def test_bad_files_become_row_statuses_or_counts(tasks, tmp_path):
    runs = tmp_path / "runs"
    run_folder(runs, "m_run0", TASK, b"T = \xff\xfe", {})
    secret = tmp_path / "secret.txt"
    secret.write_text("T = secret_value_1234")
    linked = run_folder(runs, "m_run1", TASK, None, {}, performance="{not json")
    os.symlink(secret, linked / "submission.txt")
    run_folder(runs, "m_run2", TASK, None, {}, performance(False, {}))  # the agent left no submission
    run_folder(runs, "m_run3", "Not A Task - Original", REFERENCE, {})
    run_folder(runs, "m_run4", TASK, "   \n# only a comment\n", {})
    scores, _, meta = score(tasks, runs, tmp_path / "out")
    got = {r["run"]: r for r in scores.iter_rows(named=True)}
    assert got[0]["status"] == "parse_error" and "not UTF-8" in got[0]["error"]
    assert got[1]["status"] == "parse_error" and "symlink" in got[1]["error"]
    assert "secret_value" not in json.dumps(scores.to_dicts(), default=str)
    assert got[1]["harness_error"].startswith("performance.json is not JSON")
    assert got[2]["status"] == "parse_error" and "no submission.txt" in got[2]["error"]
    assert got[4]["status"] == "parse_error" and "no equation" in got[4]["error"]
    assert meta["counts"]["rows_with_unknown_task"] == 1
    assert meta["counts"]["unknown_tasks"] == ["Not A Task - Original"]


def test_an_unreadable_experiment_name_is_counted_and_skipped(tasks, tmp_path, capsys):
    runs = tmp_path / "runs"
    run_folder(runs, "gpt_run1", TASK, REFERENCE, {})
    run_folder(runs, "scratch", TASK, REFERENCE, {})
    out = tmp_path / "out"
    assert main(["score", "--problems", str(tasks), "--sweep", str(runs), "--out", str(out), "--executor", "local",
                 "--exp-pattern", "{config}_run{run}"]) == 0
    meta = json.loads((out / "meta.json").read_text())
    assert meta["counts"]["experiments_unread"] == ["scratch"]
    assert "1 experiment folder(s)" in capsys.readouterr().err
    assert pl.read_parquet(out / "scores.parquet").select("config", "run").rows() == [("gpt", 1)]


def test_one_experiment_folder_is_a_run_tree_too(tmp_path):
    run_folder(tmp_path, "gpt_run3", TASK, REFERENCE, {"w": "w = w"})
    rows = list(read_runs(tmp_path / "gpt_run3"))
    assert [(r["config"], r["run"], r["task"]) for r in rows] == [("gpt", 3, TASK)]
    assert json.loads(rows[0]["probe_replies"]) == {"w": "w = w"}
    assert rows[0]["mechanism"] == "\n".join(REFERENCE.splitlines())


def test_fastscores_own_tree_is_not_taken_for_run_folders(tmp_path):
    folder = tmp_path / "cfg" / "run0" / "task"
    folder.mkdir(parents=True)
    (folder / "submission.txt").write_text("y = x")
    assert not is_run_tree(tmp_path)


EXAMPLE_TASKS = Path(__file__).resolve().parents[2] / "problems" / "mechbench-example" / "tasks"
EXAMPLE_RUNS = EXAMPLE_TASKS.parent / "runs"


@pytest.mark.slow
def test_the_bundled_worked_example(tmp_path):
    """Two real tasks, three agent runs whose performance.json MechBench's own harness wrote."""
    scores, probes, meta = score_sweep_default(EXAMPLE_TASKS, EXAMPLE_RUNS, tmp_path / "out")
    cells = {(r["config"], r["run"], r["task"]): r for r in scores.iter_rows(named=True)}
    hall, enzyme = "Hall Response - Original", "Competitive Enzyme Inhibition - Variant 1"
    assert [cells[("agentA", 1, t)]["m_correct"] for t in (hall, enzyme)] == [True, True]
    assert cells[("agentA", 2, enzyme)]["p_equivalent"] is False  # a wrong inhibitor constant
    assert cells[("agentA", 2, hall)]["m_correct"] is True  # reply in its own quantity sigma
    assert (cells[("agentB", 1, hall)]["p_equivalent"], cells[("agentB", 1, hall)]["m_correct"]) == (True, False)
    assert cells[("agentB", 1, enzyme)]["status"] == "parse_error"
    assert cells[("agentB", 1, enzyme)]["harness_error"] == "Agent timed out before submitting"
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet").sort("config")
    assert summary["sa_p"].to_list() == [0.75, 0.5] and summary["cond_fail"].to_list() == [0.0, 1.0]
    assert main(["report", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "verdicts for 5 laws and 9 probe answers. fastscore agrees with every one of them." in report


def score_sweep_default(tasks: Path, sweep: Path, out: Path):
    score_sweep(tasks, sweep, out, executor="local")
    return (pl.read_parquet(out / "scores.parquet"), pl.read_parquet(out / "probes.parquet"),
            json.loads((out / "meta.json").read_text()))
