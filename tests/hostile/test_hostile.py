"""Hostile inputs' reproducers, each with its clean outcome: bounded work, a counted or
reported loss, or one line and exit 2; never a traceback, a hang or a silent loss.

Small inputs live in ``inputs/``; large, binary or filesystem ones (links, FIFOs) are
built here.  Cases that hung or exhausted memory before their fix run in a child
process under a generous timeout (and a memory limit), only so that a regression
fails instead of stalling the suite."""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fastscore.cli import main
from fastscore.run.job import score_sweep
from fastscore.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
INPUTS = Path(__file__).resolve().parent / "inputs"
PROBLEMS = ROOT / "problems" / "example"
TASK = "circular-orbit-period"
LAW = "T = 2*pi*r*sqrt(r/(G*M))"
BOUND = 180  # seconds: only to keep a regression from hanging the suite


def _score(capsys, sweep: Path, out: Path, *options: str) -> tuple[int, list[str]]:
    """``fastscore score`` in this process: exit code and the lines of stderr."""
    code = main(["score", "--problems", str(PROBLEMS), "--sweep", str(sweep), "--out", str(out),
                 "--executor", "local", "--no-progress", *options])
    return code, capsys.readouterr().err.strip().splitlines()


def _child(code: str, *, timeout: float = BOUND, memory: int = 3 << 30) -> subprocess.CompletedProcess:
    """Run Python ``code`` in a child process, bounded in time and address space."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limit, cwd=ROOT)


def _one_error_line(code: int, err: list[str], *fragments: str) -> None:
    assert code == 2, err
    assert len(err) == 1 and err[0].startswith("fastscore score: error: "), err
    for fragment in fragments:
        assert fragment in err[0], err


# ---------------------------------------------------------------- sweeps that are unusable: one line, exit 2

@pytest.mark.parametrize(("name", "fragments"), [
    ("list-config.jsonl", (":2: column config holds ['x', 'y'], not text",)),
    ("huge-run.jsonl", (":1: column run holds 1180591620717411303424, not a run index",)),
    ("duplicate-columns.csv", ("duplicate column name(s) 'config'",)),
    ("unterminated-quote.csv", ("unterminated quoted field",)),
])
def test_unusable_sweep_files_give_one_line(capsys, tmp_path, name, fragments):
    _one_error_line(*_score(capsys, INPUTS / name, tmp_path / "out"), *fragments)


def test_json_nested_100000_deep_gives_one_line(capsys, tmp_path):
    sweep = tmp_path / "deep.jsonl"
    sweep.write_text(json.dumps({"config": "a", "task": TASK, "phenomenal": LAW})[:-1]
                     + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}\n")
    _one_error_line(*_score(capsys, sweep, tmp_path / "out"), ":1: JSON nested too deeply")


def test_duplicate_parquet_columns_and_a_corrupt_page_give_one_line(capsys, tmp_path):
    duplicated = tmp_path / "duplicated.parquet"
    pq.write_table(pa.table([pa.array(["a"]), pa.array([TASK]), pa.array(["b"])], names=["config", "task", "config"]),
                   duplicated)
    _one_error_line(*_score(capsys, duplicated, tmp_path / "o1"), "duplicate column name(s) 'config'")
    corrupt = tmp_path / "corrupt.parquet"
    pl.DataFrame({"config": ["a"], "task": [TASK], "phenomenal": [LAW]}).write_parquet(corrupt)
    data = bytearray(corrupt.read_bytes())
    data[4:40] = bytes(b ^ 0xFF for b in data[4:40])  # the first page header
    corrupt.write_bytes(bytes(data))
    _one_error_line(*_score(capsys, corrupt, tmp_path / "o2"), "unreadable Parquet data")


# ---------------------------------------------------------------- rows set aside: counted and reported

@pytest.mark.slow
@pytest.mark.parametrize("name", ["null-config.jsonl", "missing-task.jsonl"])
def test_rows_without_config_or_task_are_skipped_and_counted(capsys, tmp_path, name):
    code, err = _score(capsys, INPUTS / name, tmp_path / "out")
    assert code == 0 and err == ["fastscore: warning: 1 sweep row(s) without a config or task were skipped"]
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["counts"]["rows_without_config_or_task"] == 1 and meta["warnings"] == [err[0][20:]]
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet")
    assert set(scores["config"]) == {"a"}
    # the rerun resumes cleanly too (it crashed again on every rerun)
    assert _score(capsys, INPUTS / name, tmp_path / "out")[0] == 0


def test_a_late_text_value_in_a_cost_column_is_reported(capsys, tmp_path):
    sweep = tmp_path / "late.csv"
    sweep.write_text("config,task,phenomenal,cost\n" + "".join(f"c{i},{TASK},{LAW},{i}.5\n" for i in range(300))
                     + f"z,{TASK},{LAW},unknown\n")
    code, err = _score(capsys, sweep, tmp_path / "out")
    assert code == 0 and err == ["fastscore: warning: column 'cost' mixes numbers and text (1 values are not "
                                 "numbers): it is left out of the cost figures"]
    meta = json.loads((tmp_path / "out" / "meta.json").read_text())
    assert meta["counts"]["extra_columns_with_text"] == {"cost": 1}


# ---------------------------------------------------------------- directory sweeps read only the tree's own files

def _tree(root: Path, outside: Path) -> Path:
    """A sweep tree with a good submission, links out of the tree (a secret file,
    /dev/zero, a folder), a FIFO and an oversized file."""
    outside.mkdir()
    (outside / "secret.txt").write_text("T = root:x:0:0:the secret\n")
    elsewhere = outside / "cfg" / "0" / TASK
    elsewhere.mkdir(parents=True)
    (elsewhere / "submission.txt").write_text(LAW)
    run = root / "cfg" / "0"
    for task in ("circular-orbit-period", "michaelis-menten-rate", "vacancy-diffusion-original",
                 "vacancy-diffusion-variant-1-2"):
        (run / task).mkdir(parents=True)
    (run / TASK / "submission.txt").write_text(LAW)
    (run / "michaelis-menten-rate" / "submission.txt").symlink_to(outside / "secret.txt")
    (run / "vacancy-diffusion-original" / "submission.txt").symlink_to("/dev/zero")
    os.mkfifo(run / "vacancy-diffusion-variant-1-2" / "submission.txt")
    (root / "cfg" / "1" / TASK).mkdir(parents=True)
    (root / "cfg" / "1" / TASK / "submission.txt").write_text("T = " + "r + " * 300_000 + "r")
    (root / "linked").symlink_to(outside / "cfg")
    (root / "cfg" / "2").symlink_to(outside / "cfg" / "0")
    return root


@pytest.mark.slow
def test_a_directory_sweep_reads_only_regular_files_inside_the_tree(tmp_path):
    tree = _tree(tmp_path / "tree", tmp_path / "outside")
    script = (f"from fastscore.run.job import score_sweep\n"
              f"score_sweep({str(PROBLEMS)!r}, {str(tree)!r}, {str(tmp_path / 'out')!r}, executor='local', "
              "progress=False)\n")
    result = _child(script)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [
        "fastscore: warning: 4 submission(s) that could not be read (a folder's files, a row's text; "
        "e.g. submission.txt is a symbolic link: not read): parse_error rows"]
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("status") != "missing")
    errors = dict(zip(zip(scores["run"], scores["task"]), scores["error"]))
    assert set(scores["config"]) == {"cfg"} and set(scores["run"]) == {0, 1}  # no linked config or run
    assert errors == {
        (0, TASK): None,
        (0, "michaelis-menten-rate"): "submission.txt is a symbolic link: not read",
        (0, "vacancy-diffusion-original"): "submission.txt is a symbolic link: not read",
        (0, "vacancy-diffusion-variant-1-2"): "submission.txt is not a regular file: not read",
        (1, TASK): "submission.txt is 1200005 bytes, more than 1048576: not read",
    }
    assert not any("secret" in (e or "") for e in scores["error"])


# ---------------------------------------------------------------- problem files

@pytest.mark.slow
def test_a_billion_laughs_problem_name_is_refused_at_once(tmp_path):
    problems = tmp_path / "problems"
    problems.mkdir()
    shutil.copy(INPUTS / "billion-laughs.yaml", problems / "laughs.yaml")
    result = _child(f"from fastscore.cli import main\nraise SystemExit(main(['validate', '--problems', "
                    f"{str(problems)!r}]))\n", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"fastscore validate: error: {problems / 'laughs.yaml'}: the document holds more than 100,000 values "
        "once its aliases are expanded"]


# ---------------------------------------------------------------- settings and the command line

@pytest.mark.parametrize(("options", "fragment"), [
    (("--rtol", "-1"), "--rtol must be a finite number in [1e-15, 0.5], got -1.0"),
    (("--rtol", "nan"), "--rtol must be a finite number in [1e-15, 0.5], got nan"),
    (("--points", "0"), "--n-points must be an integer in [1, 10000000], got 0"),
    (("--acc-tol", "inf"), "--acc-tol must be a finite number"),
    (("--workers", "0"), "workers must be a positive integer, got 0"),
])
def test_meaningless_settings_are_refused(capsys, tmp_path, options, fragment):
    _one_error_line(*_score(capsys, INPUTS / "null-config.jsonl", tmp_path / "out", *options), fragment)


def test_settings_are_checked_for_python_callers_too():
    with pytest.raises(ValueError, match="setting rtol must be a finite number"):
        Settings(rtol=float("nan"))
    with pytest.raises(ValueError, match="setting n_points must be an integer"):
        Settings(n_points=2.5)
    assert Settings(rtol=1e-9, n_points=1).n_points == 1


@pytest.mark.slow
def test_an_unreachable_ray_address_fails_within_seconds(tmp_path):
    script = (f"from fastscore.cli import main\nraise SystemExit(main(['score', '--problems', {str(PROBLEMS)!r}, "
              f"'--sweep', {str(INPUTS / 'null-config.jsonl')!r}, '--out', {str(tmp_path / 'out')!r}, "
              "'--address', '127.0.0.1:9']))\n")
    result = _child(script, timeout=60, memory=8 << 30)
    assert result.returncode == 2, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [
        "fastscore score: error: cannot reach a Ray cluster at 127.0.0.1:9: connection refused"]


# ---------------------------------------------------------------- the output directory

@pytest.mark.slow
def test_a_second_run_on_the_same_out_is_refused_while_the_first_runs(capsys, tmp_path):
    from fastscore.run.job import _locked
    out = tmp_path / "out"
    with _locked(out):  # as a first run holds it
        code, err = _score(capsys, INPUTS / "null-config.jsonl", out)
    _one_error_line(code, err, f"{out} is in use by another fastscore score run (process {os.getpid()})")
    assert not (out / ".parts").exists()
    assert _score(capsys, INPUTS / "null-config.jsonl", out)[0] == 0  # released


@pytest.mark.slow
def test_a_full_disk_leaves_the_old_tables_whole_and_gives_one_line(capsys, tmp_path, monkeypatch):
    out = tmp_path / "out"
    sweep = INPUTS / "null-config.jsonl"
    assert _score(capsys, sweep, out)[0] == 0
    before = (out / "scores.parquet").read_bytes()

    def full(self, path, *args, **kwargs):
        Path(path).write_bytes(b"PAR1 truncated")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(pl.LazyFrame, "sink_parquet", full)
    code, err = _score(capsys, sweep, out, "--rtol", "1e-7")  # a new setting: everything rescored
    _one_error_line(code, err, "No space left on device")
    assert (out / "scores.parquet").read_bytes() == before
    assert not list(out.glob(".*.tmp"))


def test_a_read_only_out_gives_one_line(capsys, tmp_path, monkeypatch):
    def read_only(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "mkdir", read_only)
    _one_error_line(*_score(capsys, INPUTS / "null-config.jsonl", tmp_path / "out"), "Permission denied")


@pytest.mark.slow
def test_ctrl_c_on_the_command_gives_one_line_and_exit_130_and_the_rerun_resumes_exactly(tmp_path):
    """A real SIGINT to the whole process group, as a terminal's Ctrl-C, mid-run."""
    rows = [{"config": f"c{i}", "run": 0, "task": TASK, "phenomenal": f"T = 2*pi*r*sqrt(r/(G*M))*(1 + {i}e-12)"}
            for i in range(3000)]
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    command = [sys.executable, "-m", "fastscore.cli", "score", "--problems", str(PROBLEMS), "--sweep", str(sweep),
               "--executor", "local", "--out"]
    child = subprocess.Popen([*command, str(tmp_path / "out")], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             text=True, start_new_session=True, cwd=ROOT)
    parts = tmp_path / "out" / ".parts"
    deadline = time.monotonic() + BOUND
    while child.poll() is None and not (parts / "state.json").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)  # scoring under way
    os.killpg(child.pid, 2)
    _, err = child.communicate(timeout=BOUND)
    if child.returncode == 0:
        pytest.skip("the run finished before the interrupt")
    assert child.returncode == 130 and err.strip().splitlines() == [
        "fastscore score: interrupted; the rows scored so far are kept: re-run the same command to resume"]
    assert subprocess.run([*command, str(tmp_path / "out")], capture_output=True, cwd=ROOT,
                          timeout=BOUND).returncode == 0
    assert subprocess.run([*command, str(tmp_path / "whole")], capture_output=True, cwd=ROOT,
                          timeout=BOUND).returncode == 0
    for table in ("scores", "probes", "summary", "strata"):
        resumed, whole = (pl.read_parquet(tmp_path / d / f"{table}.parquet") for d in ("out", "whole"))
        if table == "scores":
            resumed, whole = resumed.drop("parse_solve_seconds"), whole.drop("parse_solve_seconds")
        assert resumed.equals(whole), table


@pytest.mark.slow
def test_ctrl_c_gives_one_line_and_exit_130_and_the_rerun_resumes(capsys, tmp_path, monkeypatch):
    from fastscore.run.parts import PartStore
    out = tmp_path / "out"
    original = PartStore.add

    def interrupted(self, *args):
        raise KeyboardInterrupt
    monkeypatch.setattr(PartStore, "add", interrupted)
    code, err = _score(capsys, INPUTS / "null-config.jsonl", out)
    assert code == 130 and err == ["fastscore score: interrupted; the rows scored so far are kept: "
                                   "re-run the same command to resume"]
    monkeypatch.setattr(PartStore, "add", original)
    assert _score(capsys, INPUTS / "null-config.jsonl", out)[0] == 0


# ---------------------------------------------------------------- constants beyond float64

def test_a_constant_beyond_float64_is_a_parse_error(tmp_path):
    rows = [{"config": "a", "run": i, "task": TASK, "phenomenal": text}
            for i, text in enumerate(["T = 1e400*r", "T = exp(700)*exp(700)*r", LAW])]
    sweep = tmp_path / "s.jsonl"
    sweep.write_text("".join(json.dumps(r) + "\n" for r in rows))
    score_sweep(PROBLEMS, sweep, tmp_path / "out", executor="local", progress=False)
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("task") == TASK).sort("run")
    assert scores["status"].to_list() == ["parse_error", "parse_error", "ok"]
    assert "beyond the float64 range" in scores["error"][0] and "not a finite real number" in scores["error"][1]


# ---------------------------------------------------------------- the report

@pytest.mark.slow
def test_the_report_shows_any_config_name_and_26_configs_legibly(tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    from fastscore.outputs import tables
    from fastscore.report.document import DOMAIN_FIGURE, MUTATION_FIGURE, write_report
    names = ["task", r"$\frac{$", "_hidden"] + [f"cfg-{i:02d}" for i in range(23)]
    rows = [{"config": name, "run": run, "task": f"t{i}", "domain": ("physics", "biology")[i % 2],
             "n_mutations": i % 3, "status": "ok", "p_equivalent": (i + run + k) % 3 > 0, "m_correct": i % 2 == 0,
             "n_probes": 1, "id_acc": i % 2 == 0, "ood_acc": False}
            for k, name in enumerate(names) for run in range(2) for i in range(6)]
    out = tmp_path / "scored"
    out.mkdir()
    tables.frame(rows, tables.SCORE_SCHEMA).write_parquet(out / "scores.parquet")
    figures = {}
    monkeypatch.setattr(Figure, "savefig", lambda self, path, **kw: figures.setdefault(Path(path).name, self))
    markdown = write_report(out).read_text()
    assert "| task |" in markdown and "| _hidden |" in markdown
    for name in (MUTATION_FIGURE, DOMAIN_FIGURE):
        figure = figures[name]
        figure.draw_without_rendering()  # lays out and measures the text: mathtext fails on an unescaped '$'
        legend, = figure.legends
        assert [text.get_text() for text in legend.get_texts()] == [r"\$\frac{\$", "_hidden", *names[3:], "task"]
        below = legend.get_window_extent().y1
        assert all(below <= axes.get_window_extent().y0 for axes in figure.axes)  # not over the plots
    lines = [container.lines[0] for container in figures[MUTATION_FIGURE].axes[0].containers]
    assert len({(str(line.get_color()), line.get_marker()) for line in lines}) == len(lines) == len(names)
    bars = [c for c in figures[DOMAIN_FIGURE].axes[0].containers if hasattr(c, "patches")]
    assert len({(str(bar.patches[0].get_facecolor()), bar.patches[0].get_hatch()) for bar in bars}) == len(names)


# ---------------------------------------------------------------- unbounded work from one short row

def _rows_of(name: str, tmp_path: Path, *, row_timeout: float | None = None) -> dict:
    """Score a corpus sweep in a child (local executor, optionally a shorter row
    budget); its rows of the task by their ``finding``."""
    settings = "Settings()" if row_timeout is None else f"Settings(row_timeout={row_timeout})"
    script = ("from fastscore.run.job import score_sweep\nfrom fastscore.settings import Settings\n"
              f"score_sweep({str(PROBLEMS)!r}, {str(INPUTS / name)!r}, {str(tmp_path / name)!r}, "
              f"executor='local', progress=False, settings={settings})\n")
    result = _child(script, memory=16 << 30)
    assert result.returncode == 0, result.stderr[-2000:]
    scores = pl.read_parquet(tmp_path / name / "scores.parquet").filter(pl.col("task") == TASK)
    return {row["finding"]: row for row in scores.iter_rows(named=True)}


@pytest.mark.slow
def test_a_row_that_stalled_the_solver_is_bounded_and_its_neighbour_is_unaffected(tmp_path):
    """Finding 1: ``r*T = (r+M+m+G+1)**100`` took 67 s and 6 GB in the solver's
    coefficient extraction (an unguarded expansion, SymEngine's C++, which no signal
    interrupts); the expansion is now guarded, so the row is solved at once (its law is
    wrong); with a 3 s row budget a regression would be a timeout row, retried on
    resume, and the correct row next to it is proven either way."""
    rows = _rows_of("power-of-a-sum.jsonl", tmp_path, row_timeout=3.0)
    assert (rows[1]["status"], rows[1]["p_verdict"]) == ("ok", "different")
    assert (rows[0]["status"], rows[0]["p_verdict"], rows[0]["p_equivalent"]) == ("ok", "proven", True)


@pytest.mark.slow
def test_the_proof_rung_and_the_tapes_stay_bounded(tmp_path):
    """Finding 2: the proof rung skips the 12,341-term expansion of a function argument
    (``numeric``; it took minutes); finding 3: the 20-step substitution chain is
    compiled over its distinct subexpressions (a tree of 2**20 nodes; 123 s); the rest of
    the solver finds its unknowns in the free names, and the search for integer roots
    walks distinct subexpressions (SymEngine's ``atoms`` walked the tree: 40 s at 2**20
    nodes).  Its law is judged; its text, past ``Settings.max_text_nodes``, not written."""
    rows = _rows_of("proof-and-chain.jsonl", tmp_path)
    assert (rows[2]["status"], rows[2]["p_verdict"]) == ("ok", "numeric")
    chain = rows[3]
    assert (chain["status"], chain["derived_formula"], chain["p_verdict"]) == ("ok", None, "different")
    assert (rows[0]["status"], rows[0]["p_verdict"], rows[0]["p_equivalent"]) == ("ok", "proven", True)
