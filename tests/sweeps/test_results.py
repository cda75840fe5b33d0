"""MechBench's published results layer as a sweep (``fastscore.sweeps.results``), the published
counting policy (``harness_p_num`` / ``harness_m_num``), fastscore's numeric P and M and
the pooled published table (``fastscore.outputs.published``)."""
from __future__ import annotations

import csv
import hashlib
import json
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from fastscore.cli import main
from fastscore.outputs.published import published
from fastscore.run.job import score_sweep
from fastscore.sweeps.mechbench_runs import ExperimentNames, is_run_tree
from fastscore.sweeps.read import read_sweep
from fastscore.sweeps.results import decide, is_results_tree, read_results, task_file_digests
from tests.support.mechbench_tasks import SMALL, orbit_task, write_task

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "mechbench-results"
ORIGINAL, VARIANT = "Toy Orbit - Original", "Toy Orbit - Variant 1-3"
REFERENCE = "\n".join(m["formula"] for m in orbit_task()["mechanism_model"])
WRONG = "grav = 2*6.674e-11*M/r**2\nomega**2*r = grav\nT = 2*pi/omega"
TIMEOUT = ("Codex probe failed: {'returncode': 0, 'timed_out': True, 'elapsed_seconds': 120.2, 'stage': 'probe'}; "
           "see /runs/probe/000-w")
RUNNER = "Codex probe failed: {'returncode': 1, 'timed_out': False, 'stage': 'probe'}"


@pytest.fixture(scope="module")
def tasks(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tasks")
    for name in (ORIGINAL, VARIANT):
        write_task(root, orbit_task(name))
    return root


def split(numeric, symbolic=None):
    return {"numerically_equivalent": numeric, "symbolically_equivalent": numeric if symbolic is None else symbolic,
            "mae": 0.0}


def probe(name, ok=True, numeric=(True, True), reply=None, error=None):
    item = {"probe": name, "ok": ok, "reply": reply if reply is not None else f"{name} = {name}",
            "expression": "x"}
    if ok:
        item["scores"] = {"train": split(numeric[0]), "id_test": split(numeric[0]), "ood_test": split(numeric[1])}
    if error is not None:
        item["error"] = error
    return item


def record(task, *, law=(True, True), probes=None, submission=REFERENCE, probe_count=2, **extra):
    """A record in the layout of the harness's export (provenance in experiment_provenance)."""
    phenomenal = {"train": split(law[0]), "id_test": split(law[0]), "ood_test": split(law[1]), "ok": True}
    evaluation = {"task_name": task, "phenomenal": phenomenal,
                  "mechanism_probes": probes if probes is not None else [probe("w"), probe("g", reply="g = g")],
                  "probe_count": probe_count}
    data = {"algorithm": "codex", "agent_seconds": 800.5, "evaluation_seconds": 3.25, "evaluation": evaluation,
            "ok": True, "submission": submission, "token_usage": {"input_tokens": 10, "output_tokens": 5,
                                                                  "total_tokens_observed": 15},
            "cost_in_USD": 0.5, "experiment_provenance": {"posthoc_not_an_original_deadline_submission": False,
                                                          "job": {"task_sha256": "0" * 64}}}
    for key, value in extra.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def write_record(root: Path, experiment: str, task: str, data, *, domain="physics", raw: bytes | None = None):
    path = root / experiment / domain / task.rpartition(" - ")[0] / f"{task}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(raw if raw is not None else json.dumps(data).encode())
    return path


def rows_by_file(root, **options):
    return {row["result_file"].split("/", 1)[1]: row for row in read_results(root, **options)}


# --- the reader ------------------------------------------------------------------------------

def test_the_sample_is_read_one_row_per_attempt():
    root = SAMPLE / "results"
    assert is_results_tree(root) and not is_run_tree(root)
    rows = list(read_results(root))
    assert len(rows) == 12
    cells = {(r["config"], r["run"]) for r in rows}
    assert cells == {("codex-cjl-deepseek-v4-flash-0731-low-coreset", 1),
                     ("codex-cjl-deepseek-v4-flash-0731-low-coreset", 2),
                     ("codex-cjl-deepseek-v4-flash-0731-low-coreset", 3),
                     ("codex-cjl-glm-5.3-flash-high-fullset", 1), ("codex-cjl-glm-5.3-flash-high-coreset", 2),
                     ("codex-cjl-glm-5.3-flash-high-coreset", 3)}
    first = next(r for r in rows if r["run"] == 1 and r["config"].startswith("codex-cjl-deep")
                 and r["task"].endswith("Original"))
    assert first["task"] == "Allosteric Regulation - Original" and first["results_domain"] == "biology"
    assert json.loads(first["probe_replies"]) == {"ts": "ts = substrate/(Km_eff + substrate)"}
    assert first["mechanism"].startswith("V0 = 7.443272\n")
    assert first["harness_task_sha256"] == hashlib.sha256(
        (SAMPLE / "tasks" / "Allosteric Regulation - Original.yaml").read_bytes()).hexdigest()
    assert (first["harness_posthoc"], first["tokens_total"], first["tokens_input"]) == (False, 1505856, 1464016)
    assert first["evaluation_seconds"] == pytest.approx(16.018720403313637)
    assert (first["harness_id_numeric"], first["harness_ood_symbolic"], first["harness_p_num"]) == (False, False, False)
    # one experiment folder is a results tree too, and its name gives config and run
    one = list(read_results(root / "codex-cjl-glm-5.3-flash-high-coreset-r3"))
    assert {(r["config"], r["run"]) for r in one} == {("codex-cjl-glm-5.3-flash-high-coreset", 3)}
    # a folder that holds a results folder (and tasks) is not itself a results tree
    assert not is_results_tree(SAMPLE)


def test_the_sample_records_decide_as_published():
    """The harness's booleans under the published policy, record by record: an answer
    timeout and an 'Expected one equality' reply are wrong probes; the law keeps its verdict."""
    got = {(r["config"].split("-")[2], r["run"], r["task"][-8:]): (r["harness_p_num"], r["harness_m_num"])
           for r in read_results(SAMPLE / "results")}
    assert got[("deepseek", 3, "Original")] == (True, False)
    assert got[("glm", 3, "Original")] == (True, False)
    assert got[("deepseek", 1, "-2-3-4-5")] == (False, False)  # t3: Expected one equality
    assert got[("glm", 1, "Original")] == (False, False)  # ts: answer timeout after 120 s
    assert sum(p for p, _ in got.values()) == 2 and not any(m for _, m in got.values())


def test_layouts_provenance_tokens_and_the_task_name(tmp_path):
    windows = record(VARIANT, experiment_provenance=None, token_usage=None,
                     used_token={"input": 7, "output": 3, "reason": None, "total": 10},
                     source={"task_definition_at_import": {"path": "C:\\tasks\\x.yaml", "file_sha256": "A" * 64}})
    write_record(tmp_path, "claude-r2", VARIANT, windows)
    stem_only = record(ORIGINAL, used_token=1234, token_usage=None)
    del stem_only["evaluation"]["task_name"]
    write_record(tmp_path, "claude-r2", ORIGINAL, stem_only)
    rows = rows_by_file(tmp_path)
    row = rows[f"physics/Toy Orbit/{VARIANT}.json"]
    assert (row["config"], row["run"], row["harness_task_sha256"], row["harness_posthoc"]) == (
        "claude", 2, "a" * 64, None)
    assert (row["tokens_input"], row["tokens_output"], row["tokens_total"], row["cost_usd"]) == (7, 3, 10, 0.5)
    other = rows[f"physics/Toy Orbit/{ORIGINAL}.json"]
    assert other["task"] == ORIGINAL and other["tokens_total"] == 1234 and other["tokens_input"] is None


@pytest.mark.parametrize(("changes", "expected"), [
    ({}, (True, True)),
    ({"law": (True, False)}, (False, True)),
    ({"law": (None, True)}, (None, True)),  # a verdict missing: unknown, never false
    ({"probes": [probe("w", numeric=(True, False)), probe("g")]}, (True, False)),
    ({"probes": [probe("w", ok=False, error=TIMEOUT), probe("g")]}, (True, False)),  # answer timeout: wrong
    ({"probes": [probe("w", ok=False, error="Expected one equality: 'w is 3'"), probe("g")]}, (True, False)),
    ({"probes": [probe("w", ok=False, error=RUNNER), probe("g")]}, (True, None)),  # runner failure: unknown
    ({"probes": [probe("w", ok=False, error="Evaluation timed out after 60 s"), probe("g")]}, (True, False)),
    ({"probes": [probe("w", ok=False), probe("g")]}, (True, None)),  # failed without a word: unknown
    ({"probes": [probe("w")]}, (True, None)),  # one of two planned probes recorded: unknown
    ({"probes": [probe("w")], "probe_count": 1}, (True, True)),
    ({"probes": [probe("w", ok=True, numeric=(None, True)), probe("g")]}, (True, None)),
])
def test_the_counting_policy_on_records_with_an_evaluation(tmp_path, changes, expected):
    write_record(tmp_path, "x-r1", VARIANT, record(VARIANT, **changes))
    (row,) = read_results(tmp_path)
    assert (row["harness_p_num"], row["harness_m_num"]) == expected, row["harness_policy"]


@pytest.mark.parametrize(("fields", "expected", "why"), [
    ({"error": "Expression is too complex.", "error_type": "ValueError"}, (False, False), "validation"),
    ({"error": "bad formula", "error_type": "ValidationError"}, (False, False), "validation"),
    ({"error": "Empty submission", "error_type": "RuntimeError"}, (False, False), "validation"),
    ({"error": "No nonempty current submission", "error_type": "RuntimeError"}, (None, None), "no submission"),
    ({"error": "upstream 502 from the provider", "error_type": "APIError"}, (None, None), "failure"),
    ({}, (None, None), "no evaluation"),
])
def test_the_counting_policy_on_error_records(tmp_path, fields, expected, why):
    data = {"algorithm": "codex", "ok": False, "submission": REFERENCE, **fields}
    write_record(tmp_path, "x-r1", VARIANT, data)
    (row,) = read_results(tmp_path)
    assert (row["harness_p_num"], row["harness_m_num"]) == expected and why in row["harness_policy"]
    assert row["harness_ok"] is False and row["task"] == VARIANT


def test_a_law_the_harness_cannot_evaluate_makes_p_and_m_wrong():
    evaluation = {"phenomenal": {"ok": False, "error": "Multiple admissible branches"}, "mechanism_probes": []}
    assert decide({"ok": True}, evaluation, {}, 2, True)[:2] == (False, False)
    assert decide({"error": "No nonempty current submission"}, None, {}, None, False)[:2] == (None, None)


def test_bad_files_give_rows_that_say_why(tmp_path):
    write_record(tmp_path, "x-r1", VARIANT, None, raw=b"{not json")
    write_record(tmp_path, "x-r1", ORIGINAL, None, raw=b'{"submission": "\xff\xfe"}')
    write_record(tmp_path, "x-r2", VARIANT, None, raw=b"[1, 2]")
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps(record(ORIGINAL)))
    link = tmp_path / "x-r2" / "physics" / "Toy Orbit" / f"{ORIGINAL}.json"
    os.symlink(outside, link)
    rows = {(r["run"], r["task"]): r for r in read_results(tmp_path)}
    assert "is not JSON" in rows[(1, VARIANT)]["read_error"]
    assert "not UTF-8" in rows[(1, ORIGINAL)]["read_error"]
    assert "not a JSON object" in rows[(2, VARIANT)]["read_error"]
    assert "symlink" in rows[(2, ORIGINAL)]["read_error"]
    assert all(r["record_error"] == r["read_error"] and r["harness_p_num"] is None for r in rows.values())


# --- scored end to end -------------------------------------------------------------------------

def score(tasks, sweep, out, **options):
    score_sweep(tasks, sweep, out, executor="local", settings=SMALL, **options)
    return (pl.read_parquet(out / "scores.parquet"), pl.read_parquet(out / "probes.parquet"),
            json.loads((out / "meta.json").read_text()), pl.read_parquet(out / "published.parquet"))


@pytest.mark.slow
def test_a_results_tree_is_scored_with_bad_input_unknown_tasks_and_task_versions(tasks, tmp_path):
    root = tmp_path / "results"
    good = record(VARIANT, probes=[probe("w", reply="w = w"), probe("g", reply="g = M*6.674e-11/r**2")])
    good["experiment_provenance"]["job"]["task_sha256"] = hashlib.sha256(
        (tasks / "physics" / f"{VARIANT}.yaml").read_bytes().replace(b"\n", b"\r\n")).hexdigest()  # CRLF: same
    write_record(root, "m-r1", VARIANT, good)
    write_record(root, "m-r1", ORIGINAL, record(ORIGINAL, law=(False, False), submission=WRONG,
                                                probes=[probe("w", ok=False, error=TIMEOUT), probe("g")]))
    write_record(root, "m-r2", VARIANT, {"ok": False, "error": "No nonempty current submission",
                                         "error_type": "RuntimeError"})
    write_record(root, "m-r2", ORIGINAL, None, raw=b"\x00\x01 not json")
    write_record(root, "m-r2", "Toy Orbit - Variant 9", record("Toy Orbit - Variant 9"))
    write_record(root / "_summaries", "x", VARIANT, record(VARIANT))  # derived tables, never attempts
    (root / "m-r1" / "setup.json").write_text(json.dumps({"model": "m"}))
    scores, probes, meta, table = score(tasks, root, tmp_path / "out")
    got = {(r["run"], r["task"]): r for r in scores.iter_rows(named=True)}
    assert {k: v["status"] for k, v in got.items()} == {
        (1, VARIANT): "ok", (1, ORIGINAL): "ok", (2, VARIANT): "missing", (2, ORIGINAL): "parse_error",
        (2, "Toy Orbit - Variant 9"): "no_task"}
    ok, wrong = got[(1, VARIANT)], got[(1, ORIGINAL)]
    assert (ok["p_equivalent"], ok["p_num"], ok["m_num"], ok["harness_p_num"], ok["harness_m_num"]) == (
        True, True, True, True, True)
    assert ok["task_sha_mismatch"] is False and wrong["task_sha_mismatch"] is True  # "0" * 64 is no version
    assert (wrong["p_num"], wrong["m_num"], wrong["harness_p_num"], wrong["harness_m_num"]) == (
        False, False, False, False)
    missing, unread, no_task = got[(2, VARIANT)], got[(2, ORIGINAL)], got[(2, "Toy Orbit - Variant 9")]
    assert "No nonempty current submission" in missing["error"] and missing["p_num"] is None
    assert missing["harness_p_num"] is None and missing["harness_ok"] is False
    assert "is not JSON" in unread["error"] and unread["p_num"] is None and unread["harness_p_num"] is None
    assert no_task["harness_p_num"] is True and no_task["p_num"] is None and no_task["p_equivalent"] is None
    assert (no_task["domain"], no_task["n_mutations"], no_task["family"]) == ("physics", 1, "Toy Orbit")
    assert any("1 attempt(s) name a task not in the problem set" in w for w in meta["warnings"])
    assert any("1 attempt(s) ran against another version" in w for w in meta["warnings"])
    assert meta["counts"]["task_sha_mismatches"] == 1
    # the probes table carries the harness's probe record beside fastscore's verdict
    w = probes.filter((pl.col("run") == 1) & (pl.col("task") == ORIGINAL) & (pl.col("probe") == "w")).row(
        0, named=True)
    assert (w["harness_probe_ok"], w["harness_probe_num"], w["harness_probe_reply"]) == (False, False, "w = w")
    assert "timed_out" in w["harness_probe_error"]
    # fastscore's rates count its own tasks only; the harness's pooled counts keep the no_task row
    summary = pl.read_parquet(tmp_path / "out" / "summary.parquet").row(0, named=True)
    assert summary["n_tasks"] == 2 and summary["harness_p_num"] == pytest.approx(0.5)  # run 2 judged none
    strata = pl.read_parquet(tmp_path / "out" / "strata.parquet").filter(pl.col("stratum") == "variant_class")
    assert dict(strata.select("value", "p_num").rows()) == {"multi": 1.0, "original": 0.0}  # no_task: not here
    cell = {(r["source"], r["measure"]): r for r in table.filter(
        (pl.col("domain") == "all") & (pl.col("variant") == "all")).iter_rows(named=True)}
    assert [cell[("harness", "P")][k] for k in ("passed", "judged", "planned", "missing")] == [2, 3, 5, 2]
    assert [cell[("fastscore", "P")][k] for k in ("passed", "judged", "planned", "missing")] == [1, 2, 4, 2]
    assert [cell[("harness", "M")][k] for k in ("passed", "judged", "planned")] == [2, 3, 5]
    assert cell[("harness", "P")]["rate"] == pytest.approx(2 / 3)
    assert cell[("harness", "P")]["confirmed_lower_bound"] == pytest.approx(2 / 5)
    multi = table.filter((pl.col("source") == "harness") & (pl.col("variant") == "multi") &
                         (pl.col("measure") == "P") & (pl.col("domain") == "physics")).row(0, named=True)
    assert (multi["passed"], multi["judged"], multi["planned"]) == (1, 1, 2)
    assert main(["report", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "## Published numeric rates (pooled over runs)" in report and "66.67%" in report


def test_the_default_name_rule_and_a_mapping_pool_replicates(tmp_path):
    names = ExperimentNames()
    assert [names.read(n) for n in ("glm-coreset-r3", "gpt_run2", "glm-r1x", "fullset")] == [
        ("glm-coreset", 3), ("gpt", 2), ("glm-r1x", 0), ("fullset", 0)]
    mapping = tmp_path / "map.csv"
    mapping.write_text("exp_name,config,run\n"
                       "codex-cjl-glm-5.3-flash-high-fullset-r1,glm_core,1\n"
                       "codex-cjl-glm-5.3-flash-high-coreset-r2,glm_core,2\n"
                       "codex-cjl-glm-5.3-flash-high-coreset-r3,glm_core,3\n")
    frames = list(read_sweep(SAMPLE / "results", experiments=ExperimentNames.from_file(mapping)))
    rows = pl.concat(frames)
    assert rows.height == 6 and set(rows["config"]) == {"glm_core"} and sorted(set(rows["run"])) == [1, 2, 3]


def test_task_file_digests_accept_either_line_end(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_bytes(b"a: 1\nb: 2\n")
    digests = task_file_digests(path)
    assert hashlib.sha256(b"a: 1\r\nb: 2\r\n").hexdigest() in digests
    assert hashlib.sha256(b"a: 1\nb: 2\n").hexdigest() in digests
    assert hashlib.sha256(b"a: 1\nb: 3\n").hexdigest() not in digests
    assert task_file_digests(tmp_path / "none.yaml") == frozenset()
    # a record in MechBench's Windows layout names the CRLF digest of the Original task file
    assert "6ff62b75ddff021f17e5fbeb269b90c2f727dd698addd89cb84ad98b56e27d7c" in task_file_digests(
        SAMPLE / "tasks" / "Allosteric Regulation - Original.yaml")


# --- pooling as published -----------------------------------------------------------------------

def _published_rows(name: str) -> list[dict]:
    with open(SAMPLE / "_summaries" / "cjl-fullplan-20260924" / name, encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize("name", ["summary_24.csv", "variants_72.csv"])
def test_pooling_reproduces_the_published_rows_from_their_counts(name):
    """Every published row, rebuilt as attempts (passed true, judged - passed false,
    missing null) spread over three runs, pools to the row's own numbers."""
    rows = _published_rows(name)
    assert len(rows) == {"summary_24.csv": 24, "variants_72.csv": 72}[name]
    attempts = []
    for index, row in enumerate(rows):
        passed, judged, planned = int(row["passed"]), int(row["judged"]), int(row["planned"])
        n_mutations = {"all": 3, "original": 0, "single": 1, "multi": 2}[row["variant"]]
        column = "harness_p_num" if row["measure"] == "P" else "harness_m_num"
        values = [True] * passed + [False] * (judged - passed) + [None] * (planned - judged)
        for number, value in enumerate(values):
            attempts.append({"config": f"{row['scope']}/{index}", "run": number % 3 + 1, "task": f"t{number}",
                             "status": "ok", "domain": row["domain"], "n_mutations": n_mutations,
                             "harness_p_num": value if column == "harness_p_num" else True,
                             "harness_m_num": value if column == "harness_m_num" else True,
                             "p_num": None, "m_num": None})
    table = published(pl.DataFrame(attempts, infer_schema_length=None)).filter(
        (pl.col("source") == "harness") & (pl.col("domain") != "all"))
    for index, row in enumerate(rows):
        variant = "all" if row["variant"] == "all" else row["variant"]
        got = table.filter((pl.col("config") == f"{row['scope']}/{index}") & (pl.col("variant") == variant) &
                           (pl.col("measure") == row["measure"])).row(0, named=True)
        for key in ("passed", "judged", "planned", "missing"):
            assert got[key] == int(row[key]), (row["id"], key)
        assert got["rate"] == pytest.approx(float(row["rate"]), abs=1e-15)
        assert 100 * got["rate"] == pytest.approx(float(row["percentage"]), abs=1e-12)
        assert got["confirmed_lower_bound"] == pytest.approx(float(row["confirmed_lower_bound_rate_all_planned"]))


def test_the_sample_attempts_fit_the_published_counts_of_their_cells(tmp_path):
    """The sample holds a few of the attempts each biology cell pools: their passes and
    fails under the policy cannot exceed the cell's passed and judged - passed."""
    mapping = tmp_path / "map.csv"
    mapping.write_text("".join(f"codex-cjl-deepseek-v4-flash-0731-low-coreset-r{i},ds_core_3runs,{i}\n"
                               for i in (1, 2, 3)) +
                       "codex-cjl-glm-5.3-flash-high-fullset-r1,glm_core_3runs,1\n" +
                       "".join(f"codex-cjl-glm-5.3-flash-high-coreset-r{i},glm_core_3runs,{i}\n" for i in (2, 3)))
    rows = list(read_results(SAMPLE / "results", ExperimentNames.from_file(mapping)))
    scores = pl.DataFrame([{**{k: r[k] for k in ("config", "run", "task", "harness_p_num", "harness_m_num")},
                            "results_domain": r["results_domain"], "domain": None, "status": "ok",
                            "n_mutations": 0 if r["task"].endswith("Original") else 5, "p_num": None, "m_num": None}
                           for r in rows], infer_schema_length=None)
    mine = {(r["config"], r["variant"], r["measure"]): r for r in published(scores).filter(
        (pl.col("source") == "harness") & (pl.col("domain") == "biology")).iter_rows(named=True)}
    checked = 0
    for row in _published_rows("variants_72.csv"):
        key = (row["scope"], row["variant"], row["measure"])
        if row["domain"] != "biology" or key not in mine:
            continue
        passed, failed = mine[key]["passed"], mine[key]["judged"] - mine[key]["passed"]
        assert passed <= int(row["passed"]) and failed <= int(row["judged"]) - int(row["passed"]), row["id"]
        checked += 1
    assert checked == 8  # two scopes x (original, multi) x (P, M)


@pytest.mark.slow
def test_the_sample_is_scored_end_to_end(tmp_path):
    scores, probes, meta, table = score(SAMPLE / "tasks", SAMPLE / "results", tmp_path / "out")
    assert scores.height == 12 and meta["counts"]["status"] == {"ok": 12}
    assert meta["counts"]["task_sha_mismatches"] == 0 and not scores["task_sha_mismatch"].any()
    # fastscore's numeric P agrees with the harness's on every attempt of the sample
    assert scores["p_num"].to_list() == scores["harness_p_num"].to_list()
    assert scores["p_num"].sum() == 2 and scores["harness_m_num"].sum() == 0
    # five answer timeouts and one reply that is no equation (recorded in its error only) have no reply
    assert probes.height == 18 and probes["harness_probe_reply"].null_count() == 6
    assert probes.filter(pl.col("harness_probe_reply").is_null())["probe_equivalent"].not_().all()
    harness = table.filter((pl.col("source") == "harness") & (pl.col("domain") == "biology") &
                           (pl.col("variant") == "original") & (pl.col("measure") == "P"))
    assert harness.select(pl.col("passed").sum(), pl.col("judged").sum()).row(0) == (2, 6)
    assert main(["report", str(tmp_path / "out")]) == 0
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "verdicts for 12 laws and 18 probe answers" in report


@pytest.mark.slow
def test_a_copy_of_a_sample_with_a_changed_task_file_is_marked(tmp_path):
    tasks = tmp_path / "tasks"
    shutil.copytree(SAMPLE / "tasks", tasks)
    path = tasks / "Allosteric Regulation - Original.yaml"
    path.write_text(path.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    root = tmp_path / "results"
    shutil.copytree(SAMPLE / "results" / "codex-cjl-glm-5.3-flash-high-coreset-r3", root / "glm-r3")
    scores, _, meta, _ = score(tasks, root, tmp_path / "out")
    marked = dict(scores.select("task", "task_sha_mismatch").iter_rows())
    assert marked == {"Allosteric Regulation - Original": True, "Allosteric Regulation - Variant 1-2-3-4-5": False}
    assert meta["counts"]["task_sha_mismatches"] == 1


def test_large_records_and_submissions_are_read(tmp_path):
    big = record(VARIANT, submission=REFERENCE + "\n" + "# padding\n" * 15_000)  # about 150 KB
    big["padding"] = "x" * 1_500_000  # a record over 1 MB
    write_record(tmp_path, "x-r1", VARIANT, big)
    (row,) = read_results(tmp_path)
    assert row["read_error"] is None and row["mechanism"] == REFERENCE and row["harness_p_num"] is True


@pytest.mark.slow
def test_a_rescore_resumes_every_results_row(tasks, tmp_path):
    root = tmp_path / "results"
    write_record(root, "m-r1", VARIANT, record(VARIANT))
    write_record(root, "m-r1", ORIGINAL, {"ok": False, "error": "No nonempty current submission"})
    write_record(root, "m-r1", "Toy Orbit - Variant 9", record("Toy Orbit - Variant 9"))
    first, _, _, _ = score(tasks, root, tmp_path / "out")
    again, _, meta, _ = score(tasks, root, tmp_path / "out")
    assert meta["counts"]["resumed_cells"] == 3 and meta["counts"]["scored_cells"] == 0
    columns = ["run", "task", "status", "p_num", "harness_p_num", "harness_m_num"]
    assert again.select(columns).rows() == first.select(columns).rows()
    assert sorted(first["status"]) == ["missing", "no_task", "ok"]
