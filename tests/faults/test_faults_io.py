"""Faults of the inputs and outputs: a full disk, run folders and rows the tables
cannot hold, config names with HTML or line breaks, many configurations: each is one
line of error (exit 2) or a row with its reason, and nothing is left half-written."""
from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import polars as pl
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from fastscore.cli import main
from fastscore.report.document import write_report
from fastscore.report.figures import _height, _legend
from fastscore.run.job import score_sweep

TASK = "circular-orbit-period"
LAW = "T = 2*pi*sqrt(r**3/(G*M))"


def _write_sweep(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.fixture
def small_disk(tmp_path):
    """A 64 KiB tmpfs (root only; skipped where it cannot be mounted)."""
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:6]}"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot mount a small tmpfs here")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("padding", [200, 3000])  # the tables, or already the result parts, fill the disk
def test_a_full_disk_is_one_line_and_no_temporary_is_left(tmp_path, small_disk, capsys, padding, example_dir):
    rows = [{"config": "c", "run": run, "task": TASK, "phenomenal": LAW, "pad": "x" * padding} for run in range(60)]
    sweep = _write_sweep(tmp_path / "sweep.jsonl", rows)
    out = small_disk / "out"
    code = main(["score", "--problems", str(example_dir), "--sweep", str(sweep), "--out", str(out),
                 "--executor", "local", "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and err[0].startswith(f"fastscore score: error: cannot write {out}/")
    assert err[0].endswith("No space left on device (os error 28)") or "No space left" in err[0]
    assert not [p for p in out.rglob("*") if p.name.endswith(".tmp")]


def test_a_run_number_too_large_for_the_tables_is_an_unread_folder(tmp_path, capsys, example_dir):
    for name in ("x_run99999999999999999999999", "ok_run1"):
        folder = tmp_path / "tree" / name / TASK
        folder.mkdir(parents=True)
        (folder / "submission.txt").write_text(LAW + "\n")
    score_sweep(example_dir, tmp_path / "tree", tmp_path / "out", executor="local", progress=False)
    assert "1 experiment folder(s) whose name the mapping cannot read were skipped " \
           "(e.g. 'x_run99999999999999999999999')" in capsys.readouterr().err
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("task") == TASK)
    assert scores.select("config", "run", "status").rows() == [("ok", 1, "ok")]


def test_a_lone_surrogate_is_the_row_s_error_or_names_file_and_line(tmp_path, capsys, example_dir):
    lines = [json.dumps({"config": "c", "run": 0, "task": TASK, "phenomenal": LAW}),
             '{"config": "c", "run": 1, "task": "%s", "phenomenal": "T = \\ud800"}' % TASK]
    sweep = tmp_path / "sweep.jsonl"
    sweep.write_text("\n".join(lines) + "\n")
    score_sweep(example_dir, sweep, tmp_path / "out", executor="local", progress=False)
    capsys.readouterr()
    scores = pl.read_parquet(tmp_path / "out" / "scores.parquet").filter(pl.col("task") == TASK)
    assert scores.select("run", "status", "error").rows() == [
        (0, "ok", None),
        (1, "parse_error", "line 2: column 'phenomenal' is not valid Unicode (a lone surrogate such as \\ud800)")]
    sweep.write_text(lines[0] + '\n{"config": "c\\udc00", "run": 1, "task": "%s", "phenomenal": "T = r"}\n' % TASK)
    code = main(["score", "--problems", str(example_dir), "--sweep", str(sweep), "--out", str(tmp_path / "out2"),
                 "--executor", "local", "--no-progress"])
    assert code == 2
    assert capsys.readouterr().err.strip() == (f"fastscore score: error: {sweep}:2: column 'config' is not valid "
                                               "Unicode (a lone surrogate such as \\ud800)")


@pytest.mark.slow
def test_report_escapes_config_names_and_keeps_them_on_one_line(tmp_path, example_dir):
    evil = "<script>alert(1)</script>\nsecond line"
    rows = [{"config": config, "run": 0, "task": TASK, "phenomenal": LAW} for config in (evil, "plain")]
    score_sweep(example_dir, _write_sweep(tmp_path / "sweep.jsonl", rows), tmp_path / "out", executor="local",
                progress=False)
    text = write_report(tmp_path / "out").read_text()
    assert "<script>" not in text and "second line\n" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt; second line" in text
    assert "<script>" not in (tmp_path / "out" / "report" / "report.html").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("count,length", [(26, 12), (40, 30), (60, 200)])
def test_the_legend_of_many_configurations_fits_the_figure(count, length):
    configs = [f"config-{i:02d}-" + "x" * length for i in range(count)]
    figure = Figure(figsize=(13, _height(4, configs, 13)), layout="constrained")
    axes = figure.add_subplot()
    handles = [axes.plot([0, 1], [i, i])[0] for i in range(count)]
    _legend(figure, handles, configs)
    FigureCanvasAgg(figure).draw()
    box, legend = figure.bbox, figure.legends[0].get_window_extent()
    assert box.x0 - 1 <= legend.x0 and legend.x1 <= box.x1 + 1 and box.y0 - 1 <= legend.y0
    assert axes.get_window_extent().height > 0
