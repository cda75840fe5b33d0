"""Ray executor: the same ``score_task`` on a pool of Ray actors.

- Work travels in batches of up to ``Settings.batch_rows`` submissions of one task (never one
  Ray task per submission); the problem set travels once through the object store.
- Each task has a home worker (a stable hash), which takes its batches when it has
  room, so each worker's memo of scored texts sees the repeats of its tasks; an idle
  worker takes any pending batch.
- Each actor keeps its references (law, probes, splits, points) and Numba's compiled
  kernels for its whole life.
- At most two batches are in flight per actor and four per actor wait in the driver,
  so the driver holds a bounded amount of work whatever the sweep's size.
- A bomb costs its own time, not its batch's: before each solve a worker writes which
  rows of which batch it solves to a small file of its machine's memory
  (``fastscore.run.executors.solving``: microseconds); a watcher actor on each machine
  (``_Watch``, on no CPU) reads them when the driver asks, as it checks the time
  limits, which solves have run past ``row_timeout``.  The watcher is another process,
  so a worker stuck in one call into SymEngine's C++ (which holds its interpreter: no
  thread of the worker could see it) is timed all the same.  The worker of such a
  solve is killed, its rows (the rows of the same text) become ``timeout`` rows, and
  the rest of the batch goes again as one batch.  A worker on a machine that joined
  the cluster after the executor started has no watcher: its batches keep the time
  limit below.
- Isolation: a batch whose actor dies otherwise (crash, out of memory, killed) is split
  into single submissions, each retried on a fresh actor; one that kills its actor
  again becomes an ``eval_error`` row.  A batch that runs past its time limit
  (``Settings.row_timeout`` times ``max(2, rows / 50)``, the backstop) has its actor
  killed the same way; a single submission past ``row_timeout`` becomes a ``timeout``
  row.  No row is lost and the rest of the run goes on.
- Limits count a batch's own work: an actor runs its batches in the order sent, so a
  batch's clock starts when the one before it on that actor is seen to end (or when
  it is sent to an idle actor), never while it waits.  Only the batch an actor was
  running is charged with the actor's death; the batch queued behind it is sent again
  as it was.  Rows the executor failed carry no ``submission_sha``: resumed runs score
  them again.
"""
from __future__ import annotations

import errno
import hashlib
import itertools
import os
import socket
import time
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Sequence

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayError, RayTaskError
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

from fastscore.outputs.tables import Status
from fastscore.problems.model import Problem
from fastscore.run.executors.base import ReferenceCache, Result, WorkUnit, score_units
from fastscore.run.executors.batching import DIED, Batch, batches, failed, timeout_error
from fastscore.run.executors.solving import SolveRecord, overrunning, remove_records
from fastscore.scoring.task import score_task
from fastscore.settings import Settings

IN_FLIGHT_PER_WORKER = 2
LOOKAHEAD_PER_WORKER = 4
CONNECT_SECONDS = 5.0  # an --address with nothing behind it fails within this
ASK_EVERY = 0.25  # seconds between the driver's questions to the watchers (and at every batch time limit)
ASK_SECONDS = 1.0  # a watcher that does not answer within this is asked again later


@ray.remote(num_cpus=0)
class _Watch:
    """Reads, for the driver, the solve records of the workers of its machine
    (``fastscore.run.executors.solving``)."""

    def __init__(self, prefix: str):
        self._prefix = prefix

    def overrunning(self, tokens: list[int], seconds: float) -> dict[int, list[int]]:
        return overrunning(self._prefix, tokens, seconds)

    def remove(self) -> None:
        remove_records(self._prefix)


@ray.remote(num_cpus=1)
class _Worker:
    """A long-lived scorer: references and compiled kernels stay warm between batches."""

    def __init__(self, problems: Mapping[str, Problem], settings: Settings, prefix: str):
        self._references = ReferenceCache(problems, settings)
        self._settings = settings
        try:
            self._record = SolveRecord(prefix)
        except OSError:  # nowhere to write: the batch time limits still hold
            self._record = None

    def score(self, units: Sequence[WorkUnit], token: int | None = None) -> list[Result]:
        """The results of the units; with a ``token`` (a batch of one unit), each solve
        is written to the worker's solve record first."""
        progress = None
        if token is not None and len(units) == 1 and self._record is not None:
            def progress(indices: list[int] | None) -> None:
                self._record.write(token, indices)
        return list(score_units(units, self._references, self._settings, score_task, progress))

    def pid(self) -> int:
        return os.getpid()


@dataclass
class _Flight:
    """A batch sent to actor ``index``; ``started``: when it began to run there (None
    while it waits behind another batch); ``token``: its name in the solve records."""

    index: int
    actor: object
    batch: Batch
    started: float | None
    token: int


class RayExecutor:
    """Runs ``fastscore.scoring.task.score_task`` on Ray actors (see module doc)."""

    name = "ray"

    def __init__(self, problems: Mapping[str, Problem], settings: Settings, *, address: str | None = None,
                 workers: int | None = None):
        self._started_ray = not ray.is_initialized()
        if self._started_ray and address not in (None, "auto", "local"):
            _check_reachable(address)
        if self._started_ray:
            ray.init(address=address, num_cpus=None if address else (workers or os.cpu_count()),
                     include_dashboard=False, log_to_driver=False, logging_level="ERROR")
        available = int(ray.available_resources().get("CPU", 1))
        self._n = max(1, min(workers or available, available))
        self._problems = dict(problems)
        self._store = ray.put(self._problems)
        self._settings = settings
        self._batch_rows, self._row_timeout = settings.batch_rows, settings.row_timeout
        self._timed_out: set[int] = set()  # ids of batches whose actor was killed for time
        self._overran: dict[int, list[int]] = {}  # token -> rows whose solve ran past row_timeout
        self._tokens = itertools.count()
        self._asked = 0.0  # when the watchers were last asked
        self._prefix = f"fastscore-solving-{os.getpid()}-{uuid.uuid4().hex[:12]}"
        self._watches = [_Watch.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False))
                         .remote(self._prefix) for node in ray.nodes() if node.get("Alive")]
        self._actors = [self._new_actor() for _ in range(self._n)]

    def _new_actor(self):
        return _Worker.remote(self._store, self._settings, self._prefix)

    def worker_pids(self) -> list[int]:
        """Process ids of the current actors (for operators and tests)."""
        return ray.get([actor.pid.remote() for actor in self._actors])

    def map(self, units: Iterable[WorkUnit]) -> Iterator[Result]:
        """Results of the units, as they complete."""
        fresh = batches(units, self._batch_rows)
        retries: deque[Batch] = deque()
        pending: list[Batch] = []
        in_flight: dict = {}  # ref -> _Flight
        load = [0] * self._n
        while True:
            while len(pending) < LOOKAHEAD_PER_WORKER * self._n:
                batch = next(fresh, None)
                if batch is None:
                    break
                pending.append(batch)
            for index in range(self._n):
                while load[index] < IN_FLIGHT_PER_WORKER and (retries or pending):
                    batch = retries.popleft() if retries else pending.pop(self._choose(pending, index))
                    actor = self._actors[index]
                    started = time.monotonic() if load[index] == 0 else None
                    token = next(self._tokens)  # a lone submission's limit is row_timeout already
                    ref = actor.score.remote(batch.units, None if batch.single else token)
                    in_flight[ref] = _Flight(index, actor, batch, started, token)
                    load[index] += 1
            if not in_flight:
                return
            ready, _ = ray.wait(list(in_flight), num_returns=1, timeout=1.0)
            for ref in ready:
                flight = in_flight.pop(ref)
                load[flight.index] -= 1
                try:
                    results = ray.get(ref)
                except (RayActorError, GetTimeoutError):
                    self._replace(flight.index, flight.actor)
                    if flight.started is None:  # it waited behind the batch that killed the actor
                        retries.append(flight.batch)
                    elif flight.token in self._overran:  # the rest of the batch goes again without them
                        yield from self._overrun(flight.batch, self._overran.pop(flight.token), retries)
                    else:
                        yield from self._failed(flight.batch, retries, "eval_error", DIED)
                    continue
                except RayTaskError as error:  # the actor lives on
                    self._start_next(in_flight, flight.actor)
                    yield from self._failed(flight.batch, retries, "eval_error",
                                            f"scoring raised {str(error).splitlines()[-1][:200]}")
                    continue
                self._start_next(in_flight, flight.actor)
                yield from results
            self._enforce_time_limits(in_flight)

    @staticmethod
    def _start_next(in_flight: dict, actor) -> None:
        """The actor's next batch starts now that its previous one has ended."""
        for flight in in_flight.values():
            if flight.actor is actor and flight.started is None:
                flight.started = time.monotonic()
                return

    def _choose(self, pending: list[Batch], index: int) -> int:
        """The first pending batch whose task belongs to worker ``index`` (so each
        worker's memo sees every repeat of its tasks), else the first one."""
        for position, batch in enumerate(pending):
            if _home(batch.units[0][0], self._n) == index:
                return position
        return 0

    def _enforce_time_limits(self, in_flight: dict) -> None:
        """Kill the actor of a batch whose current solve has run past ``row_timeout``
        (its rows are recorded), or that has run past its time limit."""
        now = time.monotonic()
        overrunning = self._overrunning(in_flight, now)
        for flight in list(in_flight.values()):
            if flight.started is None or self._actors[flight.index] is not flight.actor:
                continue
            if flight.token in overrunning:
                ray.kill(flight.actor)  # its batches now fail with RayActorError
                self._overran[flight.token] = overrunning[flight.token]
            elif now - flight.started > flight.batch.limit(self._row_timeout):
                ray.kill(flight.actor)  # its batches now fail with RayActorError and are retried
                self._timed_out.add(id(flight.batch))

    def _overrunning(self, in_flight: dict, now: float) -> dict[int, list[int]]:
        """``solving.overrunning`` for the batches in flight, when one is running (at
        most every ``ASK_EVERY`` seconds, and whenever a batch is past its time limit)."""
        running = [flight for flight in in_flight.values() if flight.started is not None and not flight.batch.single]
        if not running or (now - self._asked < ASK_EVERY and
                           all(now - flight.started <= flight.batch.limit(self._row_timeout) for flight in running)):
            return {}
        self._asked = now
        tokens = [flight.token for flight in in_flight.values()]
        found: dict[int, list[int]] = {}
        for ref in [watch.overrunning.remote(tokens, self._row_timeout) for watch in self._watches]:
            try:
                found.update(ray.get(ref, timeout=ASK_SECONDS))
            except RayError:  # lost or not started yet: the batch time limits still hold
                pass
        return found

    def _overrun(self, batch: Batch, indices: list[int], retries: deque) -> Iterator[Result]:
        """The rows of a solve that ran past ``row_timeout`` become ``timeout`` rows; the
        rest of their batch goes again, first, as one batch."""
        (task, rows), = batch.units
        lost = set(indices)
        rest = [row for i, row in enumerate(rows) if i not in lost]
        if rest:
            retries.appendleft(Batch([(task, rest)]))
        for i in sorted(lost):
            yield failed(Batch([(task, [rows[i]])], single=True), self._problems, "timeout",
                         timeout_error(self._row_timeout))

    def _replace(self, index: int, actor) -> None:
        if self._actors[index] is actor:
            ray.kill(actor)
            self._actors[index] = self._new_actor()

    def _failed(self, batch: Batch, retries: deque, status: Status, error: str) -> Iterator[Result]:
        """Split a failed batch into single submissions to retry; a single submission
        that failed on its own becomes a row with ``status``."""
        if not batch.single:
            retries.extend(batch.singles())
            return
        if id(batch) in self._timed_out:
            status, error = "timeout", timeout_error(self._row_timeout)
        yield failed(batch, self._problems, status, error)

    def close(self) -> None:
        """Stop the actors, and Ray itself when this executor started it."""
        for actor in self._actors:
            ray.kill(actor)
        try:
            ray.get([watch.remove.remote() for watch in self._watches], timeout=CONNECT_SECONDS)
        except RayError:
            pass
        for watch in self._watches:
            ray.kill(watch)
        if self._started_ray:
            ray.shutdown()


def _check_reachable(address: str) -> None:
    """Raise ValueError (one line) unless something accepts a TCP connection at a Ray
    address (``host:port``, ``ray://host:port``) within ``CONNECT_SECONDS``: Ray itself
    would wait for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        host, port = address.removeprefix("ray://"), "10001" if address.startswith("ray://") else "6379"
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS):
            pass
    except OSError as exc:
        reason = ("connection refused" if isinstance(exc, ConnectionRefusedError) else
                  "no answer" if isinstance(exc, TimeoutError) or exc.errno == errno.ETIMEDOUT else
                  exc.strerror or str(exc))
        raise ValueError(f"cannot reach a Ray cluster at {address}: {reason}") from None


def _home(task: str, n: int) -> int:
    """The worker a task prefers: stable across runs and processes."""
    return int.from_bytes(hashlib.blake2b(task.encode(), digest_size=4).digest(), "big") % n
