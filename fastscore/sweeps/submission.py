"""One sweep row as the scorer reads it: a typed ``Submission``, built once per row
(``Submission.from_row``), so that a submission's text is normalised in one place.

The readers (``fastscore.sweeps.read``) give each row its submission columns as text
(a list of equations joined by newlines, a mapping as a JSON object); a row handed to
``fastscore.scoring.task.score_task`` directly may still hold other values.
``from_row`` gives every one the same text (`submission_text`): a mapping becomes its
JSON object (sorted keys), any other value its ``str``, stripped; blank is None.  The
parts of those texts are decoded here too, once per distinct text: a mechanism's
equation texts (``Submission.equations``) and the probe answers (``Submission.answers``,
`ProbeAnswers`).  The scoring stages read the ``Submission`` only, never the row.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

from fastscore.support.caches import memoized
from fastscore.sweeps.read import SUBMISSION_COLUMNS
from fastscore.text.answers import parse_probe_answers, split_equations
from fastscore.text.tokens import DEFAULT_LIMITS, Limits, ParseError

__all__ = ["ProbeAnswers", "Submission", "probe_row_columns", "submission_text"]

_JSON = json.JSONEncoder(sort_keys=True).encode
_IDENTITY = ("config", "run", "task")


def submission_text(value) -> str | None:
    """A submission cell as the scorer reads it: a mapping is its JSON object (sorted
    keys), any other value its ``str``, stripped; None when absent or blank."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return _JSON(dict(value))
    text = str(value).strip()
    return text or None


@dataclass(frozen=True, slots=True)
class Submission:
    """One sweep row, read once (module doc).

    ``config``, ``run``, ``task``: the row's cell; ``law``: the phenomenal formula text;
    ``mechanism``: the mechanism text (its equations: ``equations()``); ``probes``: the
    probe answers as expressions (``name = expr`` lines or a JSON object), ``replies``:
    MechBench's probe replies (a JSON object {probe: reply}) (both decoded by
    ``answers()``); each normalised by `submission_text`.  ``probe_columns``: the row's
    ``probe_columns`` cell as it is (JSON {probe: {column: value}}, extra columns of its
    probe rows); ``carried``: the row's other columns, in its order (carried through to
    its score row)."""

    config: object
    run: object
    task: object
    law: str | None
    mechanism: str | None
    probes: str | None
    replies: str | None
    probe_columns: object
    carried: Mapping[str, object]

    @classmethod
    def from_row(cls, row: Mapping) -> Submission:
        """The submission of a sweep row (a mapping with ``config``, ``run``, ``task``)."""
        get = row.get
        return cls(row["config"], row["run"], row["task"], submission_text(get("phenomenal")),
                   submission_text(get("mechanism")), submission_text(get("probes")),
                   submission_text(get("probe_replies")), get("probe_columns"),
                   {key: value for key, value in row.items()
                    if key not in SUBMISSION_COLUMNS and key not in _IDENTITY})

    @property
    def law_key(self) -> tuple[str | None, str | None]:
        """What the submitted law depends on: (phenomenal text, mechanism text)."""
        return self.law, self.mechanism

    @property
    def answers_key(self) -> tuple:
        """What the probe results depend on: the answer texts and, for a mechanism (whose
        quantities the answers may use), the law key."""
        return self.probes, self.replies, (self.law, self.mechanism) if self.mechanism is not None else None

    def equations(self, limits: Limits = DEFAULT_LIMITS) -> tuple[str, ...]:
        """The mechanism's equation texts (``fastscore.text.answers.split_equations``:
        comments dropped, split at line breaks and ``;``); raises ``ParseError`` past
        ``limits``.  Empty without a mechanism."""
        return () if self.mechanism is None else _equations(self.mechanism, limits)

    def answers(self, limits: Limits = DEFAULT_LIMITS) -> ProbeAnswers:
        """The probe answers and replies, decoded (`ProbeAnswers`)."""
        return _answers(self.probes, self.replies, limits)


@dataclass(frozen=True)
class ProbeAnswers:
    """A submission's probe answers, decoded but not parsed.

    ``written``: probe -> answer text from ``probes`` (``name = expr`` or a bare
    ``expr``, ``fastscore.text.answers.parse_probe_answers``); ``unusable``: probe -> why
    its answer there is unusable on its own (empty, not text); ``error``: why ``probes``
    as a whole is unreadable (then both are empty); ``replies``: probe -> its reply
    (text to be read by MechBench's rule, or another value when the reply was
    unreadable), in the order given, None without replies or when they are not a JSON
    object; ``replies_error``: the reason in that last case."""

    written: Mapping[str, str]
    unusable: Mapping[str, str]
    error: str | None
    replies: Mapping[str, object] | None
    replies_error: str | None


@memoized(1 << 10)
def _equations(mechanism: str, limits: Limits) -> tuple[str, ...]:
    """A mechanism's equation texts (memoised: a task's rows repeat their mechanisms; a
    text past the limits raises each time)."""
    return tuple(split_equations(mechanism, limits=limits))


@memoized(1 << 10)
def _answers(probes: str | None, replies: str | None, limits: Limits) -> ProbeAnswers:
    written, unusable, error = {}, {}, None
    if probes is not None:
        try:
            written = parse_probe_answers(probes, limits=limits, errors=unusable)
        except ParseError as failure:
            written, unusable, error = {}, {}, str(failure)
    decoded, replies_error = None, None
    if replies is not None:
        try:
            decoded = json.loads(replies)
        except (json.JSONDecodeError, RecursionError):
            decoded = None
        if not isinstance(decoded, Mapping):
            decoded, replies_error = None, "probe replies are not a JSON object {probe: reply}"
    return ProbeAnswers(written, unusable, error, decoded, replies_error)


def probe_row_columns(value) -> dict[str, dict]:
    """A ``probe_columns`` cell (JSON {probe: {column: value}}): the extra columns of
    each probe's row; anything else (absent, not JSON, not an object) gives none."""
    if not value:
        return {}
    try:
        decoded = json.loads(value)
    except (json.JSONDecodeError, RecursionError):
        return {}
    return {str(k): dict(v) for k, v in decoded.items() if isinstance(v, Mapping)} \
        if isinstance(decoded, Mapping) else {}
