#!/usr/bin/env python3
"""A planted study over MechBench task files: submissions with known truth, written as
MechBench run folders (or returned as rows for ``bench/bench_mechbench.py``).

    python scripts/mechbench_study.py --problems DIR --out RUNS [--copies 2] [--seed 7]

Per task, each kind of submission has a truth by construction:

| kind | mechanism | law | probe replies (truth) |
|---|---|---|---|
| reference | the task's own mechanism | right | ``p = p`` (right) |
| renamed | every internal name replaced | right | ``p = <its new name>`` (right) |
| shuffled | equations shuffled, sides swapped | right | ``p = p`` (right) |
| law-only | one equation ``target = law`` | right | ``p = p`` (wrong: names left) |
| perturbed | the target's equation scaled by 1.05 | wrong | ``p = p`` (right: upstream of the target) |
| wrong-replies | the task's own mechanism | right | ``p = 1.05*(p)`` (wrong) |
| malformed-replies | the task's own mechanism | right | no equation, or two (wrong) |

Writes ``RUNS/<exp_name>/<task_name>/submission.txt`` and ``probe/<NNN>-<probe>/reply.txt``
per cell, with experiment names ``<kind>_run<copy>``, and ``RUNS/truth.json``.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fastscore.problems.formats import load_problems  # noqa: E402
from fastscore.problems.model import Problem  # noqa: E402

KINDS = ("reference", "renamed", "shuffled", "law-only", "perturbed", "wrong-replies", "malformed-replies")
_NAME = re.compile(r"(?<![\w.])([^\W\d]\w*)(?!\w)")


def _rename(text: str, mapping: dict[str, str]) -> str:
    return _NAME.sub(lambda m: mapping.get(m.group(1), m.group(1)), text)


def _own_formulas(problem: Problem) -> list[str]:
    """The mechanism as the task writes it, fixed coefficients included."""
    return [m["formula"] for m in problem.task["mechanism_model"]] if problem.task else [e.text for e in problem.mechanism]


def _inline_coefficients(text: str, problem: Problem) -> str:
    values = {c.name: f"({c.formula})" for c in problem.coefficients}
    return _rename(text, values)


def _swap(formula: str) -> str:
    left, right = formula.split("=", 1)
    return f"{right.strip()} = {left.strip()}"


def study(problem: Problem, *, copy: int, rng: random.Random) -> list[dict]:
    """The planted submissions of one task: {kind, mechanism, replies, law_right, probes_right}."""
    formulas = _own_formulas(problem)
    probes = [p.name for p in problem.probes]
    target = problem.target.name
    internal = sorted({v.name for v in problem.intermediates} | {c.name for c in problem.coefficients})
    rows = []

    def add(kind, mechanism, replies, law_right, probe_truth):
        rows.append({"kind": kind, "mechanism": "\n".join(mechanism), "replies": replies,
                     "law_right": law_right, "probes_right": probe_truth})

    same = {p: f"{p} = {p}" for p in probes}
    add("reference", formulas, same, True, dict.fromkeys(probes, True))
    mapping = {name: f"q{copy}_{i}" for i, name in enumerate(internal)}
    add("renamed", [_rename(f, mapping) for f in formulas], {p: f"{p} = {mapping.get(p, p)}" for p in probes},
        True, dict.fromkeys(probes, True))
    shuffled = list(formulas)
    rng.shuffle(shuffled)
    add("shuffled", [_swap(f) if i % 2 else f for i, f in enumerate(shuffled)], same, True,
        dict.fromkeys(probes, True))
    add("law-only", [_inline_coefficients(problem.law, problem)], same, True, dict.fromkeys(probes, False))
    uses = [i for i, f in enumerate(formulas) if re.search(rf"(?<![\w.]){re.escape(target)}(?!\w)", f)]
    if len(uses) == 1 and "=" in formulas[uses[0]]:
        perturbed = list(formulas)
        left, right = perturbed[uses[0]].split("=", 1)
        side = f"{left} = 1.05*({right.strip()})" if target in left else f"1.05*({left.strip()}) = {right}"
        perturbed[uses[0]] = side
        add("perturbed", perturbed, same, False, dict.fromkeys(probes, True))
    add("wrong-replies", formulas, {p: f"{p} = 1.05*({p})" for p in probes}, True, dict.fromkeys(probes, False))
    bad = {p: ("I cannot tell" if i % 2 else f"{p} = {p}; {p} = 2*{p}") for i, p in enumerate(probes)}
    add("malformed-replies", formulas, bad, True, dict.fromkeys(probes, False))
    return rows


def write_runs(problems: list[Problem], out: Path, *, copies: int, seed: int) -> dict:
    """Write the planted study as run folders; returns (and writes) its truth."""
    rng = random.Random(seed)
    truth = {}
    for copy in range(1, copies + 1):
        for problem in problems:
            for row in study(problem, copy=copy, rng=rng):
                exp = f"{row['kind']}_run{copy}"
                folder = out / exp / problem.task_id
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "submission.txt").write_text(row["mechanism"] + "\n", encoding="utf-8")
                for index, probe in enumerate(p.name for p in problem.probes):
                    reply = folder / "probe" / f"{index:03d}-{probe}" / "reply.txt"
                    reply.parent.mkdir(parents=True, exist_ok=True)
                    reply.write_text(row["replies"][probe] + "\n", encoding="utf-8")
                truth[f"{exp}/{problem.task_id}"] = {"law": row["law_right"], "probes": row["probes_right"]}
    (out / "truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True))
    return truth


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", type=Path, required=True, help="MechBench task files")
    parser.add_argument("--out", type=Path, required=True, help="where to write the run folders")
    parser.add_argument("--copies", type=int, default=1, help="runs per kind (renamed copies differ)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    problems = [p for p in load_problems(args.problems) if p.format == "mechbench"]
    truth = write_runs(problems, args.out, copies=args.copies, seed=args.seed)
    print(f"wrote {len(truth)} run folders for {len(problems)} tasks to {args.out} (truth in truth.json)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
