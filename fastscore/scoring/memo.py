"""What ``score_task`` does not compute twice, in one room: the keys of every result it
shares, and the worker's memo of them (``ScoreMemo``).

Across calls (the worker's ``ScoreMemo``, by task):

- ``law_entry``: a submission's law columns, by its law key (phenomenal and mechanism
  texts, ``fastscore.sweeps.submission.Submission.law_key``);
- ``probes_entry``: its probe results, by its answers key (answer texts, and the law
  key of a mechanism, whose quantities the answers may use);
- ``formula_entry``: the whole outcome of a phenomenal formula, by its canonical text
  (formulas that canonicalise alike share it, in the batch too);
- ``verdict_entry``: a verdict against the law or a probe, by the text of the
  expression judged (a derived law shared by renamed or reordered mechanisms).

Within one call (``Batch``): submissions are grouped by law key and answers key; a
mechanism's copies (the same equations up to order, sides and internal names) are
solved once (``new_copies``, ``fastscore.solve.copies``); answers are read once per
(answer texts, solution) (``read_key``: a mechanism and its copies share a solution)
and judged once per answers read (``judged_key``).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence

from fastscore.solve.copies import Copies
from fastscore.sweeps.submission import Submission

__all__ = ["Batch", "ScoreMemo", "formula_entry", "judged_key", "law_entry", "new_copies", "probes_entry",
           "read_key", "verdict_entry"]


class ScoreMemo:
    """What a worker has already scored for each task: the row columns of each
    submission text (and verdicts by canonical formula, by derived law and by probe
    expression), probe results by answer text; never the parsed expressions or
    solutions, so it stays small.  Bounded: the least recently used entries are
    dropped.  It holds only pure results of (reference, text, settings), so rows come
    out the same with or without it; one memo serves one ``Settings``."""

    def __init__(self, max_items: int = 200_000):
        self._items: OrderedDict = OrderedDict()
        self.max_items = max_items

    def get(self, key):
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key, value) -> None:
        self._items[key] = value
        if len(self._items) > self.max_items:
            self._items.popitem(last=False)


def law_entry(task: str, law: tuple) -> tuple:
    """The memo key of a law key's columns: (in_mechanism, law fields)."""
    return "law", task, law


def probes_entry(task: str, answers: tuple) -> tuple:
    """The memo key of an answers key's probe results."""
    return "probes", task, answers


def formula_entry(task: str, text: str) -> tuple:
    """The memo key of a phenomenal formula's outcome, by its canonical text."""
    return "formula", task, text


def verdict_entry(task: str, probe: str | None, text: str) -> tuple:
    """The memo key of the verdict of the expression written ``text`` against the law
    (``probe`` None) or a probe."""
    return "verdict", task, probe, text


def new_copies(reference, settings) -> Copies:
    """The batch's record of solved mechanisms (their copies are solved once), with the
    reference mechanism's solved blocks."""
    copies = Copies((*reference.knowns, reference.problem.target.name))
    copies.blocks.update(reference.own_blocks(settings))
    return copies


def read_key(answers: tuple, candidate) -> tuple:
    """Answers read through one solution are read once: (answer texts, id of the
    solution of the mechanism they use, when it solved)."""
    solved = candidate is not None and candidate.status == "ok" and candidate.solution is not None
    return *answers[:2], id(candidate.solution) if solved else None


def judged_key(parsed: dict) -> int:
    """Answers read once are judged once: the identity of the answers read."""
    return id(parsed)


class Batch:
    """One call's submissions grouped by what their results depend on.

    ``laws``: law key -> (probe -> equal internal quantity, law columns), from the memo,
    or None until scored; ``probe_sets``: answers key -> the probe rows' result columns,
    likewise; ``by_law`` / ``by_answers``: the first submission of each key (its texts)."""

    def __init__(self, task: str, submissions: Sequence[Submission], memo: ScoreMemo):
        self.task, self.submissions, self.memo = task, submissions, memo
        self.laws: dict[tuple, tuple | None] = {}
        self.probe_sets: dict[tuple, list | None] = {}
        self.by_law: dict[tuple, Submission] = {}
        self.by_answers: dict[tuple, Submission] = {}
        for submission in submissions:
            law = submission.law_key
            self.laws.setdefault(law, memo.get(law_entry(task, law)))
            self.by_law.setdefault(law, submission)
            answers = submission.answers_key
            self.probe_sets.setdefault(answers, memo.get(probes_entry(task, answers)))
            self.by_answers.setdefault(answers, submission)

    def wanted(self) -> list[tuple]:
        """The law keys whose candidates are needed: the laws not scored yet, and the
        mechanisms whose quantities unscored probe answers may use.  In the rows' order
        (not a set's, whose order changes from process to process): the first of the
        candidates that derive one law text gives its values, the same bits in every run."""
        wanted = dict.fromkeys(key for key, done in self.laws.items() if done is None)
        wanted.update(dict.fromkeys(answers[2] for answers, done in self.probe_sets.items()
                                    if done is None and answers[2] is not None))
        return list(wanted)

    def rows_of(self) -> dict[tuple, list[int]]:
        """The indices of the rows that share each law key."""
        indices: dict[tuple, list[int]] = {}
        for i, submission in enumerate(self.submissions):
            indices.setdefault(submission.law_key, []).append(i)
        return indices

    def unscored_answers(self) -> Iterator[tuple]:
        """The answers keys whose probe results are not known yet."""
        return (answers for answers, done in self.probe_sets.items() if done is None)

    def keep_laws(self, judged: Mapping[tuple, object]) -> None:
        """Record the columns of the law keys ``judged`` in the batch (law key ->
        ``fastscore.scoring.judge.JudgedLaw``), in the memo too unless it timed out (a
        timeout depends on the machine's load: retried next time)."""
        for key, (candidate, outcome, fields) in judged.items():
            self.laws[key] = (outcome.in_mechanism, fields)
            if candidate.status != "timeout":
                self.memo.put(law_entry(self.task, key), self.laws[key])

    def keep_probes(self, answers: tuple, results: list) -> None:
        """Record an answers key's probe results (in the memo too)."""
        self.probe_sets[answers] = results
        self.memo.put(probes_entry(self.task, answers), results)
