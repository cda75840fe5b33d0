"""Worker processes for the feedback service: warm, supervised, killed when they overrun.

``FeedbackPool`` (asyncio) keeps ``size`` worker processes, forked from one fork
server that has imported the solver and warmed the Numba kernels
(``fastscore.service.preload``), so a worker, first or replacement, is ready at
once; it answers jobs from its pipe with ``fastscore.service.feedback.feedback``.  A job
runs on one idle worker; a worker still busy when the job's time limit is reached
is killed (SIGKILL) and replaced, and the job is answered with a ``Timeout`` error;
a worker that dies is replaced too.  No other job is affected.

Tasks travel once per worker: a job names its task by a content digest, and only
when the worker does not hold that task yet (it keeps the last ``TASKS_KEPT``) is
the task itself sent.
"""
from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable
from multiprocessing import forkserver
from multiprocessing.connection import Connection

from fastscore.service.memo import LRU
from fastscore.support.lifeline import tie_to_parent

__all__ = ["FeedbackPool", "TASKS_KEPT", "TASK_BYTES_KEPT", "start_fork_server", "task_memo"]

TASKS_KEPT = 256
TASK_BYTES_KEPT = 256 * 1024 * 1024
"""Public tasks a worker keeps (most recently used): at most this many, of at most
this many bytes of training data in all."""
START_LIMIT = 120.0
"""Seconds a new worker may take to be ready (the fork server's first compilation
of the kernels, on a machine without Numba's cache)."""
TRUSTED_SLICES = 4
"""A trusted client's job keeps its shared worker this many slices (a stall of a busy
machine is not taken for a runaway)."""
LONG_NICE = 10
"""The niceness of a long-lane worker (``_yield_cpu``)."""

_NEED = "need"
_READY = "ready"
_PRELOAD = ["fastscore.service.preload"]


def task_memo() -> LRU:
    """An LRU of public tasks (or of the errors of reading them) within the bounds above."""
    return LRU(TASKS_KEPT, TASK_BYTES_KEPT, lambda task: getattr(getattr(task, "data", None), "nbytes", 0))


def start_fork_server() -> None:
    """Start the fork server now (it warms up in the background); the pool would
    otherwise start it with its first worker."""
    forkserver.set_forkserver_preload(_PRELOAD)
    forkserver.ensure_running()


def _work(conn: Connection) -> None:
    """A worker's life: warm up (at once when forked from the warm fork server), then
    answer ``(task key, task or None, submission, budget)`` jobs until the pipe closes,
    each with the garbage collector paused (``fastscore.support.collector``)."""
    tie_to_parent(os.getppid())  # the fork server; it ends with the service
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    from fastscore.service.feedback import feedback
    from fastscore.support.collector import paused
    from fastscore.tapes.warm import warm_sympy, warm_up

    warm_up()
    warm_sympy()  # at once when forked from the warm fork server (fastscore.service.preload)
    conn.send(_READY)
    tasks = task_memo()
    while True:
        try:
            key, task, submission, budget = conn.recv()
        except (EOFError, OSError):
            return
        if task is not None:
            tasks.put(key, task)
        else:
            task = tasks.get(key)
            if task is None:
                conn.send(_NEED)
                continue
        try:
            with paused():
                answer = feedback(task, submission, budget=budget)
        except Exception as error:  # noqa: BLE001 - a bad submission must never end the worker
            answer = {"ok": False, "error": f"internal error: {error}".splitlines()[0],
                      "error_type": type(error).__name__}
        conn.send(answer)


class _Idle:
    """Idle shared workers, handed to waiting jobs: first ones first, then the others,
    each in order of arrival (``get(later)``)."""

    def __init__(self):
        self._workers: list[_Worker] = []
        self._waiting: dict[bool, deque[asyncio.Future]] = {False: deque(), True: deque()}

    def qsize(self) -> int:
        return len(self._workers)

    def put_nowait(self, worker: _Worker) -> None:
        for low in (False, True):
            waiting = self._waiting[low]
            while waiting:
                future = waiting.popleft()
                if not future.done():
                    future.set_result(worker)
                    return
        self._workers.append(worker)

    async def get(self, low: bool = False) -> _Worker:
        if self._workers and (not low or not any(not f.done() for f in self._waiting[False])):
            return self._workers.pop(0)  # the longest idle first
        future = asyncio.get_running_loop().create_future()
        self._waiting[low].append(future)
        try:
            return await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # handed a worker as it was cancelled: pass it on
                self.put_nowait(future.result())
            raise


class _Gate:
    """At most ``n`` holders; waiters are let in newest first (under overload the
    oldest waiters are the ones that time out, and a client arriving now is served
    now rather than after every queued one)."""

    def __init__(self, n: int):
        self._free = n
        self._waiting: deque[asyncio.Future] = deque()

    async def acquire(self) -> None:
        if self._free > 0 and not any(not f.done() for f in self._waiting):
            self._free -= 1
            return
        future = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # let in as it was cancelled: pass it on
                self.release()
            raise

    def release(self) -> None:
        while self._waiting:
            future = self._waiting.pop()  # the newest first
            if not future.done():
                future.set_result(None)
                return
        self._free += 1


class _Died(Exception):
    """A worker died while it held a job."""

    def __init__(self, code):
        self.code = code


class _Worker:
    def __init__(self, process, conn: Connection):
        self.process = process
        self.conn = conn

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.conn.close()


class FeedbackPool:
    """``size`` warm worker processes answering feedback jobs, each within ``limit``
    seconds of wall-clock time from its arrival (waiting for a worker included; the
    solver is given half of what is left when it starts).

    Fairness: a job gets a first ``slice`` seconds on a shared worker; one still running
    then is a long job, moved to the long lane, which holds at most ``long_jobs`` jobs
    at once, each on a worker of its own (the running worker itself when the lane has
    room, a shared worker being started in its place; else the job is stopped and
    started again on a fresh worker when a place frees, within its deadline), its
    worker at a lower CPU priority (``LONG_NICE``).  Jobs of clients not yet known to
    be well-behaved (neither ``trusted`` nor ``low``) hold at most ``size - 1``
    shared workers at once (at least one; a worker stopped for one counts until its
    replacement is ready), waiting ones let in newest first: one
    shared worker stays free for trusted clients however many unknown ones arrive.
    So runaway submissions never hold the shared workers for more than a slice, and
    normal requests keep their latency.  A trusted client's job has ``TRUSTED_SLICES``
    slices before it moves.  A job whose client goes away is cancelled
    (its worker stopped and replaced); a worker that dies is replaced and its job tried
    once more on another."""

    SLICE = 0.25

    def __init__(self, size: int, *, limit: float, long_jobs: int | None = None, slice: float | None = None):
        if size < 1 or limit <= 0:
            raise ValueError("the pool needs at least one worker and a positive time limit")
        self.size = size
        self.limit = limit
        self.slice = min(self.SLICE if slice is None else slice, limit)
        self.long_jobs = max(1, size // 2) if long_jobs is None else long_jobs
        self._long = asyncio.Semaphore(self.long_jobs)
        self._probe = _Gate(max(1, size - 1))  # unknown clients' jobs on (or places of) shared workers
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(_PRELOAD)
        self._idle = _Idle()
        self._all: set[_Worker] = set()
        self._starting: set[asyncio.Task] = set()
        self._closed = False
        self._ready = asyncio.Event()  # set when a first worker is ready

    def start(self) -> None:
        """Start the workers in the background; jobs wait for the first ready one."""
        for _ in range(self.size):
            self._replace()

    async def evaluate(self, key: str, task, submission: bytes | str, *,
                       arrived: float | None = None, low: bool = False, trusted: bool = False,
                       overran: Callable[[], None] | None = None) -> tuple[dict, bool]:
        """The answer of one job, and whether it is final (False for a timeout or a
        dead worker: not to be kept in a cache).  ``arrived``: the loop time the
        request arrived (default now); the budget counts from it.  A ``low`` job (from
        a client whose work ran past its budget before) goes straight to the long lane,
        never to a shared worker; a ``trusted`` job (from a client whose jobs ended
        within their slice) is handed a shared worker before the others; ``overran()``
        is called when the job runs past its slice (the caller may mark its client
        ``low``)."""
        loop = asyncio.get_running_loop()
        deadline = (loop.time() if arrived is None else arrived) + self.limit
        if not self._ready.is_set():  # the service is starting: its warm-up is not the job's
            await asyncio.wait_for(self._ready.wait(), START_LIMIT)
            deadline = loop.time() + self.limit
        for attempt in range(2):
            if low:  # straight to the long lane: the shared workers are not its to hold
                try:
                    return await self._long_job(None, key, task, submission, deadline)
                except TimeoutError:
                    return self._timeout(), False
                except _Died as died:
                    if attempt == 0 and deadline - loop.time() > 0:
                        continue
                    return self._died(died), False
            gate = None if trusted else self._probe
            try:
                if gate is not None:
                    await asyncio.wait_for(gate.acquire(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                return self._timeout(), False
            try:
                try:
                    worker = await asyncio.wait_for(self._idle.get(not trusted), max(0.0, deadline - loop.time()))
                except TimeoutError:
                    return self._timeout(), False
                turn = self.slice * (TRUSTED_SLICES if trusted else 1)
                reply = await self._run(worker, key, task, submission, min(deadline, loop.time() + turn),
                                        deadline - loop.time())
                if reply is not None:
                    self._idle.put_nowait(worker)
                    return reply, True
                if overran is not None:
                    overran()
                moved = None
                if deadline - loop.time() > 0 and not self._long.locked():
                    await self._long.acquire()  # at once: the lane has room
                    self._all.discard(worker)  # now the lane's own: a shared worker takes its place
                    _yield_cpu(worker)
                    moved, refill = worker, self._replace()
                else:  # stopped: (timed out, or) started again when the lane has room
                    refill = self._retire(worker)
                if gate is not None:  # its place is the unknown clients' again once refilled
                    if refill is None:
                        gate.release()
                    else:
                        refill.add_done_callback(lambda _, gate=gate: gate.release())
                    gate = None
                if moved is None and deadline - loop.time() <= 0:
                    return self._timeout(), False
                return await self._long_job(moved, key, task, submission, deadline)
            except TimeoutError:
                return self._timeout(), False
            except _Died as died:
                if attempt == 0 and deadline - loop.time() > 0:
                    continue  # another worker tries once more
                return self._died(died), False
            finally:
                if gate is not None:
                    gate.release()
        raise AssertionError("unreachable")

    async def _long_job(self, worker: _Worker, key, task, submission, deadline: float) -> tuple[dict, bool]:
        """A job in the long lane (see the class doc): on ``worker``, already moved there
        (holding its place in the lane), or, when None, started on a fresh worker when
        the lane has room."""
        loop = asyncio.get_running_loop()
        if worker is None:
            await asyncio.wait_for(self._long.acquire(), max(0.0, deadline - loop.time()))
        try:
            if worker is None:
                worker = await asyncio.wait_for(asyncio.to_thread(self._spawn), max(0.0, deadline - loop.time()))
                _yield_cpu(worker)
                if await _receive(worker.conn, deadline - loop.time()) != _READY:
                    raise _Died(worker.process.exitcode)
                reply = await self._run(worker, key, task, submission, deadline, deadline - loop.time(),
                                        shared=False)
            else:
                reply = await _receive(worker.conn, deadline - loop.time())
            if reply is None:
                raise TimeoutError
            return reply, True
        except TimeoutError:  # an OSError too: not a death
            raise
        except (EOFError, OSError):
            raise _Died(None if worker is None else worker.process.exitcode) from None
        finally:
            if worker is not None:
                worker.kill()
            self._long.release()

    async def _run(self, worker: _Worker, key, task, submission, until: float, budget: float, *,
                   shared: bool = True):
        """Send the job (``budget`` seconds for the evaluation) and wait for its answer
        until ``until`` (loop time): the reply, or None when still running then (the
        worker is left running it).  A worker that dies raises ``_Died``; a cancelled
        wait stops the worker.  A ``shared`` worker stopped is replaced; a long-lane
        worker (started with no task held) is not."""
        loop = asyncio.get_running_loop()
        budget = max(budget, 0.001)
        stop = self._retire if shared else _Worker.kill
        try:
            worker.conn.send((key, None if shared else task, submission, budget))
            reply = await _receive(worker.conn, until - loop.time())
            if reply == _NEED:
                worker.conn.send((key, task, submission, budget))
                reply = await _receive(worker.conn, until - loop.time())
            return reply
        except TimeoutError:
            return None
        except (EOFError, OSError):
            stop(worker)
            raise _Died(worker.process.exitcode) from None
        except asyncio.CancelledError:  # the client went away: its work is stopped
            stop(worker)
            raise

    @staticmethod
    def _died(died: _Died) -> dict:
        return {"ok": False, "error": f"the evaluating worker process died (exit code {died.code}), twice",
                "error_type": "WorkerError"}

    def _timeout(self) -> dict:
        return {"ok": False, "error": f"evaluation stopped: it ran past the time budget of {self.limit:g} s",
                "error_type": "Timeout"}

    def status(self) -> dict:
        """Process ids of the live workers, how many are idle and how many starting."""
        return {"workers": sorted(w.process.pid for w in self._all), "idle": self._idle.qsize(),
                "starting": len(self._starting)}

    async def close(self) -> None:
        """Stop every worker (and the ones still starting)."""
        self._closed = True
        for starting in list(self._starting):
            starting.cancel()
        await asyncio.gather(*self._starting, return_exceptions=True)
        for worker in list(self._all):
            worker.kill()
        self._all.clear()

    def _retire(self, worker: _Worker) -> asyncio.Task | None:
        self._all.discard(worker)
        worker.kill()
        return self._replace()

    def _replace(self) -> asyncio.Task | None:
        """Start a shared worker in the background: the task that ends when it is ready
        (or failed to start); None once the pool is closed."""
        if self._closed:
            return None
        task = asyncio.get_running_loop().create_task(self._start_one())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)
        return task

    async def _start_one(self) -> None:
        # Process.start() waits for the fork server (which imports fastscore the first
        # time), so it runs in a thread, off the event loop.
        worker = await asyncio.to_thread(self._spawn)
        self._all.add(worker)
        try:
            if await _receive(worker.conn, START_LIMIT) != _READY:
                raise OSError("unexpected first message")
        except (TimeoutError, EOFError, OSError) as error:
            self._all.discard(worker)
            worker.kill()
            print(f"fastscore serve: a worker failed to start ({error or type(error).__name__})",
                  file=sys.stderr, flush=True)
            return
        if self._closed:
            worker.kill()
            return
        self._idle.put_nowait(worker)
        self._ready.set()

    def _spawn(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_work, args=(theirs,), daemon=True, name="fastscore-feedback")
        process.start()
        theirs.close()
        return _Worker(process, ours)


def _yield_cpu(worker: _Worker) -> None:
    """Lower a long-lane worker's CPU priority (nice +``LONG_NICE``): on a busy machine
    the shared workers' short jobs run first.  It never serves a shared job again.
    (On Linux this is the main thread's priority, the one that evaluates.)"""
    try:
        os.setpriority(os.PRIO_PROCESS, worker.process.pid, LONG_NICE)
    except (AttributeError, OSError):  # not on this platform, or the process has ended
        pass


async def _receive(conn: Connection, timeout: float):
    """The next message on ``conn``, waiting at most ``timeout`` seconds without
    blocking the event loop (``TimeoutError``; ``EOFError`` when the peer is gone)."""
    if not conn.poll(0):
        loop = asyncio.get_running_loop()
        readable = loop.create_future()
        fd = conn.fileno()
        loop.add_reader(fd, lambda: readable.done() or readable.set_result(None))
        try:
            await asyncio.wait_for(readable, max(timeout, 0.0))
        finally:
            loop.remove_reader(fd)
    return conn.recv()
