"""Constants of MechBench's feedback protocol ``mdbench-proposal-v1``
and of fastscore's service; free of heavy imports, so the CLI can show them."""

PROTOCOL = "mdbench-proposal-v1"
FIELDS = ("problem", "train_data", "submission")
"""The three file fields of ``POST /evaluate``."""
MAX_UPLOAD = 32 * 1024 * 1024
"""Largest request body, bytes."""
DEFAULT_BUDGET = 5.0
"""Seconds one evaluation may take; the solver stops itself at half of it, and the
service kills a worker still busy at the full budget."""
DEFAULT_CACHE = 1024
"""Answers the service keeps, most recently used."""
EXTRAS = "fastscore"
"""Key of fastscore's additions to an answer (the JSON API and ``--json``)."""


def protocol_answer(answer: dict) -> dict:
    """An answer as ``mdbench-proposal-v1`` has it (without fastscore's extras)."""
    return {key: value for key, value in answer.items() if key != EXTRAS}
