"""Benchmark: unique phenomenal submissions scored per second, end to end, on one core.

    python bench/bench_verdicts.py [--per-problem 60] [--sympy 40] [--numba 12] [--profile]

fastscore: ``score_task`` (parse -> verdict -> split metrics on train / id_test /
ood_test, 1,000 points each) over references built from the 72 MDBench problems, with
generated submissions per problem (exact rewrites, decimal constants, fitted constants,
perturbed and wrong variants), all distinct as text and as parsed expression.

Baselines, measured in the same run on a subsample of the same submissions:
(a) SymPy, the way existing tools do it: ``sympify`` both texts, ``simplify(cand - ref)
    == 0`` under a time limit (``signal.alarm``), ``lambdify`` to NumPy, evaluate the
    three splits, max relative error;
(b) Numba per formula: ``lambdify`` then ``numba.njit`` (one compile per formula),
    evaluate the three splits, max relative error.

One-time setup (problem loading, reference building, Numba cache load) is excluded from
the rates and reported separately.  Each of the five timed passes starts with
fastscore's caches emptied (then each problem's own law is scored once, untimed), so
repeating the same submissions gains nothing; the rate is the median pass.  Results go to ``bench/results/verdicts.md``.
"""
from __future__ import annotations

import argparse
import cProfile
import gc
import io
import os
import platform
import pstats
import random
import re
import signal
import statistics
import sys
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import symengine as se  # noqa: E402

from fastscore.problems.formats import load_problems  # noqa: E402
from fastscore.scoring.reference import build_reference  # noqa: E402
from fastscore.scoring.task import score_task  # noqa: E402
from fastscore.settings import DEFAULT_SETTINGS  # noqa: E402
from fastscore.support import caches  # noqa: E402
from fastscore.support.collector import paused  # noqa: E402
from fastscore.text.answers import read_expression  # noqa: E402
from fastscore.text.tokens import ParseError  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PROBLEMS = ROOT / "tests" / "data" / "mdbench-problems"
RESULTS = ROOT / "bench" / "results" / "verdicts.md"
SPLITS = ("train", "id_test", "ood_test")
SIMPLIFY_SECONDS = 10
PASSES = 5
_NUMBER = re.compile(r"(?<![\w.])(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?(?![\w.])")


# ---------------------------------------------------------------- submissions


def submissions_for(reference, *, limit: int, rng: random.Random) -> list[tuple[str, bool]]:
    """Up to ``limit`` submission texts for one problem, distinct as text and as parsed
    expression, each with its intended truth (True: a correct rewrite)."""
    problem = reference.problem
    rhs = problem.law.split("=", 1)[1].strip() if "=" in problem.law else problem.law.strip()
    law = reference.law.expr
    inputs = [se.Symbol(v.name) for v in problem.observed]
    positive = reference.domain.positive
    correct = [rhs, rhs.replace("^", "**"), rhs.replace("**", "^"), str(law), str(se.expand(law)),
               f"y = {rhs}", f"({rhs})*1.0", f"2*({rhs})/2", f"({rhs})*(1 + 1e-10)", f"(({rhs}))**1"]
    correct += [rhs.replace(word, decimal) for word, decimal in
                (("π", "3.141592653589793"), ("pi", "3.141592653589793"), ("pi", "3.14159265359"))]
    correct += [_scale_number(rhs, match, 1 + sign * 1e-9) for match in _NUMBER.finditer(rhs) for sign in (1, -1)]
    correct.append(f"1/(1/({rhs}))")
    values = reference.law.values[np.isfinite(reference.law.values)]
    if values.size and values.min() > 0:  # identities of positive quantities
        correct += [f"exp(log({rhs}))", f"sqrt(({rhs})**2)", f"(({rhs})**2)**0.5"]
    for s in inputs:
        if s.name in positive:
            correct += [str(law.subs({s: se.exp(se.log(s))})), str(law.subs({s: se.sqrt(s**2)})),
                        str(law.subs({s: (s**3) ** se.Rational(1, 3)}))]
        correct += [str(law.subs({s: s * (1 + se.Rational(1, 10**10))}))]
    wrong = [f"-({rhs})", f"({rhs})*1.001", f"({rhs})*0.999", f"({rhs})*2", f"({rhs})*(1 + 1e-4)",
             f"({rhs})**1.001", f"sqrt({rhs})", f"({rhs})**2"]
    wrong += [_scale_number(rhs, match, factor) for match in _NUMBER.finditer(rhs) for factor in (1.001, 0.999, 2)]
    for s in inputs:
        wrong += [str(law.subs({s: 1.001 * s})), str(law * s ** se.Rational(1, 1000)), str(law.subs({s: s**2})),
                  str(law.subs({s: 2 * s})), str(law * s)]
    for s, t in zip(inputs, inputs[1:]):
        swap = se.Symbol("_swap")
        wrong.append(str(law.subs({s: swap}).subs({t: s}).subs({swap: t})))
    rng.shuffle(correct)
    rng.shuffle(wrong)
    chosen, seen_text, seen_expr = [], set(), set()
    names = reference.knowns
    seen_expr.add(str(law))  # a "wrong" variant that does not change the law is not wrong
    for text, truth in _interleave(correct, wrong):
        if len(chosen) == limit:
            break
        if text in seen_text:
            continue
        seen_text.add(text)
        try:
            expr = read_expression(text, target=problem.target.name, names=names)
        except (ParseError, ValueError):
            continue
        key = str(expr.subs(reference.constants))
        if key in seen_expr and not (truth and key == str(law) and not chosen):
            continue
        seen_expr.add(key)
        chosen.append((text, truth))
    return chosen


def _interleave(correct, wrong):
    for i in range(max(len(correct), len(wrong))):
        if i < len(correct):
            yield correct[i], True
        if i < len(wrong):
            yield wrong[i], False


def _scale_number(text: str, match: re.Match, factor: float) -> str:
    value = float(match.group(0)) * factor
    return f"{text[:match.start()]}{value:.12g}{text[match.end():]}"


# ---------------------------------------------------------------- fastscore


def run_fastscore(references, batches, *, profile: bool):
    """Score every batch with ``score_task``; returns (CPU seconds, wall seconds), rows
    and the profile text.  Caches start empty except for what scoring each problem's own
    law once (untimed) leaves in them: a worker in a sweep has seen its problems before,
    never these submissions.  The collector is paused for each batch, as the executors
    pause it for each unit."""
    caches.clear()
    for reference in references:
        with paused():
            score_task(reference, [{"config": "warm", "run": 0, "task": reference.problem.task_id,
                                    "phenomenal": reference.problem.law}])
    profiler = cProfile.Profile() if profile else None
    rows_out, seconds, wall = [], 0.0, 0.0
    for reference, batch in zip(references, batches):
        rows = [{"config": f"gen{i}", "run": 0, "task": reference.problem.task_id, "phenomenal": text}
                for i, (text, _) in enumerate(batch)]
        if profiler:
            profiler.enable()
        with paused():
            started, cpu = time.perf_counter(), time.process_time()
            score_rows, _ = score_task(reference, rows, settings=DEFAULT_SETTINGS)
            seconds += time.process_time() - cpu
            wall += time.perf_counter() - started
        if profiler:
            profiler.disable()
        rows_out.append(score_rows)
    return (seconds, wall), rows_out, (_profile_report(profiler) if profiler else None)


def machine_check() -> float:
    """CPU seconds of a fixed pure-Python loop: how fast the shared machine runs Python
    right now (the same code took 0.22-0.37 s here from minute to minute)."""
    started = time.process_time()
    total = 0
    for i in range(3_000_000):
        total += i * i % 7
    return time.process_time() - started


# (module file, function) of the stages whose cumulative share of ``score_task`` is reported
STAGES = [
    ("task.py", "score_task", "score_task (everything)"),
    ("candidates.py", "build_candidate", "parse (read_expression + count_nodes)"),
    ("parse.py", "parse_expression", "  of which parse_expression"),
    ("values.py", "_evaluate", "evaluate distinct candidates (tapes + kernel)"),
    ("compile.py", "compile_tape", "  of which compile_tape (Python)"),
    ("evaluate.py", "evaluate_batch", "  of which the Numba kernel"),
    ("judge.py", "judge_law", "judge law + split metrics"),
    ("equivalence.py", "judge", "  equivalence.judge"),
    ("screen.py", "screen", "    float64 screen (kernel)"),
    ("equivalence.py", "run", "    unreliable points (_Recheck.run)"),
    ("equivalence.py", "_certified", "      certified differences (error bounds)"),
    ("precision.py", "value", "      high-precision values (MPFR, 50 digits)"),
    ("canonical.py", "prove_equal", "    canonical.prove_equal"),
    ("rewrites.py", "expand_arguments", "      expand_arguments"),
    ("canonical.py", "_zero_rule", "      _zero_rule (expand / numer-denom)"),
    ("metrics.py", "split_metrics", "  split_metrics (id + ood)"),
    ("rows.py", "_score_row", "build output rows"),
]


def _profile_report(profiler) -> str:
    """Cumulative time and share of each stage, then the top functions by own time."""
    stats = pstats.Stats(profiler)
    cumulative: dict[tuple[str, str], tuple[int, float]] = {}
    for (filename, _, function), (_, calls, _, cumtime, _) in stats.stats.items():
        key = (Path(filename).name, function)
        old = cumulative.get(key, (0, 0.0))
        cumulative[key] = (old[0] + calls, max(old[1], cumtime))
    total = cumulative.get(("task.py", "score_task"), (0, 1.0))[1]
    lines = ["| stage | calls | cumulative s | share of score_task |", "|---|---|---|---|"]
    for module, function, label in STAGES:
        calls, seconds = cumulative.get((module, function), (0, 0.0))
        lines.append(f"| `{label}` | {calls} | {seconds:.2f} | {100 * seconds / total:.1f}% |")
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(20)
    body = stream.getvalue()
    return "\n".join(lines) + "\n\nTop functions by own time:\n\n```\n" + body[body.find("ncalls"):].strip() + "\n```"


# ---------------------------------------------------------------- baselines


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _sympy_pair(reference, text: str):
    """Both sides as SymPy expressions, names declared as symbols (our own trusted texts)."""
    import sympy

    names = list(reference.domain.names)
    local = {name: sympy.Symbol(name) for name in names}
    candidate = read_expression(text, target=reference.problem.target.name, names=reference.knowns)
    cand = sympy.sympify(str(candidate.subs(reference.constants)), locals=local)
    ref = sympy.sympify(str(reference.law.expr), locals=local)
    return [local[n] for n in names], cand, ref


def _split_inputs(reference, split: str) -> list[np.ndarray]:
    """Rows of ``domain.names`` for a split (its inputs, then the constants)."""
    points = reference.domain.points[:, reference.segment_slice(split)]
    return [np.ascontiguousarray(row) for row in points]


def _max_rel_err(predicted, observed) -> float:
    with np.errstate(all="ignore"):
        predicted = np.broadcast_to(np.asarray(predicted, dtype=float), observed.shape)
        return float(np.max(np.abs(predicted - observed) / np.abs(observed)))


def baseline_sympy(reference, text: str) -> tuple[float, bool | None]:
    """SymPy as existing tools use it; returns (CPU seconds, simplify says equal / None on timeout)."""
    import sympy

    started = time.process_time()
    symbols, cand, ref = _sympy_pair(reference, text)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(SIMPLIFY_SECONDS)
    try:
        equal = sympy.simplify(cand - ref) == 0
    except _Timeout:
        equal = None
    finally:
        signal.alarm(0)
    function = sympy.lambdify(symbols, cand, "numpy")
    for split in SPLITS:
        _max_rel_err(function(*_split_inputs(reference, split)), reference.target_values(split))
    return time.process_time() - started, equal


def baseline_numba(reference, text: str) -> float:
    """lambdify + numba.njit per formula (compile dominates), then the three splits; CPU seconds."""
    import numba
    import sympy

    started = time.process_time()
    symbols, cand, _ = _sympy_pair(reference, text)
    function = numba.njit(sympy.lambdify(symbols, cand, "numpy"))
    for split in SPLITS:
        _max_rel_err(function(*_split_inputs(reference, split)), reference.target_values(split))
    return time.process_time() - started


# ---------------------------------------------------------------- main


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-problem", type=int, default=60, help="unique submissions per problem")
    parser.add_argument("--sympy", type=int, default=40, help="SymPy baseline subsample")
    parser.add_argument("--numba", type=int, default=12, help="Numba-per-formula baseline subsample")
    parser.add_argument("--profile", action="store_true", help="cProfile the fastscore pass")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)

    started = time.perf_counter()
    problems = load_problems(PROBLEMS)
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    with paused():
        references = [build_reference(p, settings=DEFAULT_SETTINGS) for p in problems]
    gc.freeze()  # long-lived references leave the collector's scans, as the executors do
    reference_seconds = time.perf_counter() - started
    batches = [submissions_for(r, limit=args.per_problem, rng=rng) for r in references]
    n_unique = sum(len(b) for b in batches)

    started = time.perf_counter()  # Numba cache load and first-call costs (every kernel), excluded
    with paused():
        score_task(references[0], [{"config": "warm", "run": 0, "task": references[0].problem.task_id,
                                    "phenomenal": text} for text, _ in batches[0]])
    warm_seconds = time.perf_counter() - started

    _log(f"setup: load {load_seconds:.2f} s, references {reference_seconds:.2f} s, warm {warm_seconds:.2f} s, "
         f"{n_unique} unique submissions")
    checks, passes = [], []
    for _ in range(PASSES):
        checks.append(machine_check())
        passes.append(run_fastscore(references, batches, profile=False))
    _log(f"fastscore passes (cpu, wall): {[p[0] for p in passes]}")
    seconds, wall = sorted(p[0] for p in passes)[PASSES // 2]  # median pass (by CPU time)
    rows = passes[0][1]
    rate = n_unique / seconds
    verdicts, confusion, suspects = _tally(batches, rows)

    flat = [(r, text) for r, batch in zip(references, batches) for text, _ in batch]
    sample = rng.sample(flat, min(args.sympy, len(flat)))
    sympy_times, timeouts = [], 0
    for reference, text in sample:
        elapsed, equal = baseline_sympy(reference, text)
        sympy_times.append(elapsed)
        timeouts += equal is None
    _log(f"sympy: median {statistics.median(sympy_times):.3f} s over {len(sympy_times)}")
    numba_times = [baseline_numba(r, t) for r, t in rng.sample(flat, min(args.numba, len(flat)))]
    sympy_rate = 1 / statistics.median(sympy_times)
    numba_rate = 1 / statistics.median(numba_times)

    profile = run_fastscore(references, batches, profile=True)[2] if args.profile else None
    text = _report(args, n_unique=n_unique, n_problems=len(references), seconds=seconds,
                   all_seconds=[p[0] for p in passes], checks=checks, wall=wall, rate=rate, load=load_seconds,
                   build=reference_seconds, warm=warm_seconds, sympy_times=sympy_times, timeouts=timeouts,
                   numba_times=numba_times, sympy_rate=sympy_rate, numba_rate=numba_rate,
                   verdicts=verdicts, confusion=confusion, suspects=suspects, profile=profile)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)
    return 0


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _tally(batches, rows):
    verdicts, confusion, suspects = Counter(), Counter(), []
    for batch, score_rows in zip(batches, rows):
        for (text, intended), row in zip(batch, score_rows):
            verdict = row["p_verdict"] or row["status"]
            verdicts[verdict] += 1
            confusion[(intended, verdict)] += 1
            if not intended and row["p_equivalent"]:
                suspects.append((row["task"], text, verdict, row["p_reason"]))
    return verdicts, confusion, suspects


def _report(args, *, n_unique, n_problems, seconds, all_seconds, checks, wall, rate, load, build, warm, sympy_times,
            timeouts, numba_times, sympy_rate, numba_rate, verdicts, confusion, suspects, profile) -> str:
    sympy_median, numba_median = statistics.median(sympy_times), statistics.median(numba_times)
    lines = [
        "# Verdict throughput: fastscore vs SymPy and per-formula Numba",
        "",
        f"Command: `{Path(sys.executable).name} bench/bench_verdicts.py "
        f"--per-problem {args.per_problem} --sympy {args.sympy} --numba {args.numba}"
        f"{' --profile' if args.profile else ''}`  ",
        f"Date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}  ",
        f"Machine: {platform.machine()}, {os.cpu_count()} cores shared with other jobs (noisy), "
        f"Python {platform.python_version()}, one core used (`NUMBA_NUM_THREADS=1`, single process).",
        "",
        f"Workload: {n_problems} MDBench problems, {n_unique} unique phenomenal submissions "
        f"(distinct text and distinct parsed expression), end to end per submission: parse, "
        f"equivalence verdict ({DEFAULT_SETTINGS.n_points} domain points + 3 x {DEFAULT_SETTINGS.n_samples} "
        "split points), split metrics on the three 1,000-point splits.",
        "",
        "| scorer | per submission (median) | submissions/s (one core) | fastscore speed-up |",
        "|---|---|---|---|",
        f"| fastscore `score_task` (batch per problem) | {1e3 / rate:.3f} ms (mean) | {rate:,.0f} | 1x |",
        f"| SymPy simplify + lambdify + NumPy ({len(sympy_times)} sampled) | {sympy_median * 1e3:,.1f} ms | "
        f"{sympy_rate:,.2f} | {rate / sympy_rate:,.0f}x |",
        f"| lambdify + `numba.njit` per formula ({len(numba_times)} sampled) | {numba_median * 1e3:,.1f} ms | "
        f"{numba_rate:,.2f} | {rate / numba_rate:,.0f}x |",
        "",
        "All times are CPU seconds of this process (`time.process_time`), the fair measure of one "
        "core on a shared machine; wall-clock is given for the fastscore passes.  ",
        f"fastscore passes, CPU s (wall s): {', '.join(f'{c:.2f} ({w:.2f})' for c, w in all_seconds)}; "
        f"median pass {seconds:.2f} s CPU, {wall:.2f} s wall ({n_unique / wall:,.0f}/s wall).  ",
        "Machine check just before each pass (`machine_check`: a fixed pure-Python loop, CPU s; the "
        f"same loop took 0.22 s on a quiet machine): {', '.join(f'{c:.2f}' for c in checks)}.  ",
        f"SymPy per-submission seconds: min {min(sympy_times):.3f}, median {sympy_median:.3f}, "
        f"max {max(sympy_times):.3f}; simplify timeouts ({SIMPLIFY_SECONDS} s): {timeouts}.  ",
        f"Numba per-formula seconds: min {min(numba_times):.3f}, median {numba_median:.3f}, "
        f"max {max(numba_times):.3f}.",
        "",
        f"Targets: >= 2,000 submissions/s on one core: **{'met' if rate >= 2000 else 'missed'}** "
        f"({rate:,.0f}/s); >= 100x SymPy: **{'met' if rate / sympy_rate >= 100 else 'missed'}** "
        f"({rate / sympy_rate:,.0f}x).",
        "",
        "Excluded one-time setup: "
        f"loading {n_problems} problems {load:.2f} s; building references (splits, domain points, "
        f"reference values, reference mechanisms) {build:.2f} s; a first `score_task` call on "
        f"one problem's submissions (Numba cache load of every kernel) {warm:.2f} s. Every pass "
        "starts with fastscore's caches emptied (`fastscore.support.caches.clear()`) and each problem's own law "
        "scored once, untimed: a worker that knows its problems but has never seen these submissions.",
        "",
        "Verdicts of the generated submissions (sanity check; 'intended' is how the submission was "
        "generated, not an independent truth):",
        "",
        "| intended | " + " | ".join(sorted(verdicts)) + " |",
        "|---|" + "---|" * len(verdicts),
    ]
    for intended in (True, False):
        cells = " | ".join(str(confusion[(intended, v)]) for v in sorted(verdicts))
        lines.append(f"| {'correct rewrite' if intended else 'perturbed/wrong'} | {cells} |")
    if suspects:
        lines += ["", f"Perturbed submissions judged equivalent ({len(suspects)}; small perturbations of a "
                  "variable that barely matters can legitimately stay within rtol):", ""]
        lines += [f"- `{task}`: `{text}` -> {verdict} ({reason})" for task, text, verdict, reason in suspects[:20]]
    if profile:
        lines += ["", "## cProfile of one fastscore pass (profiler overhead inflates Python-heavy stages)",
                  "", profile]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
