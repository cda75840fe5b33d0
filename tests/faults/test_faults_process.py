"""Faults of the process running ``fastscore score``: killed with -9 or stopped with
SIGTERM while its scoring child is busy, the child dies with it, the output's lock
is free again, and the same command resumes."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fastscore.run.job import OutputBusy, _locked, score_sweep
from fastscore.support.lifeline import RunLock, pid_alive

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
PROBLEMS = ROOT / "problems" / "example"
LAW = "T = 2*pi*sqrt(r**3/(G*M))"

# Runs `fastscore score` with a scorer that hangs on the config "slow" (the forked
# child inherits the patch), so that the child is busy when the parent is stopped.
SCRIPT = """
import os, sys, time
import fastscore.run.executors.local as local
real = local.score_task
def scorer(reference, rows, **kwargs):
    if any(row["config"] == "slow" for row in rows):
        open(os.environ["SLOW_STARTED"], "w").close()
        time.sleep(600)
    return real(reference, rows, **kwargs)
local.score_task = scorer
from fastscore.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _sweep(path: Path) -> Path:
    rows = [{"config": "fast", "run": 0, "task": "circular-orbit-period", "phenomenal": LAW},
            {"config": "slow", "run": 0, "task": "circular-orbit-period", "phenomenal": LAW}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def _start(tmp_path: Path):
    out = tmp_path / "out"
    command = [sys.executable, "-c", SCRIPT, "score", "--problems", str(PROBLEMS), "--sweep",
               str(_sweep(tmp_path / "sweep.jsonl")), "--out", str(out), "--executor", "local", "--batch-rows", "1"]
    marker = tmp_path / "slow-started"
    process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "SLOW_STARTED": str(marker)})
    for _ in range(1200):  # until the child has started the slow row (at most 120 s)
        children = _children(process.pid) if process.poll() is None else []
        if children and marker.exists():
            time.sleep(1.0)
            return process, children, out
        time.sleep(0.1)
    process.kill()
    pytest.fail("the scoring child did not start")


def _gone(pid: int, seconds: float = 15.0) -> bool:
    for _ in range(int(seconds * 10)):
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_kill_9_of_the_parent_kills_the_child_and_frees_the_lock(tmp_path, capsys):
    process, children, out = _start(tmp_path)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert all(_gone(child) for child in children)
    with _locked(out):  # not refused: the kernel released the lock with its owner
        pass
    assert f"left by process {process.pid}, which is no longer running: taking it over" in capsys.readouterr().err
    with _locked(out):  # released cleanly: nothing to take over
        pass
    assert "taking it over" not in capsys.readouterr().err


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_sigterm_is_a_clean_stop_that_resumes(tmp_path):
    process, children, out = _start(tmp_path)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143
    assert err.strip().splitlines() == [
        "fastscore score: stopped by SIGTERM; the rows scored so far are kept: re-run the same command to resume"]
    assert all(_gone(child) for child in children)
    score_sweep(PROBLEMS, tmp_path / "sweep.jsonl", out, executor="local", progress=False)
    meta = json.loads((out / "meta.json").read_text())
    assert meta["counts"]["status"]["ok"] == 2
    assert meta["counts"]["resumed_cells"] == 1  # the fast row, kept by the clean stop


def test_a_live_holder_is_refused_and_a_child_does_not_keep_the_lock(tmp_path):
    out = tmp_path / "out"
    with _locked(out):
        with pytest.raises(OutputBusy, match=rf"in use by another fastscore score run \(process {os.getpid()}\)"):
            with _locked(out):
                pass
        ready, told = os.pipe()
        child = os.fork()
        if child == 0:  # the fork's copy of the lock's file is dropped (at the fork): it holds nothing
            os.write(told, b"x")
            time.sleep(3)
            os._exit(0)
        os.read(ready, 1)  # the child runs (and has run its fork handler) before the parent lets go
        os.close(ready)
        os.close(told)
    try:
        with RunLock(out / ".lock", "test"):  # the parent let go: free, though the child lives
            assert pid_alive(child)
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def test_pid_alive():
    assert pid_alive(os.getpid())
    child = os.fork()
    if child == 0:
        os._exit(0)
    os.waitpid(child, 0)
    assert not pid_alive(child)
