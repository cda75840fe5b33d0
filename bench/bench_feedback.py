"""Benchmark of the feedback service: ``fastscore serve`` against MDBench 0.7's
feedback CLI.

1. Public views of the real MechBench tasks (``--tasks``, MechBench task YAML): the
   observed variables (input, target, auxiliary) and a training array drawn here:
   inputs and auxiliaries in ``[min, ood_boundary)`` (uniform or log-uniform), the
   target from the task's ``phenomenal_model`` through fastscore's parser and tape
   kernels, with the task's fixed coefficients (``name = number`` mechanism
   equations whose name is no declared variable) substituted.  Written as
   ``<domain>/<task_name>/agent/{problem.json, train.npy}``.
2. Submissions per task: reference-like (the task's ``mechanism_model`` formulas),
   perturbed (one fixed coefficient changed by 10%) and malformed (a syntax error,
   a dropped equation, code injection, an exponent bomb).  Each request carries a
   distinct ``# request N`` comment, so every answer is computed, never cached
   (the cache is measured on its own).
3. A warm ``fastscore serve`` (``--workers``) answers them over loopback HTTP
   (multipart ``POST /evaluate``, as the harness's agents send them) from 1, 4 and
   16 concurrent clients (threads, one keep-alive connection each): latency
   percentiles per kind and requests/s.  Time from start to first answer: a fresh
   server process each time, the first request sent as soon as it listens.
4. MDBench 0.7: ``mdbench evaluate --evaluation-mode feedback`` on MDBench's own
   prepared tasks (``mdbench synthetic`` + ``mdbench prepare``; its formats differ
   from MechBench's), reference, perturbed and malformed mechanisms, one CLI call
   each; the same requests, the prepared data converted to the public layout, to the
   warm fastscore server.

Usage (from the repository root; the venv with MDBench is made as in the README)::

    .venv/bin/python bench/bench_feedback.py --mdbench /tmp/mdb-venv/bin/mdbench

writes ``bench/results/feedback.md`` (and ``feedback.json`` with every number).
"""
from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastscore.kernels import evaluate  # noqa: E402
from fastscore.service.protocol import DEFAULT_BUDGET  # noqa: E402
from fastscore.tapes.compile import compile_tape  # noqa: E402
from fastscore.text.parse import parse_equation, parse_expression  # noqa: E402

TASKS = ROOT / "tests" / "data" / "mechbench-tasks"
MDBENCH_PROBLEMS = ROOT / "tests" / "data" / "mdbench-problems"
BOUNDARY = "fastscore-bench-boundary"
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
MALFORMED = ("syntax", "dropped", "injection", "bomb")


# ------------------------------------------------------------------ public views


def _number(value) -> float:
    return float(str(value))


def _draw(sampling: dict, n: int, rng: np.random.Generator) -> np.ndarray:
    low, high = _number(sampling["min"]), _number(sampling["ood_boundary"])
    if sampling.get("distribution") == "log_uniform":
        return np.exp(rng.uniform(math.log(low), math.log(high), n))
    return rng.uniform(low, high, n)


def _coefficients(task: dict) -> dict[str, str]:
    """Fixed coefficients: ``name = number`` mechanism equations naming no variable."""
    declared = {v["name"] for v in task["variables"]}
    found = {}
    for item in task["mechanism_model"]:
        name, _, value = item["formula"].partition("=")
        name, value = name.strip(), value.strip()
        if name not in declared and NUMBER.fullmatch(value):
            found[name] = value
    return found


def public_view(path: Path, out: Path, *, n: int, seed: int) -> dict:
    """Write the public view of one MechBench task file under ``out``; returns its
    description (folder, columns, submissions)."""
    task = yaml.safe_load(path.read_text())
    observed = [v for v in task["variables"] if v["role"] in ("input", "target", "auxiliary")]
    target = next(v["name"] for v in observed if v["role"] == "target")
    ordered = ([v for v in observed if v["role"] == "target"] + [v for v in observed if v["role"] == "input"]
               + [v for v in observed if v["role"] == "auxiliary"])
    sources = [v["name"] for v in ordered[1:]]
    coefficients = _coefficients(task)
    lhs, _, rhs = task["phenomenal_model"].partition("=")
    assert lhs.strip() == target, path
    law = parse_expression(rhs, names=sources + list(coefficients))
    law = law.subs({parse_expression(k, names=[k]): parse_expression(v) for k, v in coefficients.items()})
    tape = compile_tape(law, sources)
    rng = np.random.default_rng(seed)
    rows = np.empty((len(ordered), 0))
    while rows.shape[1] < n:  # redraw samples whose target is not finite
        X = np.array([_draw(v["sampling"], n, rng) for v in ordered[1:]])
        y = evaluate(tape, X)
        keep = np.isfinite(y)
        rows = np.concatenate([rows, np.vstack([y[keep], X[:, keep]])], axis=1)
    folder = out / path.parent.name / task["task_name"] / "agent"
    folder.mkdir(parents=True, exist_ok=True)
    problem = {"data_layout": "variables_by_samples", "task_description": task["task_description"],
               "variables": [{"name": v["name"], "description": v["description"], "unit": str(v.get("unit", "1")),
                              "role": v["role"]} for v in ordered],
               "data_columns": [v["name"] for v in ordered]}
    (folder / "problem.json").write_text(json.dumps(problem, indent=2))
    np.save(folder / "train.npy", rows[:, :n])
    formulas = [item["formula"] for item in task["mechanism_model"]]
    return {"task": task["task_name"], "folder": folder, "explicit": _explicit(formulas, sources),
            "submissions": _submissions(formulas, coefficients, target)}


def _explicit(formulas: list[str], sources: list[str]) -> bool:
    """Whether the mechanism is a DAG of ``name = expr`` definitions (no coupled block)."""
    defined = {}
    for formula in formulas:
        lhs, rhs = parse_equation(formula, names=sources, allow_new_names=True)
        if not lhs.is_Symbol or lhs.name in defined or lhs.name in sources:
            return False
        defined[lhs.name] = {s.name for s in rhs.free_symbols} - set(sources)
    done: set[str] = set()
    while len(done) < len(defined):
        ready = {name for name, needs in defined.items() if name not in done and needs <= done}
        if not ready:
            return False
        done |= ready
    return True


def _submissions(formulas: list[str], coefficients: dict[str, str], target: str) -> dict[str, str]:
    """Reference-like, perturbed and malformed mechanism texts of one task."""
    names = [f.partition("=")[0].strip() for f in formulas]
    defining = names.index(target) if target in names else len(formulas) - 1  # else: the last equation
    perturbed = list(formulas)
    if coefficients:  # one fixed coefficient +10%
        name = next(iter(coefficients))
        perturbed[names.index(name)] = f"{name} = {_number(coefficients[name]) * 1.1!r}"
    else:  # the target's defining equation times 1.1
        lhs, _, rhs = formulas[defining].partition("=")
        perturbed[defining] = f"{lhs}= 1.1*({rhs.strip()})"
    # dropped: a coefficient's equation (the coefficient is left undetermined), else the target's definition
    dropped = next((i for i, name in enumerate(names) if name in coefficients), defining)
    return {
        "reference": "\n".join(formulas),
        "perturbed": "\n".join(perturbed),
        "syntax": "\n".join(formulas[:-1] + [formulas[-1] + " +* ("]),
        "dropped": "\n".join(f for i, f in enumerate(formulas) if i != dropped),
        "injection": "\n".join(formulas[:-1] + [f"{target} = __import__('os').system('echo pwned')"]),
        "bomb": "\n".join(formulas + [f"{target}_bomb = {target}**10**10"]),
    }


# ------------------------------------------------------------------- HTTP client


def _multipart(fields: list[tuple[str, bytes]]) -> tuple[bytes, str]:
    body = b"".join((f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}\"\r\n"
                     "Content-Type: application/octet-stream\r\n\r\n").encode() + data + b"\r\n"
                    for name, data in fields) + f"--{BOUNDARY}--\r\n".encode()
    return body, f"multipart/form-data; boundary={BOUNDARY}"


class Client:
    """One keep-alive HTTP connection."""

    def __init__(self, host: str, port: int):
        self.connection = http.client.HTTPConnection(host, port, timeout=600)

    def post(self, path: str, body: bytes, content_type: str) -> tuple[int, dict, float]:
        started = time.perf_counter()
        self.connection.request("POST", path, body=body, headers={"Content-Type": content_type})
        response = self.connection.getresponse()
        answer = json.loads(response.read())
        return response.status, answer, time.perf_counter() - started

    def close(self) -> None:
        self.connection.close()


class Server:
    """A ``fastscore serve`` subprocess."""

    def __init__(self, *args: str):
        self.started = time.perf_counter()
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen([str(ROOT / ".venv" / "bin" / "fastscore"), "serve", "--port", "0", *args],
                                        stdout=subprocess.PIPE, stderr=self.log)
        line = self.process.stdout.readline()
        if not line:
            self.log.seek(0)
            raise RuntimeError(f"fastscore serve did not start: {self.log.read().decode()[-2000:]}")
        url = urlsplit(json.loads(line)["url"])
        self.host, self.port = url.hostname, url.port

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)

    def log_lines(self) -> list[str]:
        self.log.seek(0)
        return self.log.read().decode().splitlines()


def _request(folder: Path, text: str) -> tuple[bytes, str]:
    return _multipart([("problem", (folder / "problem.json").read_bytes()),
                       ("train_data", (folder / "train.npy").read_bytes()), ("submission", text.encode())])


def _percentiles(seconds: list[float]) -> dict:
    ms = np.array(seconds) * 1000
    return {"n": len(ms), "p50": float(np.percentile(ms, 50)), "p95": float(np.percentile(ms, 95)),
            "p99": float(np.percentile(ms, 99))}


def run_load(server: Server, requests: list[tuple[str, bytes, str]], concurrency: int) -> dict:
    """Send ``requests`` (kind, body, content type) from ``concurrency`` clients."""
    latencies: dict[str, list[float]] = {}
    statuses: dict[int, int] = {}
    lock = threading.Lock()
    position = iter(range(len(requests)))

    def client_loop():
        client = Client(server.host, server.port)
        try:
            while True:
                with lock:
                    index = next(position, None)
                if index is None:
                    return
                kind, body, content_type = requests[index]
                status, _, seconds = client.post("/evaluate", body, content_type)
                with lock:
                    latencies.setdefault(kind, []).append(seconds)
                    statuses[status] = statuses.get(status, 0) + 1
        finally:
            client.close()

    started = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        for future in [pool.submit(client_loop) for _ in range(concurrency)]:
            future.result()
    wall = time.perf_counter() - started
    everything = [s for values in latencies.values() for s in values]
    return {"concurrency": concurrency, "requests": len(requests), "seconds": wall,
            "requests_per_s": len(requests) / wall, "statuses": statuses, "all": _percentiles(everything),
            "kinds": {kind: _percentiles(values) for kind, values in sorted(latencies.items())}}


def _kind(view: dict, name: str) -> str:
    if name in MALFORMED:
        return "malformed"
    return f"{'explicit' if view['explicit'] else 'implicit'} {name}"


def build_requests(views: list[dict], repeats: int) -> list[tuple[str, bytes, str]]:
    """Every submission of every task ``repeats`` times, each made distinct by a comment."""
    requests = []
    counter = 0
    for _repeat in range(repeats):
        for view in views:
            for name, text in view["submissions"].items():
                counter += 1
                body, content_type = _request(view["folder"], f"{text}\n# request {counter}")
                requests.append((_kind(view, name), body, content_type))
    order = np.random.default_rng(7).permutation(len(requests))
    return [requests[i] for i in order]


def _probe(server: Server, view: dict) -> dict:
    client = Client(server.host, server.port)
    try:
        return client.post("/evaluate", *_request(view["folder"], view["submissions"]["reference"]))[1]
    finally:
        client.close()


def first_answer(views: list[dict], workers: int, starts: int) -> list[float]:
    """Seconds from starting ``fastscore serve`` to its first answer, per start."""
    body, content_type = _request(views[0]["folder"], views[0]["submissions"]["reference"])
    times = []
    for _ in range(starts):
        server = Server("--workers", str(workers))
        client = Client(server.host, server.port)
        status, answer, _ = client.post("/evaluate", body, content_type)
        times.append(time.perf_counter() - server.started)
        assert status == 200 and answer["ok"], answer
        client.close()
        server.stop()
    return times


# ------------------------------------------------------------------------ MDBench


def _mdbench_formulas(path: Path) -> tuple[list[str], str]:
    problem = yaml.safe_load(path.read_text())
    return [m["formula"] for m in problem["mechanism"]], problem["variable_description"]["target"]["name"]


def prepare_mdbench(mdbench: Path, names: list[str], work: Path) -> list[dict]:
    """MDBench's own prepared tasks for these problems, and their public views."""
    files = [MDBENCH_PROBLEMS / f"{name}.yaml" for name in names]
    work.mkdir(parents=True, exist_ok=True)
    data, prepared = work / "synthetic", work / "prepared"
    subprocess.run([str(mdbench), "synthetic", "--problems", *map(str, files), "--output-dir", str(data)],
                   check=True, capture_output=True, cwd=work)
    subprocess.run([str(mdbench), "prepare", "--problems", *map(str, files), "--synthetic-data-dir", str(data),
                    "--output-dir", str(prepared), "--task", "mechanism_discovery", "--format", "directory",
                    "--reveal-auxiliary", "--force"], check=True, capture_output=True, cwd=work)
    views = []
    for path in files:
        formulas, target = _mdbench_formulas(path)
        title = yaml.safe_load(path.read_text())["problem_name"]
        folder = prepared / re.sub(r"[^A-Za-z0-9_.-]", "_", title)
        meta = json.loads((folder / "problem.json").read_text())
        public = work / "public" / path.stem / "agent"
        public.mkdir(parents=True, exist_ok=True)
        # rows: the variables, then the revealed auxiliary inputs
        variables = [{"name": v["name"], "description": v["description"], "unit": json.dumps(v["unit"]),
                      "role": "target" if v["name"] == target else role}
                     for role, group in (("input", meta["variables"]), ("auxiliary", meta["auxiliary_input_variables"]))
                     for v in group]
        # MDBench's declared constants are fixed coefficients for fastscore (π is π already)
        constants = [f"{c['name']} = {c['value']!r}" for c in meta["constants"] if c["name"] not in ("π", "pi")]
        (public / "problem.json").write_text(json.dumps({"data_layout": "variables_by_samples", "variables": variables,
                                                         "data_columns": [v["name"] for v in variables]}))
        shutil.copyfile(folder / "data_train.npy", public / "train.npy")
        sources = [v["name"] for v in variables if v["role"] != "target"]
        submissions = _submissions(formulas, {}, target)
        views.append({"task": path.stem, "prepared": folder, "folder": public, "explicit": _explicit(formulas, sources),
                      "submissions": submissions,
                      "fastscore": {kind: "\n".join(constants + [text]) for kind, text in submissions.items()}})
    return views


def mdbench_calls(mdbench: Path, views: list[dict], kinds: tuple[str, ...], work: Path) -> list[dict]:
    """One ``mdbench evaluate --evaluation-mode feedback`` call per (task, kind)."""
    calls = []
    for view in views:
        for kind in kinds:
            submission = work / f"{view['task']}-{kind}.txt"
            submission.write_text(view["submissions"][kind] + "\n")
            started = time.perf_counter()
            run = subprocess.run([str(mdbench), "evaluate", "--evaluation-mode", "feedback", "--problem",
                                  str(view["prepared"]), "--submission", str(submission)],
                                 capture_output=True, text=True, cwd=work)
            seconds = time.perf_counter() - started
            ok = run.returncode == 0 and "Prediction Accuracy" in run.stdout + run.stderr
            calls.append({"task": view["task"], "kind": kind, "seconds": seconds, "ok": ok})
    return calls


def fastscore_calls(server: Server, views: list[dict], kinds: tuple[str, ...], repeats: int) -> list[dict]:
    """The same requests to the warm server, each ``repeats`` times (distinct comments)."""
    client = Client(server.host, server.port)
    calls = []
    for view in views:
        for kind in kinds:
            for repeat in range(repeats):
                body, content_type = _request(view["folder"], f"{view['fastscore'][kind]}\n# mdbench {repeat}")
                status, answer, seconds = client.post("/evaluate", body, content_type)
                calls.append({"task": view["task"], "kind": kind, "seconds": seconds, "ok": answer["ok"],
                              "equivalent": answer.get("train", {}).get("numerically_equivalent")})
    client.close()
    return calls


# ----------------------------------------------------------------------- report


def _ms(value: float) -> str:
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def render(results: dict) -> str:
    lines = [
        "# Feedback service benchmark",
        "",
        f"Machine: {results['machine']}; shared, so numbers are medians where repeated. Load average (1 min) "
        f"of the machine when this run started and ended: {results['load_average'][0]:.1f} and "
        f"{results['load_average'][1]:.1f} (other sessions' jobs included).",
        f"Command: `{results['command']}`",
        "",
        f"Tasks: the {results['n_tasks']} real MechBench tasks of `tests/data/mechbench-tasks` "
        f"({results['n_explicit']} explicit mechanisms, {results['n_tasks'] - results['n_explicit']} with coupled "
        f"blocks), public views of {results['n_samples']} training samples each (problem.json + train.npy, about "
        f"{results['upload_kb']:.0f} KB a multipart upload). Per task: reference-like, perturbed (one coefficient "
        "+10%) and four malformed submissions (syntax error, dropped equation, code injection, exponent bomb). "
        f"Reference-like answers numerically equivalent to the training target: {results['reference_equivalent']} "
        f"of {results['n_tasks']}. Every request distinct (no cache hits); server `--workers "
        f"{results['workers']}`, warmed before timing.",
        "",
        (f"Over the time budget ({results['budget']:g} s): the reference mechanisms of "
         f"{len(results['over_budget'])} tasks ("
         + ", ".join(f"{task}: {kind}" for task, kind in results["over_budget"].items())
         + "); their reference-like and perturbed submissions are left out of the load below (each would hold a "
         "worker for the whole budget), their malformed ones are in; the service kills the worker at the budget "
         "and answers `Timeout`." if results["over_budget"] else
         f"Every reference mechanism is answered within the time budget ({results['budget']:g} s), the coupled "
         "linear balances included."),
        "",
        "## Latency over loopback HTTP (ms, multipart POST /evaluate)",
        "",
        "| clients | requests | requests/s | kind | n | p50 | p95 | p99 |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for level in results["load"]:
        rows = [("all", level["all"])] + list(level["kinds"].items())
        for i, (kind, p) in enumerate(rows):
            head = (f"| {level['concurrency']} | {level['requests']} | {level['requests_per_s']:.0f} " if i == 0
                    else "| | | ")
            lines.append(f"{head}| {kind} | {p['n']} | {_ms(p['p50'])} | {_ms(p['p95'])} | {_ms(p['p99'])} |")
    cache = results["cache"]
    lines += [
        "",
        f"Cache hit (the same request again, 1 client): p50 {_ms(cache['p50'])} ms, p99 {_ms(cache['p99'])} ms "
        f"over {cache['n']} requests.",
        "",
        "## Start to first answer",
        "",
        f"A fresh `fastscore serve --workers {results['workers']}` process, kernels already in Numba's disk cache, "
        "the first request sent as soon as the server listens: "
        + ", ".join(f"{s:.2f}" for s in results["first_answer"])
        + f" s (median {statistics.median(results['first_answer']):.2f} s).",
        "",
        "## MDBench 0.7 feedback CLI vs fastscore, same requests",
        "",
        "MDBench installed as `~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/mdb-venv && "
        "/tmp/mdb-venv/bin/pip install mdbench==0.7.0`; its tasks made with `mdbench synthetic` and "
        "`mdbench prepare --task mechanism_discovery --format directory --reveal-auxiliary`.",
        "",
        f"MDBench's own prepared tasks ({', '.join(results['mdbench']['problems'])}), reference, perturbed and "
        "malformed mechanisms; MDBench: one `mdbench evaluate --evaluation-mode feedback` process per call "
        "(its LLM 'fundamentality' judgment fails at once here for want of credentials: no network); fastscore: the "
        "same data in the public layout, the same texts, to the warm server (each request 5 times, distinct "
        "comments).",
        "",
        "| kind | MDBench calls | MDBench median s | fastscore median ms | ratio |",
        "|---|---|---|---|---|",
    ]
    for kind, row in results["mdbench"]["by_kind"].items():
        lines.append(f"| {kind} | {row['n']} | {row['mdbench_s']:.2f} | {_ms(row['fastscore_ms'])} | "
                     f"{row['ratio']:.0f}x |")
    total = results["mdbench"]["overall"]
    lines += [
        f"| all | {total['n']} | {total['mdbench_s']:.2f} | {_ms(total['fastscore_ms'])} | {total['ratio']:.0f}x |",
        "",
        f"Agreement: MDBench accepted {results['mdbench']['mdbench_ok']} of the reference/perturbed calls and "
        f"fastscore answered ok to {results['mdbench']['fastscore_ok']}; every malformed one was refused by both: "
        f"{results['mdbench']['malformed_refused']}.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=Path, default=TASKS, help="MechBench task YAML files (a directory)")
    parser.add_argument("--mdbench", type=Path, default=Path("/tmp/mdb-venv/bin/mdbench"))
    parser.add_argument("--mdbench-problems", nargs="+", default=[
        "projectile-range-original", "enzyme-reaction-rate-original", "coupled-mass-acceleration-original",
        "inclined-block-displacement-original", "spring-oscillator-period-original",
        "pressure-driven-tube-flow-original"])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=20, help="passes over all submissions per concurrency level")
    parser.add_argument("--starts", type=int, default=5, help="fresh starts for the first-answer time")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "feedback.md")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="fastscore-feedback-bench-"))
    files = sorted(args.tasks.rglob("*.yaml"))
    views = [public_view(path, work / "tasks", n=args.samples, seed=i) for i, path in enumerate(files)]
    results = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, Python "
                          f"{platform.python_version()}",
               "command": " ".join(["python", "bench/bench_feedback.py", *sys.argv[1:]]),
               "n_tasks": len(views), "n_explicit": sum(v["explicit"] for v in views), "n_samples": args.samples,
               "workers": args.workers, "budget": DEFAULT_BUDGET,
               "upload_kb": len(_request(views[0]["folder"], views[0]["submissions"]["reference"])[0]) / 1024}
    print(f"{len(views)} public views in {work / 'tasks'}", file=sys.stderr)
    load_average = [os.getloadavg()[0]]

    mdb_views = prepare_mdbench(args.mdbench, args.mdbench_problems, work / "mdbench")
    results["first_answer"] = first_answer(views, args.workers, args.starts)
    print(f"first answer: {results['first_answer']}", file=sys.stderr)

    server = Server("--workers", str(args.workers))
    try:
        # one pass of the reference mechanisms: equivalence on train, and which exceed the budget
        with ThreadPoolExecutor(args.workers) as pool:
            probes = list(pool.map(lambda view: _probe(server, view), views))
        results["reference_equivalent"] = sum(p.get("train", {}).get("numerically_equivalent", False) for p in probes)
        results["over_budget"] = {view["task"]: probe["error_type"] for view, probe in zip(views, probes)
                                  if probe.get("error_type") in ("Timeout", "SolveTimeout")}
        for view in views:
            if view["task"] in results["over_budget"]:
                view["submissions"] = {k: v for k, v in view["submissions"].items() if k in MALFORMED}
        run_load(server, build_requests(views, 2), args.workers)  # every worker meets every task and kind
        client = Client(server.host, server.port)
        cached = next(view for view in views if "reference" in view["submissions"])
        body, content_type = _request(cached["folder"], cached["submissions"]["reference"])
        results["cache"] = _percentiles([client.post("/evaluate", body, content_type)[2] for _ in range(500)])
        client.close()
        results["load"] = []
        for concurrency in (1, 4, 16):
            level = run_load(server, build_requests(views, args.repeats), concurrency)
            results["load"].append(level)
            print(f"{concurrency} clients: {level['requests_per_s']:.0f}/s p50 {level['all']['p50']:.2f} ms",
                  file=sys.stderr)
        assert "cache=hit" in "\n".join(server.log_lines())

        kinds = ("reference", "perturbed", "syntax", "injection")
        md_calls = mdbench_calls(args.mdbench, mdb_views, kinds, work / "mdbench")
        fs_calls = fastscore_calls(server, mdb_views, kinds, repeats=5)
    finally:
        server.stop()
    by_kind = {}
    for kind in (*kinds, "all"):
        md = [c["seconds"] for c in md_calls if kind in ("all", c["kind"])]
        fs = [c["seconds"] for c in fs_calls if kind in ("all", c["kind"])]
        by_kind[kind] = {"n": len(md), "mdbench_s": statistics.median(md), "fastscore_ms": 1000 * statistics.median(fs),
                         "ratio": statistics.median(md) / statistics.median(fs)}
    valid = ("reference", "perturbed")
    results["mdbench"] = {
        "problems": args.mdbench_problems, "by_kind": {k: v for k, v in by_kind.items() if k != "all"},
        "overall": by_kind["all"], "calls": md_calls, "fastscore_calls": fs_calls,
        "mdbench_ok": f"{sum(c['ok'] for c in md_calls if c['kind'] in valid)} of "
                      f"{sum(c['kind'] in valid for c in md_calls)}",
        "fastscore_ok": f"{sum(c['ok'] for c in fs_calls if c['kind'] in valid)} of "
                        f"{sum(c['kind'] in valid for c in fs_calls)}",
        "malformed_refused": all(not c["ok"] for c in md_calls + fs_calls if c["kind"] not in valid),
    }
    results["load_average"] = load_average + [os.getloadavg()[0]]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(results))
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=2, default=str))
    print(f"wrote {args.out}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
