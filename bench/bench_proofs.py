"""Benchmark: is ``proven`` at least as strong as MechBench's symbolic check?

    python bench/bench_proofs.py [--sweep SWEEP --tasks DIR ...] [--study DIR] [--timeout 20]

Counts the laws that a symbolic check proves equal to the task's law and fastscore does
not prove (``numeric`` or worse), over:

1. real attempts with the harness's own verdict: each ``--sweep`` (JSON lines with
   ``harness_law_symbolic``) with its ``--tasks`` folder; by default the six published
   Circular Orbit attempts of ``tests/data/real/proofs``, which the harness proves;
2. the real-task study: the planted submissions of ``scripts/mechbench_study.py`` on the
   MechBench task files of each ``--study`` folder (default: ``tests/data/mechbench-tasks``
   and the Circular Orbit tasks of
   ``tests/data/real/proofs``), plus, for each task with a fixed coefficient
   whose value is pi, its own mechanism with that coefficient named ``pi`` (the real
   attempts' habit: ``pi = 3.141592653589793``).  There the reference checker is SymPy:
   ``simplify(law - reference) == 0`` with every name the domain keeps positive declared
   positive, on fastscore's own expressions (the derived law as fastscore writes it, read
   back by fastscore's parser, and the task's law), each under ``--timeout`` seconds.

Results go to ``bench/results/proofs.md``.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import signal
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import sympy  # noqa: E402

from fastscore.problems.formats import load_problems  # noqa: E402
from fastscore.scoring.reference import build_reference  # noqa: E402
from fastscore.scoring.task import score_task  # noqa: E402
from fastscore.text.parse import parse_expression  # noqa: E402
from mechbench_study import _own_formulas, _rename, study  # noqa: E402

REAL = ROOT / "tests" / "data" / "real" / "proofs"
STUDY = ROOT / "tests" / "data" / "mechbench-tasks"
RESULTS = ROOT / "bench" / "results" / "proofs.md"


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def sympy_equal(law, reference, positive: frozenset[str], timeout: float) -> bool | None:
    """SymPy's verdict on ``law == reference`` (SymEngine expressions, converted, never
    text): True, False, or None on a timeout or a SymPy failure."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        difference = law._sympy_() - reference._sympy_()
        difference = difference.xreplace({s: sympy.Symbol(s.name, positive=True)
                                          for s in difference.free_symbols if s.name in positive})
        return sympy.simplify(difference) == 0
    except _Timeout:
        return None
    except Exception:  # noqa: BLE001 - SymPy fails in many ways
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def real_attempts(sweep: Path, tasks: Path) -> list[dict]:
    """fastscore's verdict beside the harness's, per attempt."""
    references = {p.task_id: build_reference(p) for p in load_problems(tasks)}
    rows = [json.loads(line) for line in sweep.read_text().splitlines() if line.strip()]
    out = []
    for task, reference in references.items():
        batch = [{**r, "probes": json.dumps(r["probes"])} if isinstance(r.get("probes"), dict) else r
                 for r in rows if r["task"] == task]
        if not batch:
            continue
        started = time.process_time()
        scores, _ = score_task(reference, batch)
        seconds = (time.process_time() - started) / len(batch)
        for row, score in zip(batch, scores):
            out.append({"task": task, "config": row["config"], "run": row["run"],
                        "harness": row.get("harness_law_symbolic"), "verdict": score["p_verdict"] or score["status"],
                        "reason": score["p_reason"] or score["error"], "seconds": seconds})
    return out


def _study_rows(problem) -> list[dict]:
    rows = [{"kind": r["kind"], "mechanism": r["mechanism"]} for r in study(problem, copy=1, rng=random.Random(7))]
    named = [c.name for c in problem.coefficients if _is_pi(c.formula)]
    if named:
        rows.append({"kind": "pi-named", "mechanism": "\n".join(
            _rename(f, {named[0]: "pi"}) for f in _own_formulas(problem))})
    return rows


def _is_pi(formula: str) -> bool:
    try:
        return math.isclose(float(formula), math.pi, rel_tol=1e-15)  # a coefficient's formula: its value
    except ValueError:
        return False


def real_study(folder: Path, timeout: float) -> list[dict]:
    """fastscore's verdict beside SymPy's, per distinct derived law of the planted study."""
    out = []
    for problem in load_problems(folder):
        if problem.format != "mechbench":
            continue
        reference = build_reference(problem)
        rows = [{"config": r["kind"], "run": 1, "task": problem.task_id, "mechanism": r["mechanism"]}
                for r in _study_rows(problem)]
        scores, _ = score_task(reference, rows)
        seen = set()
        for score in scores:
            formula = score["derived_formula"]
            key = (score["config"] == "pi-named", formula)  # each law once, the pi-named kind's apart
            if score["status"] != "ok" or not formula or key in seen or formula.startswith("<"):
                continue
            seen.add(key)
            law = parse_expression(formula, names=reference.knowns)
            started = time.process_time()
            equal = sympy_equal(law, reference.law.expr, reference.domain.positive, timeout)
            out.append({"task": problem.task_id, "config": score["config"], "verdict": score["p_verdict"],
                        "sympy": equal, "sympy_seconds": time.process_time() - started})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sweep", type=Path, action="append", help="a sweep with harness_law_symbolic")
    parser.add_argument("--tasks", type=Path, action="append", help="its task files (one folder per --sweep)")
    parser.add_argument("--study", type=Path, action="append", help="MechBench task files for the planted study")
    parser.add_argument("--timeout", type=float, default=20.0, help="SymPy seconds per law")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    sweeps = list(zip(args.sweep or [REAL / "sweep.jsonl"], args.tasks or [REAL / "tasks"]))
    lines = ["# Proofs: fastscore's `proven` against a symbolic check", "",
             f"Command: `python bench/bench_proofs.py{' '.join(sys.argv[1:]) and ' ' + ' '.join(sys.argv[1:])}`  ",
             f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}", "",
             "## Real attempts, with the harness's own verdict", "",
             "| task | config | run | harness symbolic | fastscore | reason |", "|---|---|---|---|---|---|"]
    missed = 0
    for sweep, tasks in sweeps:
        for r in real_attempts(sweep, tasks):
            lines.append(f"| {r['task']} | {r['config']} | {r['run']} | {r['harness']} | {r['verdict']} | "
                         f"{r['reason']} |")
            missed += bool(r["harness"]) and r["verdict"] != "proven"
    lines += ["", f"Harness proves, fastscore does not: **{missed}**.", ""]
    total = missed
    folders = args.study or [f for f in (STUDY, REAL / "tasks") if f.is_dir()]
    if folders:
        rows = [r for folder in folders for r in real_study(folder, args.timeout)]
        table = Counter((r["sympy"], r["verdict"]) for r in rows)
        gap = [r for r in rows if r["sympy"] and r["verdict"] != "proven"]
        total += len(gap)
        lines += ["## Real-task study (planted submissions; SymPy `simplify` as the reference checker)", "",
                  f"{len(rows)} distinct derived laws (the pi-named kind's apart) over the tasks of {', '.join(f'`{f.name}`' for f in folders)}; "
                  f"kinds: {', '.join(f'{k} {n}' for k, n in sorted(Counter(r['config'] for r in rows).items()))}.", "",
                  "| SymPy | fastscore | laws |", "|---|---|---|"]
        lines += [f"| {'equal' if s else 'timeout/failed' if s is None else 'not shown equal'} | {v} | {n} |"
                  for (s, v), n in sorted(table.items(), key=str)]
        lines += ["", f"SymPy proves, fastscore does not: **{len(gap)}**."]
        lines += [f"- `{r['task']}` ({r['config']}): {r['verdict']}" for r in gap]
        lines += [f"- fastscore proves, SymPy does not show: `{r['task']}` ({r['config']})"
                  for r in rows if r["verdict"] == "proven" and not r["sympy"]]
        seconds = sorted(r["sympy_seconds"] for r in rows)
        if seconds:
            lines += ["", f"SymPy seconds per law: median {seconds[len(seconds) // 2]:.2f}, max {seconds[-1]:.2f}."]
    text = "\n".join(lines) + "\n"
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
