"""Benchmark: the tape kernel against hand-written NumPy of the same formulas.

Run: ``python bench/bench_kernels.py`` (writes ``bench/results/kernels.md``).

- batch: 10 physics-like formulas over 3,000 points (three 1,000-point splits),
  one packed kernel call vs the 10 NumPy expressions on the same arrays;
- small batches: 256 tapes x 64 points (the equivalence checker's shape);
- per-call overhead (1 tape x 1 point), tape compilation, and the kernel's
  compile / cache-load time in a fresh process.

The machine is shared and noisy: every number is the median of repeated samples.
"""

from __future__ import annotations

import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numba
import numpy as np
import symengine as se

from fastscore.kernels import evaluate, pack
from fastscore.tapes.compile import compile_tape

RESULTS = Path(__file__).parent / "results" / "kernels.md"

m, c, v, hbar, q, eps, k, Ef, p, Om, kB, T, a, S, s, b, k1, k2, k3, k4, k5, E, x, y, w, t = se.symbols(
    "m c v hbar q eps k Ef p Om kB T a S s b k1 k2 k3 k4 k5 E x y w t"
)
NAMES = "m c v hbar q eps k Ef p Om kB T a S s b k1 k2 k3 k4 k5 E x y w t".split()


def _numpy_formulas(V):
    m, c, v, hbar, q, eps, k, Ef, p, Om, kB, T, a, S, s, b, k1, k2, k3, k4, k5, E, x, y, w, t = V
    return [
        lambda: m * c**2 * (1 / np.sqrt(1 - v**2 / c**2) - 1),
        lambda: 2 * hbar**2 / (m * q**2 / (4 * np.pi * eps) + np.sqrt((m * q**2 / (4 * np.pi * eps)) ** 2 + hbar**2 * k)),
        lambda: np.exp(-(Ef + p * Om) / (kB * T)),
        lambda: ((1 - a) * S / (4 * s * (1 - b / 2))) ** 0.25,
        lambda: k3 * E * S / ((k2 + k3) / k1 + S + S**2 * k4 / k5),
        lambda: x * np.sin(w * t + a) * np.cos(y),
        lambda: kB * T * np.log(x / y) - Ef,
        lambda: q * x / (4 * np.pi * eps * y**2) - q / y**3,
        lambda: m * x**2.5 / (1 + np.tanh(y) ** 2),
        lambda: np.sqrt(k / m) * (1 - np.exp(-b * t)) + c * np.arctan(x / y),
    ]


FORMULAS = [
    m * c**2 * (1 / se.sqrt(1 - v**2 / c**2) - 1),
    2 * hbar**2 / (m * q**2 / (4 * se.pi * eps) + se.sqrt((m * q**2 / (4 * se.pi * eps)) ** 2 + hbar**2 * k)),
    se.exp(-(Ef + p * Om) / (kB * T)),
    ((1 - a) * S / (4 * s * (1 - b / 2))) ** se.Rational(1, 4),
    k3 * E * S / ((k2 + k3) / k1 + S + S**2 * k4 / k5),
    x * se.sin(w * t + a) * se.cos(y),
    kB * T * se.log(x / y) - Ef,
    q * x / (4 * se.pi * eps * y**2) - q / y**3,
    m * x**2.5 / (1 + se.tanh(y) ** 2),
    se.sqrt(k / m) * (1 - se.exp(-b * t)) + c * se.atan(x / y),
]


def _points(n: int, seed: int) -> np.ndarray:
    X = np.random.default_rng(seed).uniform(0.5, 2.0, (len(NAMES), n))
    X[NAMES.index("v")] *= 0.25  # v < c
    X[NAMES.index("a")] *= 0.4  # a < 1
    return X


def _sample(fn, inner: int) -> float:
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def _median_seconds(fn, *, inner: int, samples: int = 25) -> float:
    fn()
    return statistics.median(_sample(fn, inner) for _ in range(samples))


def _paired(kernel_fn, numpy_fn, *, inner: int, samples: int = 25) -> tuple[float, float, float]:
    """Medians of kernel and NumPy times, and the median of per-pair ratios: samples
    alternate so both sides see the same load on the shared machine."""
    kernel_fn(), numpy_fn()
    pairs = [(_sample(kernel_fn, inner), _sample(numpy_fn, inner)) for _ in range(samples)]
    k, n = zip(*pairs)
    return statistics.median(k), statistics.median(n), statistics.median(a / b for a, b in pairs)


def _fresh_process_seconds(cache_dir: str) -> float:
    code = (
        "import time; t = time.perf_counter()\n"
        "import numpy as np, symengine as se\n"
        "from fastscore.tapes.compile import compile_tape\n"
        "from fastscore.kernels import evaluate\n"
        "evaluate(compile_tape(se.Symbol('x') + 1, ['x']), np.ones((1, 2)))\n"
        "print(time.perf_counter() - t)\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    load = os.getloadavg()
    rows = []
    tapes = [compile_tape(f, NAMES) for f in FORMULAS]
    batch = pack(tapes)

    # correctness guard: the two sides compute the same numbers
    X = _points(3000, 0)
    by_hand = _numpy_formulas(X)
    ref = np.array([f() for f in by_hand])
    assert np.allclose(evaluate(batch, X), ref, rtol=1e-13, atol=0), "kernel and NumPy disagree"

    n_expr = len(FORMULAS)
    timing = _paired(lambda: evaluate(batch, X), lambda: [f() for f in by_hand], inner=20)
    rows.append(("10 formulas x 3,000 points, one call", *timing, n_expr * 3000))

    splits = [np.ascontiguousarray(X[:, i * 1000 : (i + 1) * 1000]) for i in range(3)]
    split_by_hand = [_numpy_formulas(part) for part in splits]
    timing = _paired(
        lambda: [evaluate(batch, part) for part in splits],
        lambda: [[f() for f in fs] for fs in split_by_hand],
        inner=20,
    )
    rows.append(("10 formulas x 3 splits of 1,000 points", *timing, n_expr * 3000))

    small_tapes = [compile_tape(FORMULAS[i % n_expr] + i // n_expr, NAMES) for i in range(256)]
    small_batch = pack(small_tapes)
    X64 = _points(64, 1)
    small_np = _numpy_formulas(X64)
    timing = _paired(
        lambda: evaluate(small_batch, X64),
        lambda: [small_np[i % n_expr]() + i // n_expr for i in range(256)],
        inner=20,
    )
    rows.append(("256 tapes x 64 points (equivalence shape)", *timing, 256 * 64))

    one = tapes[2]
    X1 = X[:, :1].copy()
    overhead = _median_seconds(lambda: evaluate(one, X1), inner=2000)
    compile_cost = _median_seconds(lambda: [compile_tape(f, NAMES) for f in FORMULAS], inner=5) / n_expr

    with tempfile.TemporaryDirectory() as cache_dir:
        cold = _fresh_process_seconds(cache_dir)
        warm = statistics.median(_fresh_process_seconds(cache_dir) for _ in range(3))

    lines = [
        "# Kernel benchmark",
        "",
        f"Command: `python bench/bench_kernels.py` — {datetime.datetime.now():%Y-%m-%d %H:%M}",
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared, noisy); "
        f"Python {platform.python_version()}, NumPy {np.__version__}, Numba {numba.__version__}; "
        f"load average at start {load[0]:.1f}.",
        "Medians of 25 samples, kernel and NumPy samples alternating (the ratio is the median",
        "of per-pair ratios); the kernel is single-threaded, NumPy is the same formulas",
        "written by hand on the same arrays (results agree to 1e-13).",
        "",
        "| workload | kernel | NumPy | kernel expr-points/s | NumPy expr-points/s | kernel / NumPy time |",
        "|---|---|---|---|---|---|",
    ]
    for name, kt, nt, ratio, work in rows:
        lines.append(f"| {name} | {kt * 1e6:.0f} µs | {nt * 1e6:.0f} µs | {work / kt:.3g} | {work / nt:.3g} | {ratio:.2f} |")
    lines += [
        "",
        f"- per-call overhead (1 tape x 1 point, through `evaluate`): {overhead * 1e6:.1f} µs",
        f"- `compile_tape` per formula (these 10): {compile_cost * 1e6:.0f} µs",
        f"- fresh process, import + first evaluation: {cold:.2f} s with an empty Numba cache, "
        f"{warm:.2f} s loading from the cache",
        "",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
