"""The live feedback service the service tests talk to over loopback HTTP: one server per test module."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from urllib.parse import urlsplit

import numpy as np
import pytest

from tests.support.live_service import BUDGET, WORKERS, Server
from tests.support.public_tasks import ROLE_OF, demo_data, implicit_data, write_task


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("serve")
    tasks = root / "tasks"
    write_task(tasks / "Demo - Original" / "agent", ROLE_OF, demo_data(), description="y from x and z")
    write_task(tasks / "implicit" / "agent", {"x": "input", "y": "target"}, implicit_data())
    rng = np.random.default_rng(5)
    write_task(tasks / "runaway" / "agent", {"x": "input", "y": "target"}, rng.uniform(1, 2, (2, 4000)))
    log = root / "server.log"
    with open(log, "wb") as stderr:  # only the public files exist: no answer, no test split
        process = subprocess.Popen(
            [sys.executable, "-m", "fastscore.cli", "serve", "--port", "0", "--workers", str(WORKERS),
             "--budget", str(BUDGET), "--tasks", str(tasks)],
            stdout=subprocess.PIPE, stderr=stderr, cwd=root)
    line = process.stdout.readline()
    assert line, log.read_text()
    started = json.loads(line)
    assert started["protocol"] == "mdbench-proposal-v1" and started["tasks"] == 3
    url = urlsplit(started["url"])
    assert url.path == "/evaluate"
    yield Server(url.hostname, url.port, tasks, process, log)
    process.send_signal(signal.SIGTERM)
    process.wait(30)


@pytest.fixture(scope="module")
def demo_files(server):
    return server.task_files("Demo - Original")
