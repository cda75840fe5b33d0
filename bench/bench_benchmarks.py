"""Throughput of the non-law benchmarks' scorers (``fastscore.benchmarks``), one core.

- GRN: attempts per second of ``grn.score_task`` on a batch of distinct edge-list
  submissions to a three-node motif task (1-6 distinct directed pairs, random signs,
  a motif line), each text parsed and scored (no repeats);
- LLEMA: candidates per second of ``materials.score_attempt`` on attempts of 50
  distinct candidates (random formulas of 2-4 elements, random property values)
  against "Photovoltaic Absorbers" (numeric and composition constraints, Pareto count);
- DiscoverPhysics: seconds to integrate a law of motion for 100 particles x 1,000
  RK4 steps: a per-particle law (springs with drag and a time-dependent push) and a
  pairwise one (Coulomb forces, O(n^2) per step), after one warm-up call (Numba).
Process CPU time (the machine may be shared), medians over ``--repeat`` passes; the target ratios (>= 100,000 GRN attempts/s,
>= 10,000 candidates/s, well under 1 s per integration) are printed beside them.

Usage: python bench/bench_benchmarks.py [--repeat 5] [--out bench/results/benchmarks.md]
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

from fastscore.benchmarks import grn, materials, trajectories
from fastscore.problems.formats import load_problems
from fastscore.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def _median_time(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        function()
        times.append(time.process_time() - start)
    return statistics.median(times)


def bench_grn(repeat: int, n: int = 100_000) -> float:
    problem = next(p for p in load_problems(ROOT / "problems" / "grn") if p.task_id == "coherent-ffl")
    rng = np.random.default_rng(0)
    nodes = ("X", "Y", "Z")
    rows = []
    pairs = [(a, b) for a in nodes for b in nodes]
    for i in range(n):
        chosen = rng.choice(len(pairs), size=rng.integers(1, 7), replace=False)
        edges = [f"{pairs[k][0]} {'->' if rng.random() < 0.7 else '-|'} {pairs[k][1]}" for k in chosen]
        rows.append({"config": "c", "run": i, "task": "coherent-ffl",
                     "submission": "\n".join(edges) + f"\nmotif: m{i}"})  # distinct texts: none is a repeat
    seconds = _median_time(lambda: grn.score_task(problem, rows, Settings()), repeat)
    return n / seconds


def bench_llema(repeat: int, attempts: int = 400, size: int = 50) -> float:
    problem = next(p for p in load_problems(ROOT / "problems" / "llema") if p.task_id == "photovoltaic-absorbers")
    rng = np.random.default_rng(1)
    symbols = ["Fe", "S", "Cu", "Zn", "Sn", "O", "Cd", "Te", "Se", "Sb", "In", "Ga", "N", "Mg", "Si", "P"]
    texts = []
    for _ in range(attempts):
        candidates = []
        for _ in range(size):
            elements = rng.choice(symbols, size=rng.integers(2, 5), replace=False)
            formula = "".join(f"{e}{rng.integers(1, 5)}" for e in elements)
            candidates.append({"formula": formula, "band_gap": float(rng.uniform(0, 3)),
                               "formation_energy": float(rng.uniform(-2, 1)),
                               "energy_above_hull": float(rng.uniform(0, 0.3))})
        texts.append(json.dumps(candidates))
    settings = Settings()
    seconds = _median_time(lambda: [materials.score_attempt(problem.task, t, settings) for t in texts], repeat)
    return attempts * size / seconds


def bench_motion(repeat: int, n: int = 100, steps: int = 1000) -> dict[str, float]:
    rng = np.random.default_rng(2)
    task = {"heldout": np.zeros((n, 100, 2)), "times": np.linspace(0.01, 1.0, 100), "t0": 0.0,
            "positions": rng.normal(size=(n, 2)) * 10, "velocities": rng.normal(size=(n, 2)),
            "mass": rng.uniform(0.5, 2, n), "charge": rng.uniform(-1, 1, n)}
    settings = Settings(dp_substeps=steps // 100)
    laws = {"per-particle": ({"x": "-k*x/m - g*vx + 0.1*sin(t)", "y": "-k*y/m - g*vy"}, {"k": 2.0, "g": 0.05}),
            "pairwise": ({"pair_x": "-C*q*q_j*dx/(m*r**3)", "pair_y": "-C*q*q_j*dy/(m*r**3)"}, {"C": 1.0})}
    out = {}
    for name, (formulas, parameters) in laws.items():
        law = trajectories.compile_law(formulas, parameters, 2, settings.limits)
        trajectories.simulate(task, law, settings)  # warm-up (Numba)
        out[name] = _median_time(lambda law=law: trajectories.simulate(task, law, settings), repeat)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    grn_rate = bench_grn(args.repeat)
    llema_rate = bench_llema(args.repeat)
    motion = bench_motion(args.repeat)
    reference = _median_time(lambda: [sum(range(1000)) for _ in range(1000)], args.repeat) / 1000
    lines = [f"# Benchmark scorers ({datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, "
             f"{platform.processor() or platform.machine()}, Python {platform.python_version()})", "",
             f"command: python bench/bench_benchmarks.py --repeat {args.repeat}", "",
             f"CPU time of `sum(range(1000))` on this machine: {reference * 1e6:.1f} µs (a pure-Python "
             "reference: the rates scale with it from machine to machine; this one was shared by other jobs)", "",
             "| what | measured | target | ratio |", "|---|---|---|---|",
             f"| GRN attempts / s | {grn_rate:,.0f} | 100,000 | {grn_rate / 100_000:.2f} |",
             f"| LLEMA candidates / s | {llema_rate:,.0f} | 10,000 | {llema_rate / 10_000:.2f} |",
             *(f"| law of motion, 100 particles x 1,000 RK4 steps, {name} (s) | {seconds:.3f} | < 1 | "
               f"{1 / seconds:.2f} |" for name, seconds in motion.items())]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
