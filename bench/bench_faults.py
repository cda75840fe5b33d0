"""Benchmark: a normal client's latency while runaway clients load the feedback service.

A ``fastscore serve`` on loopback (``--workers 2``, ``--budget 5``) with two public
tasks (the demo task of the tests and a "runaway" task).  A normal client sends
``POST /v1/feedback`` requests one after the other (a cheap explicit mechanism, each
distinct so none is cached) for ``--seconds``; meanwhile 0, 2 or 50 runaway clients
(threads, bounded by the same time) each send distinct runaway mechanisms (a cyclic
block of transcendental equations: Newton at every sample, far past the budget) one
after the other.  Prints the normal client's p50 / p99 and the runaway answers'
latency, per load, and writes ``bench/results/faults.json``.

Usage (repository root)::

    .venv/bin/python bench/bench_faults.py --seconds 30
"""
from __future__ import annotations

import argparse
import http.client
import itertools
import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from public_tasks import ROLE_OF, demo_data, runaway_mechanism, write_task  # noqa: E402


def _post(connection: http.client.HTTPConnection, task: str, text: str) -> tuple[int, dict]:
    body = json.dumps({"task": task, "submission": text}).encode()
    connection.request("POST", "/v1/feedback", body=body, headers={"Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def _percentile(values: list[float], q: float) -> float | None:
    return float(np.percentile(values, q)) if values else None


def run(load: int, host: str, port: int, seconds: float, counter) -> dict:
    stop = time.monotonic() + seconds
    runaway_latency: list[float] = []

    def runaway_client():
        connection = http.client.HTTPConnection(host, port, timeout=120)
        while time.monotonic() < stop:
            started = time.monotonic()
            try:
                _post(connection, "runaway", runaway_mechanism(16 + next(counter) % 40) + f"\n# {next(counter)}")
            except (OSError, http.client.HTTPException):
                connection = http.client.HTTPConnection(host, port, timeout=120)
                continue
            runaway_latency.append(time.monotonic() - started)
    threads = [threading.Thread(target=runaway_client, daemon=True) for _ in range(load)]
    for thread in threads:
        thread.start()
    time.sleep(1.0 if load else 0.0)  # the runaways reach the workers first
    connection = http.client.HTTPConnection(host, port, timeout=120)
    latency, errors = [], 0
    while time.monotonic() < stop:
        started = time.monotonic()
        status, answer = _post(connection, "demo", f"y = {next(counter)}*x**2/z")
        latency.append(time.monotonic() - started)
        errors += status != 200 or not answer.get("ok")
    for thread in threads:
        thread.join(130)
    ms = [1000 * x for x in latency]
    return {"runaway_clients": load, "normal_requests": len(ms), "normal_errors": errors,
            "normal_p50_ms": _percentile(ms, 50), "normal_p99_ms": _percentile(ms, 99),
            "normal_max_ms": max(ms, default=None),
            "runaway_answers": len(runaway_latency), "runaway_p50_s": _percentile(runaway_latency, 50),
            "runaway_max_s": max(runaway_latency, default=None)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--loads", type=int, nargs="+", default=[0, 2, 50])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--budget", type=float, default=5.0)
    parser.add_argument("--log", help="write the service's stderr (one line per request) to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tasks = Path(folder) / "tasks"
        write_task(tasks / "demo" / "agent", ROLE_OF, demo_data())
        write_task(tasks / "runaway" / "agent", {"x": "input", "y": "target"},
                   np.random.default_rng(5).uniform(1, 2, (2, 4000)))
        process = subprocess.Popen([sys.executable, "-m", "fastscore.cli", "serve", "--port", "0", "--workers",
                                    str(args.workers), "--budget", str(args.budget), "--tasks", str(tasks)],
                                   stdout=subprocess.PIPE, stderr=open(args.log, "wb") if args.log else subprocess.DEVNULL,
                                   cwd=folder)
        try:
            url = urlsplit(json.loads(process.stdout.readline())["url"])
            counter = itertools.count(1)
            warm = http.client.HTTPConnection(url.hostname, url.port, timeout=180)
            _post(warm, "demo", "y = x")  # the workers are ready
            results = []
            for load in args.loads:
                result = run(load, url.hostname, url.port, args.seconds, counter)
                results.append(result)
                print(json.dumps(result), flush=True)
                time.sleep(args.budget + 1)  # the last runaways end
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(60)
    out = ROOT / "bench" / "results" / "faults.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"workers": args.workers, "budget": args.budget, "seconds": args.seconds,
                               "results": results}, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
