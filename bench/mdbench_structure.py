"""MDBench 0.7's ground-truth structure recovery on pairs of mechanisms (run with the
Python of an environment where ``mdbench==0.7.0`` is installed; its package is ``src``).

    python bench/mdbench_structure.py PAIRS.jsonl OUT.jsonl

Each input line: ``{"candidate": [formula, ...], "reference": [formula, ...]}``; each
output line: MDBench's ``score``, ``formula_similarity``, ``dag_similarity``,
``optimizer`` and the seconds its ``StructuralMechanismMatcher.compare`` took.
"""
from __future__ import annotations

import json
import sys
import time

from src.metrics.mechanism_similarity import StructuralMechanismMatcher


def main(source: str, target: str) -> int:
    matcher = StructuralMechanismMatcher()
    with open(source) as lines, open(target, "w") as out:
        for line in lines:
            pair = json.loads(line)
            started = time.perf_counter()
            result = matcher.compare([{"formula": f} for f in pair["candidate"]],
                                     [{"formula": f} for f in pair["reference"]])
            seconds = time.perf_counter() - started
            out.write(json.dumps({key: result.get(key) for key in
                                  ("score", "formula_similarity", "dag_similarity", "optimizer")}
                                 | {"seconds": seconds}) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:3]))
