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

from fastscore.service.memo import Memo
from fastscore.support.lifeline import pid_alive
from tests.support.live_service import BUDGET, WORKERS, Server
from tests.support.public_tasks import runaway_mechanism, write_task

pytestmark = pytest.mark.slow

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


def _settled(server, workers: int) -> set[int]:  # noqa: F811
    """The shared workers' pids once all are idle (at most 60 s)."""
    for _ in range(600):
        pool = server.request("GET", "/v1/status")[2]["pool"]
        if pool["idle"] == workers:
            return set(pool["workers"])
        time.sleep(0.1)
    raise AssertionError(f"the workers did not settle: {pool}")


def test_unknown_clients_leave_a_shared_worker_free(server):  # noqa: F811
    """Many runaways from new connections at once: at most WORKERS - 1 shared workers
    are theirs (busy, or being replaced after one was stopped), so one stays idle for
    clients known to be well-behaved; each runaway is still answered Timeout."""
    _settled(server, WORKERS)
    runaway = server.task_files("runaway")
    with ThreadPoolExecutor(2 * WORKERS) as pool:
        calls = [pool.submit(server.evaluate, *runaway, runaway_mechanism(40 + k)) for k in range(2 * WORKERS)]
        idle_seen = []
        while not all(call.done() for call in calls) and len(idle_seen) < 2000:
            idle_seen.append(server.request("GET", "/v1/status")[2]["pool"]["idle"])
            time.sleep(0.01)
        results = [call.result() for call in calls]
    assert min(idle_seen) >= 1
    assert all(status == 200 and body["error_type"] == "Timeout" for status, _, body in results)


def test_a_runaway_submission_is_known_on_a_new_connection(server):  # noqa: F811
    """A submission that ran past its slice and its budget, sent again from a new
    connection, goes straight to the long lane: no shared worker is touched (stopped or
    moved), where a new runaway submission does take one for its slice."""
    runaway = server.task_files("runaway")
    known, fresh = runaway_mechanism(47), runaway_mechanism(48)
    assert server.evaluate(*runaway, known)[2]["error_type"] == "Timeout"

    def watch(submission) -> tuple[list[set[int]], list[int], dict]:
        before = _settled(server, WORKERS)
        seen, idle = [before], []
        with ThreadPoolExecutor(1) as pool:
            call = pool.submit(server.evaluate, *runaway, submission)
            while not call.done() and len(seen) < 2000:
                status = server.request("GET", "/v1/status")[2]["pool"]
                seen.append(set(status["workers"]))
                idle.append(status["idle"])
                time.sleep(0.01)
            return seen, idle, call.result()[2]
    seen, idle, answer = watch(known)
    assert answer["error_type"] == "Timeout"
    assert all(workers == seen[0] for workers in seen) and min(idle) == WORKERS
    seen, idle, answer = watch(fresh)
    assert answer["error_type"] == "Timeout"
    assert any(workers != seen[0] for workers in seen)  # its shared worker moved to the long lane


def test_slow_request_headers_are_cut_off(server):  # noqa: F811
    """A client that sends its request line and headers a byte at a time never holds its
    connection past KEEPALIVE_SECONDS: the service closes it."""
    from fastscore.service.app import KEEPALIVE_SECONDS
    text = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"X-Slow: y\r\n" * 1000
    with socket.create_connection((server.host, server.port)) as connection:
        connection.settimeout(0.25)
        closed = False
        for i in range(int(4 * KEEPALIVE_SECONDS / 0.25)):  # bounded: at most 4 x KEEPALIVE_SECONDS
            try:
                connection.sendall(text[i:i + 1])
                if connection.recv(100) == b"":
                    closed = True
                    break
            except socket.timeout:
                continue
            except OSError:  # reset by the server
                closed = True
                break
    assert closed


def test_gate_lets_the_newest_waiter_in_first():
    from fastscore.service.workers import _Gate

    async def scenario():
        gate, order = _Gate(1), []
        await gate.acquire()

        async def waiter(name):
            await gate.acquire()
            order.append(name)
        tasks = []
        for name in "abc":
            tasks.append(asyncio.ensure_future(waiter(name)))
            await asyncio.sleep(0)
        gate.release()
        await asyncio.sleep(0)
        assert order == ["c"]
        tasks[1].cancel()  # b gives up: a is next
        await asyncio.sleep(0)
        gate.release()
        await asyncio.sleep(0)
        assert order == ["c", "a"]
        gate.release()
        await asyncio.sleep(0)
        await gate.acquire()  # free again: at once
        handed = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        gate.release()  # handed to the waiter, which is cancelled before it runs: passed on
        handed.cancel()
        await asyncio.gather(handed, return_exceptions=True)
        await asyncio.wait_for(gate.acquire(), 5)
        await asyncio.gather(*tasks, return_exceptions=True)
    asyncio.run(scenario())
