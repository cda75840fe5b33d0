"""Benchmark: real MechBench tasks: reference mechanisms solved, and mechanism submissions
scored per second end to end, beside MechBench's own approach, in the same run.

    python bench/bench_mechbench.py [--problems DIR ...] [--copies 2] [--sympy 12] [--timeout 30]

Tasks: the real MechBench task files in ``tests/data/mechbench-tasks`` (and any
others given with ``--problems``).  Per task, ``scripts/mechbench_study.py`` plants
submissions with known truth (the reference mechanism, renamed, shuffled, the law alone,
a perturbed target equation, wrong and malformed probe replies), ``--copies`` of each;
a copy identical to one already planted (only the renamed and shuffled kinds differ
from copy to copy) is left out, so every submission scored is unique and the rate is
of unique submissions.

fastscore: (1) ``solve_mechanism`` on each reference mechanism; (2) ``score_task`` on
the planted submissions, end to end (solve, law verdict, probe verdicts, split metrics),
all of them, again without the renamed and shuffled copies (which ``fastscore.solve.copies``
solves once a batch), and again with every block solved in its batch (none taken from
the reference mechanism's own blocks, ``Reference.own_blocks``, solved at set-up),
CPU seconds of this process, after a warm-up (one submission a task), caches emptied
before each of five passes of each (median pass; the three take their passes in turn);
agreement with the planted truth.

MechBench's approach, re-implemented here from its public description:
peel equations with one unknown left, in any order, with SymPy ``solve`` and
``simplify`` of each solution; solve what remains as one system with ``solve``;
then ``simplify(law - reference) == 0``.  Timed on the reference mechanisms and a sample
of ``--sympy`` submissions, each under ``--timeout`` seconds (``signal.alarm``).
Results go to ``bench/results/mechbench.md``.
"""
from __future__ import annotations

import argparse
import json
import platform
import random
import signal
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import sympy  # noqa: E402

from fastscore.problems.formats import load_problems  # noqa: E402
from fastscore.scoring.reference import Reference, build_reference, solve_reference_mechanism  # noqa: E402
from fastscore.scoring.task import score_task  # noqa: E402
from fastscore.settings import DEFAULT_SETTINGS  # noqa: E402
from fastscore.support import caches  # noqa: E402
from fastscore.support.collector import paused  # noqa: E402
from fastscore.tapes.warm import warm_up  # noqa: E402
from fastscore.text.answers import split_equations  # noqa: E402
from fastscore.text.parse import parse_equation  # noqa: E402
from mechbench_study import study  # noqa: E402

TASKS = ROOT / "tests" / "data" / "mechbench-tasks"
RESULTS = ROOT / "bench" / "results" / "mechbench.md"
PASSES = 5


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def sympy_approach(problem, mechanism: str, reference_law, *, timeout: float) -> tuple[float, str]:
    """MechBench's way: (seconds, outcome) to solve ``mechanism`` and compare its law."""
    sources = {v.name for v in problem.observed}
    names = (*sources, problem.target.name)
    started = time.process_time()
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        residuals = []
        for text in split_equations(mechanism):
            lhs, rhs = parse_equation(text, names=names, allow_new_names=True)
            residuals.append((lhs - rhs)._sympy_())  # our own parse, converted: never sympify of text
        symbols = {s for r in residuals for s in r.free_symbols}
        source_symbols = {s for s in symbols if s.name in sources}
        solved, pending = {}, list(residuals)
        progress = True
        while pending and progress:
            progress = False
            for residual in list(pending):
                reduced = sympy.simplify(residual.subs(solved))
                left = reduced.free_symbols - source_symbols
                if not left:
                    pending.remove(residual)
                    progress = True
                elif len(left) == 1:
                    unknown = next(iter(left))
                    roots = [sympy.simplify(r) for r in sympy.solve(reduced, unknown)]
                    if len(roots) >= 1:
                        solved[unknown] = roots[0]
                        pending.remove(residual)
                        progress = True
        if pending:
            rest = sorted({s for r in pending for s in r.free_symbols} - source_symbols - set(solved), key=str)
            found = sympy.solve([r.subs(solved) for r in pending], rest, dict=True)
            if not found:
                return time.process_time() - started, "unsolved"
            solved.update(found[0])
        law = next((v for k, v in solved.items() if k.name == problem.target.name), None)
        if law is None:
            return time.process_time() - started, "no law"
        for _ in range(3):
            law = law.subs(solved)
        same = sympy.simplify(law - reference_law._sympy_()) == 0
        return time.process_time() - started, "equivalent" if same else "not shown equivalent"
    except _Timeout:
        return timeout, f"timeout ({timeout:g} s)"
    except Exception as error:  # noqa: BLE001 - SymPy fails in many ways
        return time.process_time() - started, f"error: {type(error).__name__}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


COPIES = ("renamed", "shuffled")
"""The planted kinds that are copies of the task's own mechanism (``fastscore.solve.copies``)."""


def _pass(references, batches) -> tuple[float, list]:
    """CPU seconds of one pass over every batch (caches emptied first, as a fresh worker
    starts), and its outputs."""
    caches.clear()
    cpu = time.process_time()
    outputs = []
    for task, rows in batches.items():
        with paused():
            outputs.append(score_task(references[task], rows, settings=DEFAULT_SETTINGS))
    return time.process_time() - cpu, outputs


def _unseeded(references, batches) -> tuple[float, list]:
    """`_pass` with each batch solving every block itself (none from ``Reference.own_blocks``)."""
    own_blocks = Reference.own_blocks
    Reference.own_blocks = lambda self, settings: {}
    try:
        return _pass(references, batches)
    finally:
        Reference.own_blocks = own_blocks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=Path, action="append", help="MechBench task files (default: tests/data/mechbench-tasks)")
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--sympy", type=int, default=12, help="submissions in the SymPy sample")
    parser.add_argument("--timeout", type=float, default=30.0, help="SymPy seconds per mechanism")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    folders = args.problems or [TASKS]
    problems = [p for folder in folders for p in load_problems(folder) if p.format == "mechbench"]
    warm_up()
    started = time.perf_counter()
    with paused():  # as the executors do (fastscore.support.collector)
        references = {p.task_id: build_reference(p) for p in problems}
        setup = time.perf_counter() - started
        for reference in references.values():  # its mechanism's blocks, which each batch starts from
            reference.own_blocks(DEFAULT_SETTINGS)
    blocks = time.perf_counter() - started - setup

    # (1) reference mechanisms solved
    solve_ms = {}
    for problem in problems:
        reference = references[problem.task_id]
        points = {n: reference.domain.points[i] for i, n in enumerate(reference.domain.names)}
        samples = []
        for _ in range(5):
            with paused():
                t = time.perf_counter()
                solve_reference_mechanism(problem, points, constants=reference.constants, budget=60.0)
                samples.append(time.perf_counter() - t)
        solve_ms[problem.task_id] = 1000 * statistics.median(samples)

    # (2) planted submissions, end to end
    rng = random.Random(args.seed)
    batches, truth, planted = {}, {}, set()
    for copy in range(1, args.copies + 1):
        for problem in problems:
            for row in study(problem, copy=copy, rng=rng):
                probes = {p: row["replies"][p] for p in row["replies"]}
                submission = (problem.task_id, row["mechanism"], json.dumps(probes, sort_keys=True))
                if submission in planted:
                    continue  # the same submission again: scored once, so not counted
                planted.add(submission)
                batches.setdefault(problem.task_id, []).append(
                    {"config": row["kind"], "run": copy, "task": problem.task_id, "mechanism": row["mechanism"],
                     "probe_replies": json.dumps(probes)})
                truth[(row["kind"], copy, problem.task_id)] = (row["law_right"], row["probes_right"])
    n_rows = sum(len(rows) for rows in batches.values())
    started = time.perf_counter()
    with paused():  # one submission a task first, as a warm worker has scored before (lazy
        for task, rows in batches.items():  # reference state, first kernel dispatches)
            score_task(references[task], rows[:1], settings=DEFAULT_SETTINGS)
    warm = time.perf_counter() - started
    # every submission; without the copies (renamed, shuffled), which take another's solution in
    # the batch; with each batch solving every block itself: their passes in turn, so that the
    # machine's drift (minutes long on a shared machine) falls alike on the three
    distinct = {task: [r for r in rows if r["config"] not in COPIES] for task, rows in batches.items()}
    n_distinct = sum(map(len, distinct.values()))
    passes, passes_distinct, passes_unseeded = [], [], []
    for _ in range(PASSES):
        seconds, outputs = _pass(references, batches)
        passes.append(seconds)
        passes_distinct.append(_pass(references, distinct)[0])
        passes_unseeded.append(_unseeded(references, batches)[0])
    cpu, cpu_distinct, cpu_unseeded = map(statistics.median, (passes, passes_distinct, passes_unseeded))
    wrong = []
    for scores, probes in outputs:
        for r in scores:
            law_right, _ = truth[(r["config"], r["run"], r["task"])]
            if bool(r["p_equivalent"]) != law_right:
                wrong.append(f"law {r['config']} run {r['run']} `{r['task']}`: {r['p_verdict']} {r['error'] or ''}")
        for r in probes:
            right = truth[(r["config"], r["run"], r["task"])][1][r["probe"]]
            if bool(r["probe_equivalent"]) != right:
                wrong.append(f"probe {r['probe']} {r['config']} run {r['run']} `{r['task']}`: {r['probe_verdict']} "
                             f"{(r['probe_reason'] or '')[:80]}")
    n_probes = sum(len(p) for _, p in outputs)

    # (3) MechBench's approach on the same systems
    sympy_reference = {}
    for problem in problems:
        text = "\n".join(m["formula"] for m in problem.task["mechanism_model"])
        sympy_reference[problem.task_id] = sympy_approach(problem, text, references[problem.task_id].law.expr,
                                                          timeout=args.timeout)
    sample = rng.sample([(t, r) for t, rows in batches.items() for r in rows], min(args.sympy, n_rows))
    sympy_submissions = [sympy_approach(references[t].problem, r["mechanism"], references[t].law.expr,
                                        timeout=args.timeout) for t, r in sample]
    per_fastscore = cpu / n_rows
    per_sympy = statistics.median(s for s, _ in sympy_submissions)

    lines = ["# Real MechBench tasks: solving and scoring mechanism submissions", "",
             f"Command: `python bench/bench_mechbench.py {' '.join(sys.argv[1:])}`  ",
             f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC  ",
             f"Machine: {platform.machine()}, 2 cores shared with other jobs (noisy), Python "
             f"{platform.python_version()}, one core used.", "",
             f"Tasks: {len(problems)} ({', '.join(str(f) for f in folders)}); reference set-up (splits, points, "
             f"solve, bounded reference values) {setup:.1f} s, the reference mechanisms' blocks over the "
             f"submissions' points (`Reference.own_blocks`, which each batch starts from) {blocks:.2f} s, and a "
             f"warm-up (one submission a task, scored once: {warm:.1f} s), excluded from the rates.", "",
             "## Reference mechanisms solved (fastscore `solve_mechanism`, median of 5; MechBench's approach once)", "",
             "| task | fastscore ms | MechBench's approach | outcome |", "|---|---|---|---|"]
    for task in sorted(solve_ms, key=solve_ms.get, reverse=True):
        seconds, outcome = sympy_reference[task]
        lines.append(f"| {task} | {solve_ms[task]:.1f} | {seconds:.2f} s | {outcome} |")
    values = list(solve_ms.values())
    sympy_values = [s for s, _ in sympy_reference.values()]
    lines += ["", f"fastscore: median {statistics.median(values):.1f} ms, max {max(values):.1f} ms; "
                  f"MechBench's approach: median {statistics.median(sympy_values):.2f} s, max {max(sympy_values):.2f} s "
                  f"(CPU; timeouts count as {args.timeout:g} s).", "",
              "## Mechanism submissions end to end (solve, law verdict, probe verdicts, split metrics)", "",
              f"{n_rows} unique mechanism submissions (mechanism and probe replies) with {n_probes} probe "
              f"replies; passes (CPU s): "
              + ", ".join(f"{p:.2f}" for p in passes) + f"; median {cpu:.2f} s.", "",
              "| scorer | per submission | submissions/s (one core) | ratio |", "|---|---|---|---|",
              f"| fastscore `score_task` | {1000 * per_fastscore:.2f} ms | {n_rows / cpu:,.0f} | 1x |",
              f"| fastscore, without the {n_rows - n_distinct} copies ({', '.join(COPIES)}: each takes the "
              f"solution of the task's own mechanism in its batch) | {1000 * cpu_distinct / n_distinct:.2f} ms | "
              f"{n_distinct / cpu_distinct:,.0f} | |",
              f"| fastscore, every block solved in its batch (none taken from the reference mechanism's own, "
              f"`Reference.own_blocks`) | {1000 * cpu_unseeded / n_rows:.2f} ms | {n_rows / cpu_unseeded:,.0f} | |",
              f"| MechBench's approach (SymPy solve + simplify, {len(sample)} sampled) | {per_sympy:.2f} s | "
              f"{1 / per_sympy:.2f} | {per_sympy / per_fastscore:,.0f}x |", "",
              "Outcomes of the SymPy sample: " + ", ".join(sorted({o for _, o in sympy_submissions})) + ".", "",
              f"Agreement with the planted truth: {n_rows + n_probes - len(wrong)} of {n_rows + n_probes} verdicts "
              f"({100 * (1 - len(wrong) / (n_rows + n_probes)):.2f} %)."]
    if wrong:
        lines += ["", "Verdicts that differ from the planted truth (the construction's truth can be wrong: a "
                      "probe that is 0 stays right when scaled):", ""] + [f"- {w}" for w in wrong[:30]]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
