"""Mechanism submissions solved per second: fastscore vs MDBench's approach.

The 72 reference mechanisms, intermediates renamed (``h0, h1, ...``) and equations
shuffled, are solved by ``fastscore.solve.mechanism.solve_mechanism`` with 200 domain points
(branch choice, numeric blocks), explicit and implicit mechanisms timed separately.
For implicit ones the target's values at the 200 points (``Solution.values``) are
included, as the baseline's per-sample root finding produces them.

Baseline, in the same run on a handful of problems: SymPy ``solve`` of the whole
system for all unknowns, then, for implicit mechanisms, per-sample
``scipy.optimize.least_squares`` on the residuals (lambdified SymPy objects we built)
measured on a few samples and extrapolated linearly to the 200 points.

Usage: python bench/bench_solve.py [--repeat 5] [--baseline 4] [--samples 10] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import signal
import sys
import time
from pathlib import Path

import numpy as np
import scipy.optimize
import symengine as se
import sympy

from fastscore.problems.formats import load_problems
from fastscore.problems.splits import sample_inputs
from fastscore.solve.mechanism import solve_mechanism
from fastscore.support.collector import paused
from fastscore.text.parse import parse_equation

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "tests" / "data" / "mdbench-problems"
N_POINTS = 200
SYMPY_TIMEOUT = 60.0


class _Timeout(Exception):
    pass


def _prepare(problem, rng):
    """Renamed, shuffled equations and domain points (constants broadcast)."""
    names = (*problem.known_names, problem.target.name)
    equations = [parse_equation(e.text, names=names, allow_new_names=True) for e in problem.mechanism]
    renames = {se.Symbol(v.name): se.Symbol(f"h{i}") for i, v in enumerate(problem.intermediates)}
    equations = [(lhs.xreplace(renames), rhs.xreplace(renames)) for lhs, rhs in equations]
    equations = [equations[i] for i in rng.permutation(len(equations))]
    points = sample_inputs(problem, region="domain", n=N_POINTS, rng=rng)
    points.update({c.name: np.full(N_POINTS, c.value) for c in problem.constants})
    return equations, points


def _is_explicit(equations, knowns) -> bool:
    """A chain of definitions ``name = expr`` (either side), each in earlier names."""
    defined = set(knowns)
    pending = list(equations)
    while pending:
        for i, (lhs, rhs) in enumerate(pending):
            for name_side, other in ((lhs, rhs), (rhs, lhs)):
                if name_side.is_Symbol and name_side.name not in defined and {
                    s.name for s in other.free_symbols
                } <= defined:
                    defined.add(name_side.name)
                    del pending[i]
                    break
            else:
                continue
            break
        else:
            return False
    return True


def _fastscore(cases, repeat):
    """Seconds per solve for each case (best of ``repeat``)."""
    times = []
    for problem, equations, points, explicit in cases:
        target = problem.target.name
        best = float("inf")
        for _ in range(repeat):
            with paused():  # as the executors do (fastscore.support.collector)
                started = time.perf_counter()
                solution = solve_mechanism(equations, knowns=problem.known_names, target=target, points=points)
                if not explicit:
                    solution.values([target], points)
                best = min(best, time.perf_counter() - started)
        times.append(best)
    return np.array(times)


def _with_timeout(seconds, function, *args, **kwargs):
    def on_alarm(signum, frame):
        raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return function(*args, **kwargs)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _baseline(problem, equations, points, explicit, n_samples):
    """MDBench-style seconds: SymPy solve of the system (+ per-sample least squares,
    extrapolated to N_POINTS samples, for implicit mechanisms)."""
    known = set(problem.known_names)
    sym_equations = [sympy.Eq(lhs._sympy_(), rhs._sympy_()) for lhs, rhs in equations]
    unknowns = sorted({s for eq in sym_equations for s in eq.free_symbols if s.name not in known}, key=str)
    started = time.perf_counter()
    try:
        _with_timeout(SYMPY_TIMEOUT, sympy.solve, sym_equations, unknowns, dict=True)
    except _Timeout:
        pass
    solve_seconds = time.perf_counter() - started
    if explicit:
        return solve_seconds, solve_seconds
    known_symbols = [sympy.Symbol(n) for n in problem.known_names]
    residuals = sympy.lambdify([known_symbols, unknowns], [eq.lhs - eq.rhs for eq in sym_equations], "numpy")
    started = time.perf_counter()
    for s in range(n_samples):
        values = [points[n][s] for n in problem.known_names]
        scipy.optimize.least_squares(lambda u, values=values: residuals(values, u), np.ones(len(unknowns)))
    per_sample = (time.perf_counter() - started) / n_samples
    return solve_seconds, solve_seconds + per_sample * N_POINTS


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", type=int, default=4, help="problems per class for the baseline")
    parser.add_argument("--samples", type=int, default=10, help="least-squares samples measured per problem")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "solve.md")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(20260725)
    cases = []
    for problem in load_problems(PROBLEMS):
        equations, points = _prepare(problem, rng)
        cases.append((problem, equations, points, _is_explicit(equations, problem.known_names)))
    _fastscore(cases, 1)  # warm-up: Numba kernels loaded, caches filled
    seconds = _fastscore(cases, args.repeat)
    explicit = np.array([c[3] for c in cases])
    numeric = []
    for problem, equations, points, _ in cases:
        solution = solve_mechanism(equations, knowns=problem.known_names, target=problem.target.name, points=points)
        if solution.law is None:
            numeric.append(problem.task_id)

    rows = []
    for is_explicit in (True, False):
        chosen = [i for i, c in enumerate(cases) if c[3] == is_explicit]
        # the baseline's handful: the first problems in file order, plus the two that
        # MDBench solves numerically when they are in this class
        picks = chosen[: args.baseline]
        for name in ("bound-particle-orbital-radius-variant2", "narrow-tube-liquid-rise-variant1"):
            i = next(i for i, c in enumerate(cases) if c[0].task_id == name)
            if i in chosen and i not in picks:
                picks.append(i)
        for i in picks:
            problem, equations, points, _ = cases[i]
            solve_s, total_s = _baseline(problem, equations, points, is_explicit, args.samples)
            rows.append((problem.task_id, is_explicit, seconds[i], solve_s, total_s))

    lines = _report(args, cases, seconds, explicit, numeric, rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _report(args, cases, seconds, explicit, numeric, rows):
    n_exp, n_imp = int(explicit.sum()), int((~explicit).sum())
    rate_exp = n_exp / seconds[explicit].sum()
    rate_imp = n_imp / seconds[~explicit].sum()
    command = "python bench/bench_solve.py " + " ".join(sys.argv[1:])
    lines = [
        "# Mechanism solving throughput",
        "",
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"- command: `{command.strip()}` (repeat {args.repeat}, best of repeats per mechanism)",
        f"- machine: {platform.machine()}, Python {platform.python_version()}, one process, one core",
        f"- mechanisms: the 72 MDBench reference mechanisms, intermediates renamed and equations "
        f"shuffled; {N_POINTS} domain points each",
        f"- explicit (a chain of definitions): {n_exp}; implicit: {n_imp}",
        f"- solved numerically (no closed form): {', '.join(numeric) or 'none'}",
        "",
        "| class | mechanisms | fastscore solves/s | median ms |",
        "|---|---|---|---|",
        f"| explicit | {n_exp} | {rate_exp:,.0f} | {1000 * np.median(seconds[explicit]):.2f} |",
        f"| implicit (+ target values at {N_POINTS} points) | {n_imp} | {rate_imp:,.0f} | "
        f"{1000 * np.median(seconds[~explicit]):.2f} |",
        "",
        "## Against MDBench's approach (same run)",
        "",
        f"SymPy `solve` of the system for all unknowns (timeout {SYMPY_TIMEOUT:g} s); implicit "
        f"mechanisms then per-sample `scipy.optimize.least_squares` on the residuals, "
        f"measured on {args.samples} samples and extrapolated linearly to {N_POINTS}.",
        "",
        "| problem | class | fastscore ms | SymPy solve ms | MDBench total ms | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    for task, is_explicit, ours, solve_s, total_s in rows:
        lines.append(
            f"| {task} | {'explicit' if is_explicit else 'implicit'} | {1000 * ours:.2f} | "
            f"{1000 * solve_s:.0f} | {1000 * total_s:.0f} | {total_s / ours:,.0f}x |"
        )
    for is_explicit, label in ((True, "explicit"), (False, "implicit")):
        ours = sum(r[2] for r in rows if r[1] == is_explicit)
        theirs = sum(r[4] for r in rows if r[1] == is_explicit)
        if ours:
            lines.append(f"\n{label}: baseline problems total {1000 * theirs:,.0f} ms vs {1000 * ours:.1f} ms "
                         f"for fastscore: {theirs / ours:,.0f}x")
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
