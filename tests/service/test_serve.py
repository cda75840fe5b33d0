"""``fastscore serve`` over real HTTP on loopback: mdbench-proposal-v1, the JSON API,
bad input, time budget, worker replacement, cache and single flight."""
from __future__ import annotations

import asyncio
import http.client
import io
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from fastscore.service.feedback import feedback
from fastscore.service.memo import LRU, Memo
from fastscore.service.protocol import EXTRAS, protocol_answer
from fastscore.service.public import public_task
from tests.support.live_service import BUDGET, WORKERS
from tests.support.public_tasks import (
    HOSTILE,
    ROLE_OF,
    demo_data,
    multipart,
    problem_json,
    runaway_mechanism,
    write_task,
)

pytestmark = pytest.mark.slow









def _npy(array) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array)
    return buffer.getvalue()


def test_health(server):
    assert server.request("GET", "/health")[::2] == (200, {"ok": True, "protocol": "mdbench-proposal-v1"})


def test_unknown_paths_and_methods(server):
    assert server.request("GET", "/nowhere")[0] == 404
    assert server.request("POST", "/evaluate/x")[0] == 404
    status, _, body = server.request("GET", "/evaluate")
    assert status == 405 and body["ok"] is False


def test_evaluate_answers_as_the_function(server, demo_files):
    text = "c = 3.1\nh = c*x**2  # comment\ny = h/z"
    status, headers, body = server.evaluate(*demo_files, text)
    assert status == 200
    expected = protocol_answer(feedback(public_task(problem_json(ROLE_OF, description="y from x and z"),
                                                    demo_data()), text))
    assert body == expected
    assert list(body) == ["ok", "solution", "train"]
    assert body["solution"]["y"] == "(31/10)*x**2/z"
    assert headers["X-Fastscore-Cache"] in ("miss", "hit")


def test_repeated_request_is_a_cache_hit(server, demo_files):
    first = server.evaluate(*demo_files, "y = 2.5*x**2/z")
    second = server.evaluate(*demo_files, "y = 2.5*x**2/z")
    assert first[1]["X-Fastscore-Cache"] == "miss" and second[1]["X-Fastscore-Cache"] == "hit"
    assert first[2] == second[2]
    log = server.log.read_text()
    assert "POST /evaluate 200" in log and "cache=hit" in log


def test_implicit_block(server):
    status, _, body = server.evaluate(*server.task_files("implicit"), "w = y\nw + exp(w) = x")
    assert status == 200 and body["ok"] is True
    assert body["train"]["numerically_equivalent"] is True


def test_model_errors_are_answers(server, demo_files):
    for text, kind in (("y = a*x", "SolveError"), ("y = x\ny = 2*x", "SolveError"), ("y = x +", "ParseError")):
        status, _, body = server.evaluate(*demo_files, text)
        assert status == 200 and body == {"ok": False, "error": body["error"], "error_type": kind}


@pytest.mark.parametrize("text", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_submissions(server, demo_files, text):
    status, _, body = server.evaluate(*demo_files, text)
    assert status == 200 and body["ok"] is False and body["error_type"] in ("ParseError", "SolveError")
    status, _, body = server.evaluate(*demo_files, "y = 3*x**2/z")
    assert status == 200 and body["ok"] is True and body["train"]["numerically_equivalent"] is True


def test_problem_not_public_and_train_not_matching(server, demo_files):
    problem, train = demo_files
    private = json.loads(problem)
    private["variables"][1]["role"] = "internal"
    cases = [
        (json.dumps(private).encode(), train, "public roles"),
        (b"{not json", train, "not JSON"),
        (json.dumps({"data_layout": "samples_by_variables"}).encode(), train, "data_layout"),
        (problem, _npy(demo_data()[:2]), "shape (3, n_samples)"),
        (problem, _npy(demo_data().T), "shape (3, n_samples)"),
        (problem, _npy(np.where(np.eye(3, 400, dtype=bool), np.nan, demo_data())), "non-finite"),
        (problem, _npy(demo_data().astype(np.complex128)), "complex"),
    ]
    for problem_bytes, train_bytes, message in cases:
        status, _, body = server.evaluate(problem_bytes, train_bytes, "y = x")
        assert status == 200 and body["ok"] is False and body["error_type"] == "TaskError", body
        assert message in body["error"]
    assert server.evaluate(*demo_files, "y = 3*x**2/z")[2]["ok"] is True


def test_malformed_uploads_are_400(server, demo_files):
    problem, train = demo_files
    sub = b"y = x"
    cases = {
        "missing": [("problem", problem), ("submission", sub)],
        "more than once": [("problem", problem), ("problem", problem), ("train_data", train), ("submission", sub)],
        "unexpected field": [("problem", problem), ("train_data", train), ("submission", sub), ("answer", b"{}")],
        "NPY": [("problem", problem), ("train_data", b"\x93NUMPY garbage"), ("submission", sub)],
        "magic": [("problem", problem), ("train_data", problem), ("submission", sub)],
    }
    for message, fields in cases.items():
        status, _, body = server.evaluate(b"", b"", b"", fields=fields)
        assert status == 400 and set(body) == {"ok", "error"} and body["ok"] is False
        assert message in body["error"], (message, body)
    for body, content_type in ((b"problem=1", "application/x-www-form-urlencoded"),
                               (b"garbage", "multipart/form-data; boundary=xyz"),
                               (b"garbage", "multipart/form-data")):
        status, _, answer = server.request("POST", "/evaluate", body, {"Content-Type": content_type})
        assert status == 400 and answer["ok"] is False
    status, _, answer = server.request("POST", "/evaluate", b"", {"Content-Type": "multipart/form-data; boundary=a"})
    assert status == 400 and "1 to 33554432 bytes" in answer["error"]
    assert server.evaluate(*demo_files, "y = 3*x**2/z")[2]["ok"] is True


def test_over_the_size_limit(server, demo_files):
    connection = http.client.HTTPConnection(server.host, server.port, timeout=120)
    connection.putrequest("POST", "/evaluate")  # announced too large: refused before reading
    connection.putheader("Content-Type", "multipart/form-data; boundary=fastscore-test-boundary")
    connection.putheader("Content-Length", str(33 * 1024 * 1024))
    connection.endheaders()
    response = connection.getresponse()
    assert response.status == 400 and "33554432" in json.loads(response.read())["error"]
    connection.close()
    body, content_type = multipart([("problem", demo_files[0]), ("train_data", b"0" * (33 * 1024 * 1024)),
                                    ("submission", b"y = x")])
    connection = http.client.HTTPConnection(server.host, server.port, timeout=120)
    connection.putrequest("POST", "/evaluate")  # no length announced: counted while reading
    connection.putheader("Content-Type", content_type)
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    try:
        for start in range(0, len(body), 1 << 20):
            chunk = body[start:start + (1 << 20)]
            connection.send(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        connection.send(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server may answer and close before the whole body is sent
    response = connection.getresponse()
    assert response.status == 400 and "33554432" in json.loads(response.read())["error"]
    connection.close()
    assert server.evaluate(*demo_files, "y = 3*x**2/z")[2]["ok"] is True


def test_json_api(server, demo_files):
    status, _, listed = server.request("GET", "/v1/tasks")
    assert status == 200 and [t["task"] for t in listed["tasks"]] == ["Demo - Original", "implicit", "runaway"]
    assert listed["tasks"][0] == {"task": "Demo - Original", "target": "y", "sources": ["x", "z"], "n_samples": 400,
                                  "task_description": "y from x and z"}
    text = "q = x**2\ny = 3*q/z"
    query = json.dumps({"task": "Demo - Original", "submission": text}).encode()
    status, headers, answer = server.request("POST", "/v1/feedback", query, {"Content-Type": "application/json"})
    assert status == 200 and answer["ok"] is True and headers["X-Fastscore-Cache"] == "miss"
    assert answer[EXTRAS] == {"nodes": [4, 7], "closed_form": ["q", "y"], "numeric": [], "warnings": []}
    assert protocol_answer(answer) == server.evaluate(*demo_files, text)[2]  # one cache entry for both endpoints
    assert server.evaluate(*demo_files, text)[1]["X-Fastscore-Cache"] == "hit"


def test_json_api_bad_requests(server):
    for body in (b"{", b"[]", json.dumps({"task": "implicit"}).encode(),
                 json.dumps({"task": "implicit", "submission": "y = x", "budget": 9}).encode(),
                 json.dumps({"task": "implicit", "submission": 3}).encode()):
        status, _, answer = server.request("POST", "/v1/feedback", body)
        assert status == 400 and answer["ok"] is False
    status, _, answer = server.request("POST", "/v1/feedback", json.dumps({"task": "nope", "submission": "y"}).encode())
    assert status == 404 and "unknown task" in answer["error"]
    status, _, answer = server.request("POST", "/v1/feedback",
                                       json.dumps({"task": "implicit", "submission": "y = \udcff"}).encode())
    assert status == 200 and answer["error_type"] == "ParseError" and "UTF-8" in answer["error"]


def test_runaway_is_stopped_while_others_are_served(server, demo_files):
    """Three identical runaways (one computation: single flight) and another runaway
    occupy two workers past the budget; a normal request is answered meanwhile by the
    third; both overrunning workers are killed and replaced."""
    runaway = server.task_files("runaway")
    before = server.request("GET", "/v1/status")[2]["pool"]["workers"]
    order = []

    def call(name, files, text):
        result = server.evaluate(*files, text)
        order.append(name)
        return result

    with ThreadPoolExecutor(5) as pool:
        slow = [pool.submit(call, "runaway", runaway, runaway_mechanism(16)) for _ in range(3)]
        other = pool.submit(call, "runaway-2", runaway, runaway_mechanism(17))
        time.sleep(0.5)  # let the runaways reach their workers first
        normal = pool.submit(call, "normal", demo_files, "y = 3*x**2/z + 0*x")
        results = [f.result() for f in slow] + [other.result()]
        assert normal.result()[2]["ok"] is True
    assert order[0] == "normal"
    for status, _headers, body in results:
        assert status == 200
        assert body == {"ok": False, "error": body["error"], "error_type": "Timeout"}
        assert f"time budget of {BUDGET:g} s" in body["error"]
    assert sorted(h["X-Fastscore-Cache"] for _, h, _ in results[:3]) == ["miss", "shared", "shared"]
    assert server.evaluate(*runaway, runaway_mechanism(17))[1]["X-Fastscore-Cache"] == "miss"  # not cached
    deadline = time.monotonic() + 120
    while (status := server.request("GET", "/v1/status")[2]["pool"])["idle"] < WORKERS:
        assert time.monotonic() < deadline, status
        time.sleep(0.2)
    after = status["workers"]
    # the two runaways' workers at least (the one above may have run on a replacement)
    assert len(after) == WORKERS and len(set(before) - set(after)) >= 2
    for pid in set(before) - set(after):
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    with ThreadPoolExecutor(4) as pool:
        answers = list(pool.map(lambda k: server.evaluate(*demo_files, f"y = {k}*x**2/z")[2], range(1, 5)))
    assert all(a["ok"] for a in answers) and answers[2]["train"]["numerically_equivalent"] is True


def test_server_survives_bad_requests(server):
    connection = http.client.HTTPConnection(server.host, server.port, timeout=30)
    connection.connect()
    connection.sock.sendall(b"GARBAGE\r\n\r\n")
    connection.close()
    assert server.process.poll() is None
    assert server.request("GET", "/health")[0] == 200


def test_memo_hit_shared_miss_and_bound():
    async def scenario():
        memo = Memo(2)
        calls = []

        def computation(value, final=True):
            async def compute():
                calls.append(value)
                await asyncio.sleep(0.01)
                return value, final
            return compute

        got = await asyncio.gather(*(memo.get("a", computation(1)) for _ in range(3)))
        assert sorted(got) == [(1, "miss"), (1, "shared"), (1, "shared")] and calls == [1]
        assert await memo.get("a", computation(9)) == (1, "hit")
        await memo.get("b", computation(2))
        await memo.get("c", computation(3))  # "a" is the least recently used: dropped
        assert len(memo) == 2 and await memo.get("a", computation(4)) == (4, "miss")
        assert await memo.get("t", computation(5, final=False)) == (5, "miss")
        assert await memo.get("t", computation(6)) == (6, "miss")  # a non-final answer is not kept
    asyncio.run(scenario())


def test_unusable_task_folders_exit_2(tmp_path):
    write_task(tmp_path / "a" / "agent", ROLE_OF, demo_data())
    write_task(tmp_path / "a", ROLE_OF, demo_data())  # the same id twice: 'a' and 'a/agent'
    write_task(tmp_path / "b", {"x": "input", "y": "internal"}, demo_data()[:2])
    for tasks, message in ((tmp_path / "missing", "no task directory"), (tmp_path / "b", "public roles"),
                           (tmp_path, "two task folders have the id 'a'")):
        run = subprocess.run([sys.executable, "-m", "fastscore.cli", "serve", "--port", "0", "--tasks", str(tasks)],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 2 and run.stdout == ""
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("fastscore serve: error: ") and message in lines[0], lines


def test_lru_bounds_count_and_bytes():
    lru = LRU(3, 100, size=len)
    for key in "abc":
        lru.put(key, key * 10)
    assert lru.get("a") == "a" * 10  # now the most recently used
    lru.put("d", "d")
    assert len(lru) == 3 and lru.get("b") is None and lru.get("c") == "c" * 10
    lru.put("e", "e" * 95)  # over the byte bound: the least recently used go first
    assert lru.get("e") == "e" * 95 and len(lru) == 1
    lru.put("f", "f" * 500)  # a value larger than the bound alone is still kept
    assert lru.get("f") == "f" * 500 and len(lru) == 1
