"""Check a behaviour-preserving move: every verdict and every output row identical.

    python bench/move_check.py snapshot DIR     # write the rows of this checkout to DIR
    python bench/move_check.py compare A B      # compare two snapshots, bit for bit

A snapshot holds, as canonical JSON lines (sorted keys, floats by ``repr``):

- ``verdicts.jsonl`` / ``verdict_probes.jsonl``: the rows of ``bench_verdicts.py``'s
  workload (the generated submissions of every MDBench problem it loads, same seed),
  scored by ``score_task``;
- for each bundled or test-data sweep, the tables ``fastscore score --executor local``
  writes (``scores``, ``probes``, ``summary``, ``strata``, ``passk``, ``published``),
  minus the columns that measure time (``seconds`` and its kin).

It imports fastscore only through ``bench_verdicts`` and the command line, so the same
file works on both sides of a move.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "external"

# (name, problems, sweep, extra arguments); a missing path skips the entry.
SWEEPS = [
    ("example", "problems/example", "problems/example-sweep.jsonl", []),
    ("grn", "problems/grn", "problems/grn-example-sweep.jsonl", []),
    ("llema", "problems/llema", "problems/llema-example-sweep.jsonl", []),
    ("discoverphysics", "problems/discoverphysics", "problems/discoverphysics-example-sweep.jsonl", []),
    ("mechbench-example", "problems/mechbench-example/tasks", "problems/mechbench-example/runs", []),
    ("real", "tests/data/real/tasks", "tests/data/real/attempts.jsonl", []),
    ("real-results", "tests/data/real/tasks", "tests/data/real/results", []),
    ("sample-results", "tests/data/mechbench-results/tasks", "tests/data/mechbench-results/results", []),
    ("shared-results", str(SHARED / "mechbench-results" / "tasks"), str(SHARED / "mechbench-results" / "results"),
     []),
]
TIME_COLUMNS = ("seconds", "elapsed", "wall", "cpu")


def _canonical(value):
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


def _write(path: Path, rows) -> None:
    with path.open("w") as out:
        for row in rows:
            out.write(json.dumps(_canonical(row), sort_keys=True, default=str) + "\n")


def _timeless(row: dict) -> dict:
    return {k: v for k, v in row.items() if not any(t in k for t in TIME_COLUMNS)}


def snapshot(directory: Path, *, per_problem: int, seed: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_verdicts as bv
    from fastscore import Settings, load_problems

    settings = Settings()
    problems = load_problems(bv.PROBLEMS)
    references = [bv.build_reference(p, settings=settings) for p in problems]
    rng = random.Random(seed)
    batches = [bv.submissions_for(r, limit=per_problem, rng=rng) for r in references]
    scores, probes = [], []
    for reference, batch in zip(references, batches):
        rows = [{"config": f"gen{i}", "run": 0, "task": reference.problem.task_id, "phenomenal": text}
                for i, (text, _) in enumerate(batch)]
        score_rows, probe_rows = bv.score_task(reference, rows, settings=settings)
        scores += [_timeless(r) for r in score_rows]
        probes += [_timeless(r) for r in probe_rows]
    _write(directory / "verdicts.jsonl", scores)
    _write(directory / "verdict_probes.jsonl", probes)
    print(f"verdicts: {len(scores)} rows, {len(probes)} probe rows", file=sys.stderr)

    import polars as pl

    fastscore = Path(sys.executable).parent / "fastscore"
    for name, problems_path, sweep, extra in SWEEPS:
        problems_path, sweep = ROOT / problems_path, ROOT / sweep
        if not problems_path.exists() or not sweep.exists():
            print(f"{name}: skipped (missing {problems_path if not problems_path.exists() else sweep})",
                  file=sys.stderr)
            continue
        out = directory / f"run-{name}"
        subprocess.run([str(fastscore), "score", "--problems", str(problems_path), "--sweep", str(sweep),
                        "--out", str(out), "--executor", "local", *extra],
                       check=True, stdout=subprocess.DEVNULL)
        for table in sorted(out.glob("*.parquet")):
            frame = pl.read_parquet(table)
            _write(directory / f"{name}.{table.stem}.jsonl", [_timeless(r) for r in frame.to_dicts()])
        print(f"{name}: {len(list(out.glob('*.parquet')))} tables", file=sys.stderr)


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.jsonl")} | {p.name for p in b.glob("*.jsonl")})
    failures = 0
    for name in names:
        left, right = a / name, b / name
        if not left.exists() or not right.exists():
            print(f"{name}: only in {'B' if not left.exists() else 'A'}")
            failures += 1
            continue
        la, lb = left.read_text().splitlines(), right.read_text().splitlines()
        if la == lb:
            print(f"{name}: {len(la)} rows identical")
            continue
        failures += 1
        differing = [i for i, (x, y) in enumerate(zip(la, lb)) if x != y]
        print(f"{name}: DIFFERENT ({len(la)} vs {len(lb)} rows, {len(differing)} differ)")
        for i in differing[:3]:
            print(f"  A[{i}] {la[i][:300]}\n  B[{i}] {lb[i][:300]}")
    return 1 if failures else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("directory", type=Path)
    snap.add_argument("--per-problem", type=int, default=60)
    snap.add_argument("--seed", type=int, default=7)
    comp = sub.add_parser("compare")
    comp.add_argument("a", type=Path)
    comp.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "snapshot":
        snapshot(args.directory, per_problem=args.per_problem, seed=args.seed)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
