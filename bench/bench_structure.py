"""Cost of the structure scores per mechanism submission, and agreement with MDBench 0.7's
structure-recovery metric on the same pairs.

Submissions: for each of the 72 MDBench problems, its reference mechanism with the
intermediates renamed (``h0, h1, ...``) and the equations shuffled, and six
perturbed copies of it (renamed and shuffled too): one equation's right side doubled
(``coefficient``); one name on one right side replaced by ``2`` (``edge_dropped``); one
right side multiplied by a new quantity ``q_extra = 1 + x1/x2`` (``extra_quantity``);
one equation dropped (``dropped_equation``: under-determined, does not solve); the
phenomenal law as a one-equation mechanism (``law_only``); and the mechanism of another
variant of the same family (``sibling``). The perturbed equation and the sibling are
drawn with a fixed seed.

Cost: every problem's batch is scored by ``fastscore.scoring.task.score_task`` (fresh memo)
with the structure columns, and with ``structure_fields`` replaced by one returning
nulls, alternating, ``--repeat`` passes each; the reference side of the structure
scores (graph, bags, values of the reference quantities) is prepared once per
reference before timing, as a worker does once per problem. Medians over passes.

MDBench: ``bench/mdbench_structure.py`` runs ``StructuralMechanismMatcher.compare``
in MDBench's own environment (``--mdbench-python``) on the same texts; Pearson and
Spearman correlations with fastscore's scores.

Usage: python bench/bench_structure.py [--repeat 5] [--mdbench-python /tmp/mdb-venv-structure/bin/python]
       [--out bench/results/structure.md]
"""
from __future__ import annotations

import argparse
import datetime
import json
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

import fastscore.scoring.judge as judge_module
import fastscore.scoring.structure as structure_score
from fastscore.problems.formats import load_problems
from fastscore.scoring.reference import build_reference
from fastscore.scoring.structure import STRUCTURE_COLUMNS, reference_structure
from fastscore.scoring.task import ScoreMemo, score_task
from fastscore.settings import DEFAULT_SETTINGS
from fastscore.support.collector import paused

ROOT = Path(__file__).resolve().parents[1]
PROBLEMS = ROOT / "tests" / "data" / "mdbench-problems"
KINDS = ("renamed_shuffled", "coefficient", "edge_dropped", "extra_quantity", "dropped_equation", "law_only",
         "sibling")
_NAME = re.compile(r"[^\W\d]\w*")


def _family(task: str) -> str:
    return re.sub(r"-(original|variant\d+)$", "", task)


def _rename(text: str, names: dict[str, str]) -> str:
    return _NAME.sub(lambda m: names.get(m.group(0), m.group(0)), text)


def _sides(text: str) -> tuple[str, str]:
    lhs, rhs = text.split("=", 1)
    return lhs.strip(), rhs.strip()


def _renamed(problem, texts, rng) -> list[str]:
    """Intermediates renamed h0, h1, ... (in a random order) and the equations shuffled."""
    names = [v.name for v in problem.intermediates]
    order = rng.permutation(len(names))
    texts = [_rename(t, {names[i]: f"h{k}" for k, i in enumerate(order)}) for t in texts]
    return [texts[i] for i in rng.permutation(len(texts))]


def submissions(problem, siblings, rng) -> dict[str, list[str]]:
    """The seven submitted mechanisms (equation texts) of one problem (module doc)."""
    texts = [e.text for e in problem.mechanism]
    target = problem.target.name
    i = int(rng.integers(len(texts)))
    lhs, rhs = _sides(texts[i])
    out = {"renamed_shuffled": texts, "coefficient": texts[:i] + [f"{lhs} = 2*({rhs})"] + texts[i + 1:]}
    used = sorted({m.group(0) for m in _NAME.finditer(rhs)} & {v.name for v in (*problem.observed,
                                                                                  *problem.intermediates)})
    if used:
        name = used[int(rng.integers(len(used)))]
        out["edge_dropped"] = texts[:i] + [f"{lhs} = {_rename(rhs, {name: '2'})}"] + texts[i + 1:]
    inputs = [v.name for v in problem.inputs]
    extra = f"q_extra = 1 + {inputs[0]}/{inputs[1]}" if len(inputs) > 1 else f"q_extra = 1 + {inputs[0]}"
    out["extra_quantity"] = texts[:i] + [f"{lhs} = ({rhs})*q_extra", extra] + texts[i + 1:]
    if len(texts) > 1:
        out["dropped_equation"] = texts[:i] + texts[i + 1:]
    out["law_only"] = [f"{target} = {_sides(problem.law)[1]}"]
    same = [s for s in siblings if s.target.name == target and s.task_id != problem.task_id]
    if same:
        sibling = same[int(rng.integers(len(same)))]
        out["sibling"] = _renamed(sibling, [e.text for e in sibling.mechanism], rng)
        out = {k: (v if k in ("law_only", "sibling") else _renamed(problem, v, rng)) for k, v in out.items()}
    else:
        out = {k: (v if k == "law_only" else _renamed(problem, v, rng)) for k, v in out.items()}
    return out


def _null_fields(*args, **kwargs) -> dict:
    return dict.fromkeys(STRUCTURE_COLUMNS)


class _Timer:
    """Accumulates the seconds spent in one function (wrapped in place)."""

    def __init__(self, module, name):
        self.module, self.name, self.original = module, name, getattr(module, name)
        self.seconds, self.calls = 0.0, 0

    def __enter__(self):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return self.original(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1
        setattr(self.module, self.name, timed)
        return self

    def __exit__(self, *exc):
        setattr(self.module, self.name, self.original)


def _pass(cases, structure: bool) -> tuple[float, list[dict]]:
    original = structure_score.structure_fields  # what the registered structure scorer calls
    if not structure:
        structure_score.structure_fields = _null_fields
    try:
        rows = []
        started = time.perf_counter()
        for reference, batch in cases:
            with paused():  # as the executors do (fastscore.support.collector)
                scored, _ = score_task(reference, batch, memo=ScoreMemo())
            rows += scored
        return time.perf_counter() - started, rows
    finally:
        structure_score.structure_fields = original


def _mdbench(python: str, pairs: list[dict]) -> list[dict]:
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "pairs.jsonl", Path(folder) / "out.jsonl"
        source.write_text("".join(json.dumps(p) + "\n" for p in pairs))
        subprocess.run([python, str(ROOT / "bench" / "mdbench_structure.py"), str(source), str(target)], check=True,
                       cwd=folder)
        return [json.loads(line) for line in target.read_text().splitlines()]


def _correlations(a, b) -> tuple[float, float, int]:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    keep = ~(np.isnan(a) | np.isnan(b))
    return float(stats.pearsonr(a[keep], b[keep])[0]), float(stats.spearmanr(a[keep], b[keep])[0]), int(keep.sum())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--mdbench-python", default="/tmp/mdb-venv-structure/bin/python")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "structure.md")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(20260725)
    problems = load_problems(PROBLEMS)
    by_family = defaultdict(list)
    for problem in problems:
        by_family[_family(problem.task_id)].append(problem)
    cases, pairs = [], []
    started = time.perf_counter()
    with paused():
        references = {p.task_id: build_reference(p) for p in problems}
    build_seconds = time.perf_counter() - started
    started = time.perf_counter()
    for reference in references.values():
        reference_structure(reference)
    prepare_seconds = time.perf_counter() - started
    for problem in problems:
        made = submissions(problem, by_family[_family(problem.task_id)], rng)
        batch = [{"config": kind, "run": 0, "task": problem.task_id, "mechanism": "\n".join(texts)}
                 for kind, texts in made.items()]
        cases.append((references[problem.task_id], batch))
        pairs += [{"task": problem.task_id, "kind": kind, "candidate": texts,
                   "reference": [e.text for e in problem.mechanism]} for kind, texts in made.items()]
    n_submissions = len(pairs)

    _pass(cases, True)  # warm-up: kernels loaded, tapes compiled
    on, off = [], []
    with _Timer(structure_score, "graph_similarity") as graph_timer, \
            _Timer(judge_module, "recovered_quantities") as value_timer:  # called by the law's judgement
        for _ in range(args.repeat):
            seconds, rows = _pass(cases, True)
            on.append(seconds)
            off.append(_pass(cases, False)[0])
    ours = {(r["task"], r["config"]): r for r in rows}

    started = time.perf_counter()
    theirs = _mdbench(args.mdbench_python, [{"candidate": p["candidate"], "reference": p["reference"]}
                                            for p in pairs])
    mdbench_seconds = time.perf_counter() - started
    lines = _report(args, problems, pairs, ours, theirs, on, off, graph_timer, value_timer, n_submissions,
                    build_seconds, prepare_seconds, mdbench_seconds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _report(args, problems, pairs, ours, theirs, on, off, graph_timer, value_timer, n, build_seconds,
            prepare_seconds, mdbench_seconds) -> list[str]:
    on_s, off_s = float(np.median(on)), float(np.median(off))
    graph_s = graph_timer.seconds / args.repeat
    value_s = value_timer.seconds / args.repeat
    rows = [ours[(p["task"], p["kind"])] for p in pairs]
    notes = [r["structure_note"] or "" for r in rows]
    approximate = sum("approximate" in note for note in notes)
    counts = {k: sum(p["kind"] == k for p in pairs) for k in KINDS}
    command = "python bench/bench_structure.py " + " ".join(sys.argv[1:])
    lines = [
        "# Structure scores: cost and agreement with MDBench 0.7",
        "",
        f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}",
        f"- command: `{command.strip()}` ({args.repeat} passes with and {args.repeat} without the structure "
        "columns, alternating; medians)",
        f"- machine: {platform.machine()}, Python {platform.python_version()}, one process, one core "
        "(2 shared cores)",
        f"- submissions: {n} mechanism submissions over the {len(problems)} MDBench problems "
        f"({', '.join(f'{k} {count}' for k, count in counts.items())})",
        f"- graph matches exact: {n - approximate} of {n} (step cap {DEFAULT_SETTINGS.structure_steps:,})",
        "",
        "## Cost per mechanism submission (same run)",
        "",
        "| what | total s (median pass) | ms per submission |",
        "|---|---|---|",
        f"| `score_task` without structure columns | {off_s:.3f} | {1000 * off_s / n:.2f} |",
        f"| `score_task` with structure columns | {on_s:.3f} | {1000 * on_s / n:.2f} |",
        f"| the structure columns (difference) | {on_s - off_s:.3f} | {1000 * (on_s - off_s) / n:.2f} |",
        f"| of which graph match (`graph_similarity`, mean pass) | {graph_s:.3f} | {1000 * graph_s / n:.3f} |",
        f"| recovery by value (`recovered_quantities`, mean pass; in both passes: the law's judgement uses it "
        f"for the probes found in the mechanism) | {value_s:.3f} | "
        f"{1000 * value_s / n:.3f} |",
        "",
        f"Structure columns / scoring without them: **{(on_s - off_s) / off_s:.2f}x** of the median passes "
        f"(median over the {len(on)} alternating pairs of passes: "
        f"{float(np.median([a / b - 1 for a, b in zip(on, off)])):.2f}x; graph match alone "
        f"{graph_s / off_s:.3f}x). Passes with: "
        f"{', '.join(f'{s:.3f}' for s in on)} s; without: {', '.join(f'{s:.3f}' for s in off)} s.",
        f"Once per reference (not in the passes): building the 72 references {build_seconds:.2f} s; "
        f"preparing their structure side (graph, bags, reference quantity values) {prepare_seconds:.3f} s.",
        "",
        "## Scores by perturbation (means)",
        "",
        "| perturbation | n | graph | AST | recovered / reference quantities | law equivalent | "
        "MDBench score | MDBench DAG | MDBench formula |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    by_kind = defaultdict(list)
    for pair, row, mdb in zip(pairs, rows, theirs):
        by_kind[pair["kind"]].append((row, mdb))
    for kind in KINDS:
        items = by_kind.get(kind, [])
        if not items:
            continue
        recovered = [r["n_quantities_recovered"] for r, _ in items if r["n_quantities_recovered"] is not None]
        reference = [r["n_reference_quantities"] for r, _ in items if r["n_quantities_recovered"] is not None]
        share = f"{sum(recovered)}/{sum(reference)}" if reference else "— (does not solve)"
        mean = lambda values: float(np.mean(values)) if values else float("nan")  # noqa: E731
        lines.append(f"| {kind} | {len(items)} | {mean([r['structure_graph_score'] for r, _ in items]):.3f} | "
                     f"{mean([r['structure_ast_score'] for r, _ in items]):.3f} | {share} | "
                     f"{sum(bool(r['p_equivalent']) for r, _ in items)}/{len(items)} | "
                     f"{mean([m['score'] for _, m in items]):.3f} | {mean([m['dag_similarity'] for _, m in items]):.3f} "
                     f"| {mean([m['formula_similarity'] for _, m in items]):.3f} |")
    graph = [r["structure_graph_score"] for r in rows]
    ast = [r["structure_ast_score"] for r in rows]
    combined = [0.6 * a + 0.4 * g for a, g in zip(ast, graph)]
    lines += [
        "",
        "## Correlation with MDBench's ground-truth structure recovery (same pairs)",
        "",
        "MDBench 0.7 (`src/metrics/mechanism_similarity.py`, `StructuralMechanismMatcher`): nodes are "
        "relations, an edge when the left side of one is a name on the right side of another; a formula's "
        "signature is the prefix token sequence of its right side with variables numbered by first "
        "appearance and numbers as `CONST`; formula similarity is a normalised Levenshtein similarity, the "
        "DAG similarity the edge F1 under the best relation map (exhaustive up to 9 relations, an iterative "
        "linear assignment beyond); score = 0.6 formula + 0.4 DAG.",
        "",
        "| fastscore | MDBench | n | Pearson | Spearman |",
        "|---|---|---|---|---|",
    ]
    for label, mine, key in (("graph score", graph, "dag_similarity"), ("AST score", ast, "formula_similarity"),
                             ("0.6 AST + 0.4 graph", combined, "score"), ("graph score", graph, "score")):
        pearson, spearman, count = _correlations(mine, [m[key] for m in theirs])
        lines.append(f"| {label} | {key} | {count} | {pearson:.3f} | {spearman:.3f} |")
    mdb_seconds = [m["seconds"] for m in theirs]
    lines += [
        "",
        f"MDBench's matcher: {sum(mdb_seconds):.1f} s for the {len(theirs)} pairs (median "
        f"{1000 * np.median(mdb_seconds):.1f} ms, max {max(mdb_seconds):.1f} s; "
        f"{sum(m['optimizer'] == 'exact' for m in theirs)} exhaustive), its whole run {mdbench_seconds:.1f} s; "
        f"fastscore's graph match takes {1000 * graph_s / n:.3f} ms per submission and all the structure "
        f"columns {1000 * (on_s - off_s) / n:.2f} ms.",
    ]
    return lines


if __name__ == "__main__":
    raise SystemExit(main())
