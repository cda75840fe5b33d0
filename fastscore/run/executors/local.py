"""Local executor: scores work units in one supervised child process.

SymEngine's C++ cannot be interrupted (no signal reaches into a long expansion), so a
row's work is bounded by the process that does it: the child is killed when a batch
runs past its time limit, or dies by itself (a crash, a memory limit), and a new one
is forked.  As in the Ray executor:

- units travel in batches of up to ``Settings.batch_rows`` submissions of one task;
- the clock of a batch starts when the child starts it (the child says so), so time
  spent queued behind a slow batch never counts; the limit is ``Settings.row_timeout`` times
  ``max(2, rows / 50)``;
- the child says which submission it solves: one whose solve alone runs past
  ``row_timeout`` stops the child, becomes a ``timeout`` row (with the rows of the same
  text), and the rest of its batch goes again as a batch, so that a bomb costs its own
  time, not its batch's;
- a batch that fails otherwise (time limit, death, an exception in scoring) is retried one
  submission at a time; a lone submission past ``row_timeout`` becomes a ``timeout``
  row, one that kills the child or raises an ``eval_error`` row, and no other row is
  affected.  Such rows carry no ``submission_sha``, so a resumed run scores them again.

The child is forked from this process when the executor is made, so it starts at once
with everything imported; it scores one problem's own law before its first batch
(compiling or loading the kernels is never charged to a batch), and holds the
references and the memory of scored texts (lost, and rebuilt on demand, when it is
replaced).  Its address space is limited to ``memory_limit`` bytes (or less, when
this process is limited already).  Two batches are sent ahead and read by a thread
of the child as they arrive, so it never waits for this process.
"""
from __future__ import annotations

import multiprocessing
import os
import queue
import resource
import signal
import threading
import time
from collections import deque
from typing import Iterable, Iterator, Mapping

from fastscore.problems.model import Problem
from fastscore.run.executors.base import ReferenceCache, Result, WorkUnit, score_units
from fastscore.run.executors.batching import DIED, Batch, batches, failed, timeout_error
from fastscore.scoring.task import score_task
from fastscore.settings import Settings
from fastscore.support.collector import paused
from fastscore.support.lifeline import tie_to_parent

IN_FLIGHT = 2  # batches sent ahead to the child
OVERRUN = "overrun"  # the outcome of a batch stopped by one submission's solve


def _memory_limit() -> int:
    """Half of the machine's memory."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2


class LocalExecutor:
    """Runs ``fastscore.scoring.task.score_task`` in a supervised child process (see module doc)."""

    name = "local"

    def __init__(self, problems: Mapping[str, Problem], settings: Settings, *, memory_limit: int | None = None):
        self._problems, self._settings = dict(problems), settings
        self._batch_rows, self._row_timeout = settings.batch_rows, settings.row_timeout
        self._memory_limit = _memory_limit() if memory_limit is None else memory_limit
        self._child = self._connection = None
        self._start()  # its warm-up overlaps the reading of the sweep's first rows

    def worker_pid(self) -> int | None:
        """Process id of the current child (for operators and tests)."""
        return None if self._child is None else self._child.pid

    def map(self, units: Iterable[WorkUnit]) -> Iterator[Result]:
        """Results of the units, as they complete.  ``IN_FLIGHT`` batches are sent
        ahead (the child reads them as they come), so the child never waits for this
        process to read the sweep, hand a result on or write it."""
        fresh = batches(units, self._batch_rows)
        retries: deque[Batch] = deque()
        sent: deque[Batch] = deque()  # in the child's order: the first is the one it runs

        def fill() -> None:
            while len(sent) < IN_FLIGHT:
                batch = retries.popleft() if retries else next(fresh, None)
                if batch is None:
                    return
                if not self._send(batch):  # the child has died
                    retries.appendleft(batch)
                    if sent:  # read as the death of the batch it was running
                        return
                    self._stop()  # it died idle: a new one
                    if not self._send(batch):
                        raise RuntimeError("the scoring process died as it started")
                    retries.popleft()
                sent.append(batch)

        fill()
        while sent:
            outcome = self._outcome(sent[0])
            batch = sent.popleft()
            failure = isinstance(outcome[0], str)
            if self._child is None:  # stopped: the batches behind never started, they go again
                retries.extendleft(reversed(sent))
                sent.clear()
            overran = []
            if failure and outcome[0] == OVERRUN:  # the rest of the batch goes again without them
                (task, rows), = batch.units
                overran = [Batch([(task, [rows[i]])], single=True) for i in outcome[1]]
                rest = [row for i, row in enumerate(rows) if i not in set(outcome[1])]
                if rest:
                    retries.appendleft(Batch([(task, rest)]))
            elif failure and not batch.single:
                retries.extendleft(reversed(batch.singles()))
            fill()
            if not failure:
                yield outcome
            elif overran:
                for single in overran:
                    yield failed(single, self._problems, "timeout", timeout_error(self._row_timeout))
            elif batch.single:
                yield failed(batch, self._problems, *outcome)

    def _outcome(self, batch: Batch) -> Result | tuple[str, str]:
        """The child's result for ``batch`` (the first it has not finished), or the
        (status, error) of its failure; a child past the time limit is stopped, as is
        one that died.  A submission of a batch whose solve alone runs past
        ``row_timeout`` (the child says which it solves) stops it too: (``OVERRUN``, the
        indices of its rows in the batch)."""
        started = solving = None  # solving: (row indices, since when)
        while True:
            if started is None:
                wait = 1.0
            else:
                deadline = started + batch.limit(self._row_timeout)
                if solving is not None:
                    deadline = min(deadline, solving[1] + self._row_timeout)
                wait = max(0.0, deadline - time.monotonic())
            try:
                message = self._connection.recv() if self._connection.poll(wait) else None
            except (EOFError, OSError):  # the child died
                self._stop()
                return "eval_error", DIED
            if message is None:
                if started is not None:
                    self._stop()
                    if solving is not None and not batch.single and \
                            time.monotonic() >= solving[1] + self._row_timeout:
                        return OVERRUN, solving[0]
                    return "timeout", timeout_error(self._row_timeout)
            elif message[0] == "started":
                started = time.monotonic()
            elif message[0] == "solving":
                solving = None if not message[1] else (message[1], time.monotonic())
            elif message[0] == "done":
                return message[1]
            else:
                return "eval_error", f"scoring raised {message[1]}"

    def _send(self, batch: Batch) -> bool:
        """Send a batch to the child (started when there is none); False when the child
        has died."""
        if self._child is None:
            self._start()
        try:
            self._connection.send(batch.units)
        except OSError:
            return False
        return True

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        self._connection, child_end = context.Pipe()
        self._child = context.Process(target=_serve, args=(child_end, self._problems, self._settings,
                                                           self._memory_limit, self._connection, os.getpid()),
                                      daemon=True)
        self._child.start()
        child_end.close()

    def _stop(self) -> None:
        if self._child is not None:
            self._child.kill()
            self._child.join()
            self._connection.close()
        self._child = self._connection = None

    def close(self) -> None:
        """Stop the child."""
        self._stop()


def _serve(connection, problems: Mapping[str, Problem], settings: Settings, memory_limit: int,
           parent_end, parent: int) -> None:
    """The child: score each batch received, saying when it starts; exit when the
    parent is gone (killed with it: ``fastscore.support.lifeline.tie_to_parent``; its end of
    the pipe, inherited by the fork, is closed so that the pipe's end is seen).  A
    thread reads the batches as they arrive, so the parent never blocks sending one.
    Ctrl-C and SIGTERM are the parent's to handle."""
    tie_to_parent(parent)
    parent_end.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    arrived: queue.SimpleQueue = queue.SimpleQueue()

    def read() -> None:
        while True:
            try:
                arrived.put(connection.recv())
            except (EOFError, OSError):  # the parent is gone: no one reads a result
                os._exit(0)
    threading.Thread(target=read, daemon=True).start()
    references = ReferenceCache(problems, settings)
    _warm_up(references, problems)
    while True:
        units = arrived.get()
        connection.send(("started",))
        try:
            scored = list(score_units(units, references, settings, score_task,
                                      lambda rows: connection.send(("solving", rows))))
        except Exception as error:  # a bug or an exhausted resource: the parent retries row by row
            text = (str(error).splitlines() or [""])[0][:200]
            connection.send(("raised", f"{type(error).__name__}: {text}" if text else type(error).__name__))
            continue
        connection.send(("done", _merged(scored)))


def _warm_up(references: ReferenceCache, problems: Mapping[str, Problem]) -> None:
    """Score one problem's own law before the first batch, so that compiling (or loading)
    the kernels is never charged to a batch's time limit."""
    task = next(iter(problems), None)
    if task is None:
        return
    try:
        with paused():  # as in score_units
            score_task(references[task], [{"config": "", "run": 0, "task": task, "phenomenal": problems[task].law}])
    except Exception:  # the batches will meet (and report) the same failure
        pass


def _merged(results: list[Result]) -> Result:
    """The results of a batch's units as one result."""
    score_rows, probe_rows = [], []
    for scores, probes in results:
        score_rows.extend(scores)
        probe_rows.extend(probes)
    return score_rows, probe_rows
