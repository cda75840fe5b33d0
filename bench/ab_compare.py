"""Compare the speed of two commits in one session, alternating their runs (a shared,
noisy machine drifts from minute to minute, so back-to-back pairs are compared).

    python bench/ab_compare.py verdicts --base COMMIT [--rounds 10] [--passes 5]
    python bench/ab_compare.py sweep --base COMMIT [--rounds 16] [--sweep FILE.parquet]
    python bench/ab_compare.py mechbench --base COMMIT [--rounds 16] [--problems DIR]

The base commit is exported (``git archive``) to a temporary folder and imported from
there (``PYTHONPATH``; ``fastscore.kernels`` is linked to its ``kernels/``); the other
side is this checkout.  ``verdicts``: each run does ``--passes`` passes of
``bench_verdicts.py``'s fastscore workload (CPU seconds a pass, with the machine check
before it); ``sweep``: each run scores the sweep once with the local executor (wall
seconds, and CPU seconds of the process and its children); ``mechbench``: one warm
worker process per side holds ``bench_mechbench.py``'s end-to-end workload (the unique
planted submissions of every MechBench task in ``--problems``, default the real ones in tests/data)
and the two sides' passes alternate one by one (CPU seconds of a pass from emptied
caches), so that each pair is seconds apart.  A first, uncounted round
compiles each side's kernels.  Prints one JSON line per run, then the medians and the
median of the paired ratios (this / base).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "tests" / "data" / "mdbench-problems"

VERDICTS = """
import gc, json, random, sys
sys.path.insert(0, {tree!r} + "/bench")
import bench_verdicts as bv
from fastscore import load_problems  # the public name: the same in both trees
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
rng = random.Random(7)
references = [build_reference(p) for p in load_problems({problems!r})]
gc.freeze()
batches = [bv.submissions_for(r, limit=60, rng=rng) for r in references]
score_task(references[0], [dict(config="w", run=0, task=references[0].problem.task_id, phenomenal=t)
                           for t, _ in batches[0]])
passes = []
for _ in range({passes}):
    check = bv.machine_check()
    (cpu, _), _, _ = bv.run_fastscore(references, batches, profile=False)
    passes.append([cpu, check])
print(json.dumps(dict(value=statistics.median(c for c, _ in passes), passes=passes)))
"""

SWEEP = """
import json, resource, shutil, tempfile, time
from fastscore.run.job import score_sweep
out = tempfile.mkdtemp()
started = time.perf_counter()
score_sweep({problems!r}, {sweep!r}, out, executor="local", progress=False)
wall = time.perf_counter() - started
shutil.rmtree(out)
cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
          for f in ("ru_utime", "ru_stime"))
print(json.dumps(dict(value=wall, cpu=cpu)))
"""


MECHBENCH = """
import json, random, sys, time
sys.path.insert(0, {tree!r} + "/bench")
import bench_mechbench as bm
from fastscore.support import caches
from fastscore.support.collector import paused
from fastscore import load_problems  # the public name: the same in both trees
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
from fastscore.tapes.warm import warm_up
problems = [p for p in load_problems({problems!r}) if p.format == "mechbench"]
warm_up()
references = {{p.task_id: build_reference(p) for p in problems}}
rng, batches, planted = random.Random(7), {{}}, set()
for copy in (1, 2):
    for p in problems:
        for row in bm.study(p, copy=copy, rng=rng):
            submission = (p.task_id, row["mechanism"], json.dumps(row["replies"], sort_keys=True))
            if submission in planted:
                continue  # as bench_mechbench.py: unique submissions only
            planted.add(submission)
            batches.setdefault(p.task_id, []).append(dict(config=row["kind"], run=copy, task=p.task_id,
                mechanism=row["mechanism"], probe_replies=json.dumps(row["replies"])))
for task, rows in batches.items():
    score_task(references[task], rows[:1])  # kernels loaded, as a warm worker's
print("ready", flush=True)
for _ in sys.stdin:  # one pass a line, from emptied caches, as a fresh worker would score
    caches.clear()
    cpu = time.process_time()
    with paused():
        for task, rows in batches.items():
            score_task(references[task], rows)
    print(json.dumps(dict(value=time.process_time() - cpu, rows=sum(map(len, batches.values())))), flush=True)
"""
MECHBENCH_TASKS = ROOT / "tests" / "data" / "mechbench-tasks"


def export(commit: str, folder: Path) -> Path:
    """The tree of ``commit`` in ``folder``, importable as ``fastscore``."""
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    (folder / "fastscore" / "kernels").symlink_to(folder / "kernels")
    return folder


def run(tree: Path, code: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS="1")
    result = subprocess.run([sys.executable, "-c", "import statistics\n" + code], capture_output=True, text=True,
                            env=env, cwd=tempfile.gettempdir(), check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def paired(trees: dict[str, Path], code, rounds: int, values: dict[str, list[float]]) -> None:
    """Alternate single passes of two warm workers (``code(tree)``: a worker's program),
    first one side then the other, swapping the order every round."""
    workers = {}
    for side, tree in trees.items():
        env = dict(os.environ, PYTHONPATH=str(tree), NUMBA_NUM_THREADS="1")
        workers[side] = subprocess.Popen([sys.executable, "-c", code(tree)], text=True,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                         cwd=tempfile.gettempdir())
        if workers[side].stdout.readline().strip() != "ready":
            raise RuntimeError(f"the {side} worker did not start")
    try:
        for round_ in range(rounds):
            for side in (("base", "this") if round_ % 2 == 0 else ("this", "base")):
                workers[side].stdin.write("pass\n")
                workers[side].stdin.flush()
                record = json.loads(workers[side].stdout.readline())
                values[side].append(record["value"])
                print(json.dumps(dict(side=side, **record)), flush=True)
    finally:
        for worker in workers.values():
            worker.stdin.close()
            worker.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=("verdicts", "sweep", "mechbench"))
    parser.add_argument("--base", required=True, help="the commit to compare this checkout with")
    parser.add_argument("--rounds", type=int, default=None, help="default: 10 (16 pairs of passes for mechbench)")
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--problems", help=f"default: {PROBLEMS} ({MECHBENCH_TASKS} for mechbench)")
    parser.add_argument("--sweep", default="/tmp/fastscore-bench-sweep/sweep-10000-seed0-dup0.6.parquet")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 16 if args.what == "mechbench" else 10
    problems = args.problems or str(MECHBENCH_TASKS if args.what == "mechbench" else PROBLEMS)
    template = {"verdicts": VERDICTS, "sweep": SWEEP, "mechbench": MECHBENCH}[args.what]
    with tempfile.TemporaryDirectory() as folder:
        trees = {"base": export(args.base, Path(folder)), "this": ROOT}
        values: dict[str, list[float]] = {"base": [], "this": []}
        if args.what == "mechbench":  # warm workers, kernels loaded before the first pass
            paired(trees, lambda tree: template.format(tree=str(tree), problems=problems), args.rounds, values)
        else:
            for round_ in range(-1, args.rounds):  # round -1 compiles each side's kernels: not counted
                for side, tree in trees.items():
                    record = run(tree, template.format(tree=str(tree), problems=problems, passes=args.passes,
                                                       sweep=args.sweep))
                    if round_ >= 0:
                        values[side].append(record["value"])
                        print(json.dumps(dict(side=side, **record)), flush=True)
    ratios = [this / base for base, this in zip(values["base"], values["this"])]
    print(json.dumps({"median_base": statistics.median(values["base"]), "median_this": statistics.median(values["this"]),
                      "median_paired_ratio": statistics.median(ratios)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
