"""Worker processes for the feedback service: warm, supervised, killed when they overrun.

``FeedbackPool`` (asyncio) keeps ``size`` worker processes, forked from one fork
server that has imported the solver and warmed the Numba kernels
(``fastscore.worker_preload``), so a worker, first or replacement, is ready at
once; it answers jobs from its pipe with ``fastscore.feedback.feedback``.  A job
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
import signal
import sys
from multiprocessing import forkserver
from multiprocessing.connection import Connection

from fastscore.memo import LRU

__all__ = ["FeedbackPool", "TASKS_KEPT", "TASK_BYTES_KEPT", "start_fork_server", "task_memo"]

TASKS_KEPT = 256
TASK_BYTES_KEPT = 256 * 1024 * 1024
"""Public tasks a worker keeps (most recently used): at most this many, of at most
this many bytes of training data in all."""
START_LIMIT = 120.0
"""Seconds a new worker may take to be ready (the fork server's first compilation
of the kernels, on a machine without Numba's cache)."""

_NEED = "need"
_READY = "ready"
_PRELOAD = ["fastscore.worker_preload"]


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
    each with the garbage collector paused (``fastscore.collector``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    from fastscore.collector import paused
    from fastscore.feedback import feedback
    from fastscore.warm import warm_sympy, warm_up

    warm_up()
    warm_sympy()  # at once when forked from the warm fork server (fastscore.worker_preload)
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
    seconds of wall-clock time (the solver is given half of it)."""

    def __init__(self, size: int, *, limit: float):
        if size < 1 or limit <= 0:
            raise ValueError("the pool needs at least one worker and a positive time limit")
        self.size = size
        self.limit = limit
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(_PRELOAD)
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: set[_Worker] = set()
        self._starting: set[asyncio.Task] = set()
        self._closed = False

    def start(self) -> None:
        """Start the workers in the background; jobs wait for the first ready one."""
        for _ in range(self.size):
            self._replace()

    async def evaluate(self, key: str, task, submission: bytes | str) -> tuple[dict, bool]:
        """The answer of one job, and whether it is final (False for a timeout or a
        dead worker: not to be kept in a cache)."""
        worker = await self._idle.get()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limit
        try:
            worker.conn.send((key, None, submission, self.limit))
            reply = await _receive(worker.conn, deadline - loop.time())
            if reply == _NEED:
                worker.conn.send((key, task, submission, self.limit))
                reply = await _receive(worker.conn, deadline - loop.time())
        except TimeoutError:
            self._retire(worker)
            return {"ok": False, "error": f"evaluation stopped: it ran past the time budget of {self.limit:g} s",
                    "error_type": "Timeout"}, False
        except (EOFError, OSError):
            code = worker.process.exitcode
            self._retire(worker)
            return {"ok": False, "error": f"the evaluating worker process died (exit code {code})",
                    "error_type": "WorkerError"}, False
        self._idle.put_nowait(worker)
        return reply, True

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

    def _retire(self, worker: _Worker) -> None:
        self._all.discard(worker)
        worker.kill()
        self._replace()

    def _replace(self) -> None:
        if self._closed:
            return
        task = asyncio.get_running_loop().create_task(self._start_one())
        self._starting.add(task)
        task.add_done_callback(self._starting.discard)

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

    def _spawn(self) -> _Worker:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_work, args=(theirs,), daemon=True, name="fastscore-feedback")
        process.start()
        theirs.close()
        return _Worker(process, ours)


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
