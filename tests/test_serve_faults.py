"""The feedback service under faults: budgets counted from arrival, abandoned work
cancelled, answers bounded in bytes, hostile JSON bodies answered 400, on loopback."""
from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import numpy as np
import pytest

from fastscore.lifeline import pid_alive
from fastscore.memo import Memo
from public_tasks import runaway_mechanism, write_task
from test_serve import BUDGET, WORKERS, Server, demo_files, server  # noqa: F401 - the same live server

LONG_BUDGET = 120.0


@pytest.fixture(scope="module")
def patient_server(tmp_path_factory):
    """A service with a long budget: a runaway left alone would hold its worker for minutes."""
    root = tmp_path_factory.mktemp("patient")
    rng = np.random.default_rng(5)
    write_task(root / "tasks" / "runaway" / "agent", {"x": "input", "y": "target"}, rng.uniform(1, 2, (2, 4000)))
    log = root / "server.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "fastscore.cli", "serve", "--port", "0", "--workers", "2",
             "--budget", str(LONG_BUDGET), "--tasks", str(root / "tasks")],
            stdout=subprocess.PIPE, stderr=stderr, cwd=root)
    url = urlsplit(json.loads(process.stdout.readline())["url"])
    yield Server(url.hostname, url.port, root / "tasks", process, log)
    process.send_signal(signal.SIGTERM)
    process.wait(30)


def test_a_timeout_is_answered_within_the_budget_counted_from_arrival(server):  # noqa: F811
    """More runaways than workers: each is answered Timeout, those queued behind the
    others too, at about the budget after it arrived (not after its turn came)."""
    runaway = server.task_files("runaway")

    def call(k):
        started = time.monotonic()
        status, _, body = server.evaluate(*runaway, runaway_mechanism(k))
        return status, body, time.monotonic() - started
    with ThreadPoolExecutor(2 * WORKERS) as pool:
        results = list(pool.map(call, range(20, 20 + 2 * WORKERS)))
    for status, body, seconds in results:
        assert status == 200 and body["error_type"] == "Timeout"
        assert seconds < 3 * BUDGET  # all 6 in turn, 3 at a time, would be 2 x BUDGET and more
    assert server.request("GET", "/health")[0] == 200


def test_hostile_json_bodies_are_400(server):  # noqa: F811
    huge = b'{"task": "implicit", "submission": ' + b"9" * 5000 + b"}"
    status, _, body = server.request("POST", "/v1/feedback", huge, {"Content-Type": "application/json"})
    assert status == 400 and body["ok"] is False
    big = b'{"task": "implicit", "submission": "' + b"y" * (3 << 20) + b'"}'
    status, _, body = server.request("POST", "/v1/feedback", big, {"Content-Type": "application/json"})
    assert status == 400 and "at most" in body["error"]
    deep = b"[" * 100_000 + b"]" * 100_000
    assert server.request("POST", "/v1/feedback", deep)[0] == 400


def test_a_client_that_goes_away_frees_its_worker(patient_server):
    """A runaway whose client disconnects: its worker is stopped and replaced, not left
    computing to the end of its budget (minutes)."""
    server = patient_server
    for _ in range(600):  # the workers ready (at most 60 s)
        before = server.request("GET", "/v1/status")[2]["pool"]
        if before["idle"] == 2:
            break
        time.sleep(0.1)
    before = set(before["workers"])
    body = json.dumps({"task": "runaway", "submission": runaway_mechanism(31)}).encode()
    with socket.create_connection((server.host, server.port)) as connection:
        connection.sendall(b"POST /v1/feedback HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                           b"Content-Length: %d\r\n\r\n" % len(body) + body)
        time.sleep(2.0)  # in the long lane by now
        busy = server.request("GET", "/v1/status")[2]["pool"]
    assert busy["workers"] and set(busy["workers"]) != before  # the runaway's worker left the shared ones
    moved = before - set(busy["workers"])  # the runaway's worker, now in the long lane
    assert len(moved) == 1
    pid = moved.pop()
    for _ in range(300):  # at most 30 s, far below the budget
        if not pid_alive(pid):
            break
        time.sleep(0.1)
    assert not pid_alive(pid)
    assert "POST /v1/feedback client gone" in server.log.read_text()
    assert server.request("GET", "/v1/status")[2]["pool"]["idle"] == 2


def test_memo_is_bounded_in_bytes_and_cancels_abandoned_work():
    async def scenario():
        memo = Memo(100, nbytes=1000)

        def answer(value):
            async def compute():
                return {"text": value * 400}, True
            return compute
        for key in "abcd":
            await memo.get(key, answer(key))
        assert len(memo) == 2  # 4 answers of about 415 bytes: two fit in 1000

        started, cancelled = asyncio.Event(), asyncio.Event()

        async def forever():
            started.set()
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return {}, True
        callers = [asyncio.ensure_future(memo.get("slow", forever)) for _ in range(2)]
        await started.wait()
        callers[0].cancel()
        await asyncio.sleep(0.05)
        assert not cancelled.is_set()  # one caller still waits
        callers[1].cancel()
        await asyncio.wait_for(cancelled.wait(), 5)  # none waits: the work is cancelled
        await asyncio.gather(*callers, return_exceptions=True)
    asyncio.run(scenario())
