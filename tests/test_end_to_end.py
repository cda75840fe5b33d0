"""End to end: the bundled example through ``score_sweep`` and the ``fastscore`` CLI."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from fastscore.cli import main
from fastscore.run.job import score_sweep

ROOT = Path(__file__).resolve().parents[1]
SWEEP = ROOT / "problems" / "example-sweep.jsonl"
TASKS = ("circular-orbit-period", "michaelis-menten-rate", "vacancy-diffusion-original",
         "vacancy-diffusion-variant-1-2")


@pytest.fixture(scope="module")
def scored(tmp_path_factory, example_dir) -> Path:
    out = tmp_path_factory.mktemp("example")
    score_sweep(example_dir, SWEEP, out, executor="local", progress=False)
    return out


def _cell(scores: pl.DataFrame, config: str, run: int, task: str) -> dict:
    rows = scores.filter((pl.col("config") == config) & (pl.col("run") == run) & (pl.col("task") == task))
    assert rows.height == 1
    return rows.row(0, named=True)


def test_expected_grid_has_a_row_per_config_run_and_task(scored):
    scores = pl.read_parquet(scored / "scores.parquet")
    # (oracle, 0/1), (model-a, 0/1), (model-b, 0) × 4 tasks
    assert scores.height == 5 * len(TASKS)
    assert set(scores["task"]) == set(TASKS)
    missing = scores.filter(pl.col("status") == "missing")
    assert missing.select("config", "run", "task").rows() == [("model-a", 0, "vacancy-diffusion-variant-1-2")]
    assert missing["p_equivalent"].to_list() == [False]


def test_verdicts_of_the_example(scored):
    scores = pl.read_parquet(scored / "scores.parquet")
    oracle = scores.filter(pl.col("config") == "oracle")
    assert oracle["p_equivalent"].all() and oracle["m_correct"].all()
    assert oracle["id_acc"].all() and oracle["ood_acc"].all()
    # decimal 2*pi and **0.5: equivalent within rtol, not by exact proof
    assert _cell(scores, "model-a", 0, "circular-orbit-period")["p_verdict"] == "numeric"
    # 6.29 instead of 2*pi: 1e-3 off -> different, with the counterexample point
    near_miss = _cell(scores, "model-a", 1, "circular-orbit-period")
    assert near_miss["p_verdict"] == "different" and near_miss["p_equivalent"] is False
    example = json.loads(near_miss["p_counterexample"])
    assert {"r", "M", "m", "candidate", "reference"} <= set(example)
    assert abs(example["candidate"] / example["reference"] - 6.29 / (2 * 3.141592653589793)) < 1e-9
    assert near_miss["id_acc"] is True  # 1e-3 is within Acc0.1 though not equivalent
    # a mechanism whose law is derived by elimination
    mechanism = _cell(scores, "model-a", 1, "michaelis-menten-rate")
    assert mechanism["kind"] == "mechanism" and mechanism["p_equivalent"] is True
    # probe C right, law wrong: m_correct is unconditional on p_equivalent
    wrong_law = _cell(scores, "model-a", 0, "michaelis-menten-rate")
    assert wrong_law["p_verdict"] == "different" and wrong_law["id_acc"] is False
    assert _cell(scores, "model-a", 1, "vacancy-diffusion-original")["p_verdict"] == "proven"


def test_bad_submissions_become_rows_with_status_and_error(scored):
    scores = pl.read_parquet(scored / "scores.parquet")
    hostile = _cell(scores, "model-b", 0, "circular-orbit-period")
    assert hostile["status"] == "parse_error" and "unexpected character" in hostile["error"]
    assert "exceeds limit" in _cell(scores, "model-b", 0, "michaelis-menten-rate")["error"]
    assert "unknown name 'Q'" in _cell(scores, "model-b", 0, "vacancy-diffusion-original")["error"]
    under = _cell(scores, "model-b", 0, "vacancy-diffusion-variant-1-2")
    assert under["status"] == "solve_error" and "under-determined" in under["error"]


def test_summary_rates_over_the_fixed_task_denominator(scored):
    summary = pl.read_parquet(scored / "summary.parquet")
    rows = {r["config"]: r for r in summary.iter_rows(named=True)}
    assert rows["oracle"]["sa_p"] == 1.0 and rows["oracle"]["n_runs"] == 2 and rows["oracle"]["n_tasks"] == 4
    # model-a: run 0 = 2/4 (orbit, vacancy; one missing), run 1 = 2/4 (michaelis, vacancy)
    assert rows["model-a"]["sa_p"] == pytest.approx(0.5)
    assert rows["model-a"]["sa_p_std"] == pytest.approx(0.0)
    assert rows["model-b"]["sa_p"] == 0.0 and rows["model-b"]["cond_fail"] is None
    # model-a run 1: 2 equivalent laws with probes; vacancy-original has no probe answer
    # -> m fails given p: 1/2; run 0: orbit and vacancy equivalent, both probes right -> 0
    assert rows["model-a"]["cond_fail"] == pytest.approx(0.25)


def test_extra_columns_are_carried_through(scored):
    scores = pl.read_parquet(scored / "scores.parquet")
    assert _cell(scores, "oracle", 0, "michaelis-menten-rate")["tokens"] == 4200


def test_strata_by_domain_family_mutations_and_variant(scored):
    strata = pl.read_parquet(scored / "strata.parquet")
    assert set(strata["stratum"]) == {"domain", "family", "n_mutations", "variant_only", "variant_class"}
    variant = strata.filter((pl.col("config") == "oracle") & (pl.col("stratum") == "variant_only"))
    assert variant["n_tasks"].to_list() == [1] and variant["sa_p"].to_list() == [1.0]


def test_meta_records_settings_versions_and_digests(scored):
    meta = json.loads((scored / "meta.json").read_text())
    assert meta["settings"]["rtol"] == 1e-6 and meta["settings"]["n_points"] == 256
    assert len(meta["inputs"]["sweep_sha256"]) == 64
    assert meta["counts"]["status"]["missing"] == 1


def test_every_sweep_format_gives_the_same_scores(scored, tmp_path, example_dir):
    frame = pl.read_ndjson(SWEEP).with_columns(pl.col("probes").map_elements(
        lambda v: None if v is None else json.dumps(v, sort_keys=True) if isinstance(v, dict) else v,
        return_dtype=pl.Utf8))
    frame.write_parquet(tmp_path / "sweep.parquet")
    score_sweep(example_dir, tmp_path / "sweep.parquet", tmp_path / "out", executor="local", progress=False)
    columns = ["config", "run", "task", "status", "p_verdict", "id_max_rel_err", "m_correct"]
    expected = pl.read_parquet(scored / "scores.parquet").select(columns)
    assert pl.read_parquet(tmp_path / "out" / "scores.parquet").select(columns).equals(expected)


def test_cli_scores_and_exits_zero(tmp_path, capsys, example_dir):
    assert main(["score", "--problems", str(example_dir), "--sweep", str(SWEEP), "--out", str(tmp_path),
                 "--executor", "local", "--no-progress"]) == 0
    assert "oracle" in capsys.readouterr().out
    assert (tmp_path / "summary.parquet").exists()


@pytest.mark.parametrize("sweep_text, suffix, message", [
    (None, ".jsonl", "not found"),
    ("a,b\n1,2\n", ".xlsx", "format"),
    ("config,run\nx,0\n", ".csv", "task"),
    ('{"config": "x", "task": "no-such-task", "phenomenal": "1"}\n', ".jsonl", "no row"),
])
def test_cli_unusable_input_exits_2_with_one_line(tmp_path, capsys, sweep_text, suffix, message, example_dir):
    sweep = tmp_path / f"sweep{suffix}"
    if sweep_text is not None:
        sweep.write_text(sweep_text)
    code = main(["score", "--problems", str(example_dir), "--sweep", str(sweep), "--out", str(tmp_path / "o"),
                 "--executor", "local"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0]


def _typo_sweep(tmp_path: Path) -> Path:
    """The example sweep with the oracle's orbit row renamed to a task that does not exist."""
    text = SWEEP.read_text().replace('"task": "circular-orbit-period"', '"task": "circular-orbit-perod"', 1)
    assert text != SWEEP.read_text()
    sweep = tmp_path / "typo.jsonl"
    sweep.write_text(text)
    return sweep


def test_rows_naming_an_unknown_task_are_a_warning_with_names(tmp_path, capsys, example_dir):
    out = tmp_path / "out"
    assert main(["score", "--problems", str(example_dir), "--sweep", str(_typo_sweep(tmp_path)), "--out", str(out),
                 "--executor", "local", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "fastscore: warning: 1 sweep row(s) name 1 task(s) not in the problem set " \
           "('circular-orbit-perod'): they were skipped" in err
    meta = json.loads((out / "meta.json").read_text())
    assert any("'circular-orbit-perod'" in w for w in meta["warnings"])
    assert meta["counts"]["rows_with_unknown_task"] == 1
    oracle = pl.read_parquet(out / "summary.parquet").filter(pl.col("config") == "oracle").row(0, named=True)
    assert oracle["sa_p"] == pytest.approx(7 / 8)  # the renamed row is a missing cell of run 0


def test_strict_stops_on_an_unknown_task_with_one_line(tmp_path, capsys, example_dir):
    out = tmp_path / "out"
    code = main(["score", "--problems", str(example_dir), "--sweep", str(_typo_sweep(tmp_path)), "--out", str(out),
                 "--executor", "local", "--no-progress", "--strict"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert err[0].startswith("fastscore score: error: 1 sweep row(s) name 1 task(s)")
    assert "'circular-orbit-perod'" in err[0] and "--strict" in err[0]
    assert not (out / "summary.parquet").exists()


def test_strict_passes_a_clean_sweep_and_rows_outside_a_task_selection(tmp_path, capsys, example_dir):
    tasks = tmp_path / "tasks.txt"
    tasks.write_text("michaelis-menten-rate\n")
    out = tmp_path / "out"
    assert main(["score", "--problems", str(example_dir), "--sweep", str(SWEEP), "--out", str(out), "--tasks",
                 str(tasks), "--executor", "local", "--no-progress", "--strict"]) == 0
    assert "not in the problem set" not in capsys.readouterr().err
    meta = json.loads((out / "meta.json").read_text())
    assert meta["counts"]["rows_with_unselected_task"] == meta["counts"]["rows_with_unknown_task"] > 0


def test_unknown_task_warning_names_the_most_frequent_first():
    from fastscore.run.job import unknown_task_warning
    assert unknown_task_warning({}) is None
    line = unknown_task_warning({"b": 1, "a": 5, "c": 2, "d": 1})
    assert line == "9 sweep row(s) name 4 task(s) not in the problem set ('a', 'c', 'b' and 1 more): " \
                   "they were skipped"


def test_cli_missing_problem_directory_exits_2(tmp_path, capsys):
    code = main(["score", "--problems", str(tmp_path / "none"), "--sweep", str(SWEEP), "--out", str(tmp_path)])
    assert code == 2 and "fastscore score: error:" in capsys.readouterr().err


HOSTILE = [
    "__import__('os').system('echo pwned')",
    "x**(10**10**10)",
    "(" * 10_000 + "S" + ")" * 10_000,
    "",
    "   ",
    "lambda: 1",
    "S.__class__",
    "exec('1')",
    "k3*E_T*S; import os",
    "1/0",
]


def test_hostile_submissions_each_get_a_row_and_the_run_goes_on(tmp_path, example_dir):
    rows = [{"config": "hostile", "run": 0, "task": "michaelis-menten-rate", "phenomenal": text} for text in HOSTILE]
    rows = [dict(r, run=i) for i, r in enumerate(rows)]
    rows.append({"config": "hostile", "run": len(rows), "task": "michaelis-menten-rate",
                 "phenomenal": "v = k3*E_T*S/((k2 + k3)/k1 + S)"})
    sweep = tmp_path / "hostile.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_sweep(example_dir, sweep, tmp_path / "out", executor="local", progress=False)
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("task") == "michaelis-menten-rate")
    assert scores.height == len(rows)
    bad = scores.filter(pl.col("run") < len(HOSTILE))
    assert (bad["status"] == "parse_error").all(), bad.select("run", "status", "error")
    assert bad["error"].is_not_null().all()
    assert scores.filter(pl.col("run") == len(HOSTILE))["p_equivalent"].to_list() == [True]


def test_cli_data_writes_the_splits_scoring_uses(tmp_path, example_dir):
    from fastscore.problems.formats import load_problems
    from fastscore.problems.splits import read_npz
    from fastscore.scoring.reference import build_reference
    assert main(["data", "--problems", str(example_dir), "--out", str(tmp_path)]) == 0
    problem = next(p for p in load_problems(example_dir) if p.task_id == "michaelis-menten-rate")
    written = read_npz(tmp_path / "michaelis-menten-rate.npz")
    used = build_reference(problem).splits
    assert written.variables == used.variables == ("v", "S", "E_T", "k1", "k2", "k3")
    for split in ("train", "id_test", "ood_test"):
        assert (getattr(written, split) == getattr(used, split)).all()


def test_cli_prepare_keeps_answers_private_unless_asked(tmp_path, example_dir):
    assert main(["prepare", "--problems", str(example_dir), "--out", str(tmp_path / "public")]) == 0
    view = (tmp_path / "public" / "vacancy-diffusion-variant-1-2" / "problem.json").read_text()
    for secret in ("Omega * p**2", "cv / (1 + 3", '"probes"', '"mutations"', '"intermediates"', "Mobile"):
        assert secret not in view
    assert (tmp_path / "public" / "vacancy-diffusion-variant-1-2" / "data_train.npy").exists()
    assert main(["prepare", "--problems", str(example_dir), "--out", str(tmp_path / "private"), "--save-answer"]) == 0
    assert "Omega" in (tmp_path / "private" / "vacancy-diffusion-variant-1-2" / "answer.json").read_text()
