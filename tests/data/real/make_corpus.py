"""Rebuild ``attempts.jsonl`` from MechBench result records (how the corpus was made).

    python tests/data/real/make_corpus.py TASKS_DIR RESULTS_DIR... > attempts.jsonl

Each record ``results/<experiment>/<domain>/<family>/<task>.json`` becomes one sweep
row (config: the experiment, run 0): the agent's ``submission`` as the mechanism, its
probe replies (``probe_replies``, judged by the harness's reply rule), and the harness's
own verdicts (law per split, each probe numerically equivalent on ID and OOD).  Records
without ``evaluation`` (the harness's error records) are left out.  Plain JSON only: no
fastscore import, so the corpus does not depend on the code it tests.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path


def _split(scores: dict | None, split: str, key: str):
    value = (scores or {}).get(split, {})
    return value.get(key) if isinstance(value, dict) else None


def _named_sha(record: dict) -> str | None:
    """The sha256 of the task file the attempt ran against, as its record names it."""
    job = (record.get("experiment_provenance") or {}).get("job") or {}
    imported = (record.get("source") or {}).get("task_definition_at_import") or {}
    return job.get("task_sha256") or imported.get("file_sha256")


def _sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None


def row(path: Path, experiment: str, tasks: Path) -> dict | None:
    record = json.loads(path.read_text(encoding="utf-8"))
    evaluation = record.get("evaluation")
    if not isinstance(evaluation, dict) or not isinstance(record.get("submission"), str):
        return None
    law = evaluation.get("phenomenal") or {}
    task = evaluation.get("task_name") or path.stem
    replies, verdicts = {}, {}
    for probe in evaluation.get("mechanism_probes") or []:
        name = probe["probe"]
        replies[name] = probe.get("reply") or ""
        scores = probe.get("scores")
        verdicts[name] = bool(probe.get("ok")) and all(
            _split(scores, split, "numerically_equivalent") is True for split in ("id_test", "ood_test"))
    return {
        "config": experiment,
        "run": 0,
        "task": task,
        "mechanism": record["submission"],
        "probe_replies": json.dumps(replies, sort_keys=True),
        "harness_law_numeric_id_ood": [_split(law, s, "numerically_equivalent") for s in ("id_test", "ood_test")],
        "harness_law_symbolic": _split(law, "id_test", "symbolically_equivalent"),
        "harness_probes_numeric_id_ood": json.dumps(verdicts, sort_keys=True),
        "task_file_as_run": _named_sha(record) == _sha(tasks / f"{task}.yaml"),
    }


def main(tasks: str, roots: list[str]) -> None:
    for root in roots:
        for path in sorted(Path(root).glob("*/*/*/*.json")):
            made = row(path, path.relative_to(root).parts[0], Path(tasks))
            if made is not None:
                print(json.dumps(made, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
