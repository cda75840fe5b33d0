"""The feedback service (``fastscore serve``): MechBench's ``mdbench-proposal-v1`` over
HTTP, plus a JSON API for prepared public tasks.  Built on aiohttp.

- ``GET /health`` -> ``{"ok": true, "protocol": "mdbench-proposal-v1"}``;
- ``POST /evaluate``, multipart/form-data with exactly the three file fields
  ``problem`` (public problem.json), ``train_data`` (NPY bytes) and ``submission``
  (text): 200 with the answer of ``fastscore.service.feedback`` (the protocol's keys only),
  400 ``{"ok": false, "error"}`` for a malformed upload (not multipart, a missing,
  repeated or unknown field, a compressed part, train_data that is not an NPY
  array, a body outside 1 byte to 32 MiB);
- ``GET /v1/tasks``: the task folders loaded at start (``--tasks DIR``);
- ``GET /v1/status``: the worker processes (ids, idle, starting) and the cache size;
- ``POST /v1/feedback`` with JSON ``{"task": id, "submission": text}``: the same
  answer for a loaded task, with fastscore's extras (404 for an unknown task, 400
  for a malformed body);
- any other path: 404; another method on a known path: 405.

Uploaded tasks are read once (the last few kept by content digest), answers
computed in worker processes (``fastscore.service.workers``) within a time
budget, kept in a bounded LRU keyed by the SHA-256 of the task's files and the
submission, with concurrent duplicates computed once (``fastscore.service.memo``).  Each
request logs one line to stderr: method, path, status, milliseconds, cache
(hit, miss, shared or -); an answer also carries its cache status in the header
``X-Fastscore-Cache``.  The service reads public files only.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import signal
import sys
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from aiohttp import BodyPartReader, hdrs, web

from fastscore.service.memo import LRU, Memo
from fastscore.service.protocol import (
    DEFAULT_BUDGET,
    DEFAULT_CACHE,
    EXTRAS,
    FIELDS,
    MAX_UPLOAD,
    PROTOCOL,
    protocol_answer,
)
from fastscore.service.public import PublicTask, TaskError, public_task, read_problem, read_train
from fastscore.service.workers import FeedbackPool, task_memo

__all__ = ["LoadedTask", "create_app", "load_task_folders", "serve"]

CACHE_HEADER = "X-Fastscore-Cache"
"""Response header of an answer: hit, miss or shared (joined a running computation)."""
_CHUNK = 1 << 16
_INLINE = 1 << 20
"""Task files larger than this (bytes) are read off the event loop."""
MAX_JSON = 2 * 1024 * 1024
"""Largest JSON body of ``POST /v1/feedback`` (a submission is at most 256 K characters)."""
BODY_SECONDS = 30.0
"""A request body must arrive within this many seconds (a slow client is answered 400)."""
KEEPALIVE_SECONDS = 15.0
"""An idle kept-alive connection is closed after this many seconds, and so is one whose
request line and headers are not complete by then (aiohttp's keep-alive timer, armed
when the connection opens, in aiohttp 3.14.5 and later)."""

_dumps = partial(json.dumps, allow_nan=False)


class UploadError(ValueError):
    """A malformed request: answered 400 with the reason."""


@dataclass(frozen=True)
class LoadedTask:
    """A public task folder loaded at start; ``key`` digests its two files."""

    task: PublicTask
    key: str


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big"))
        digest.update(part)
    return digest.hexdigest()


def load_task_folders(root: str | Path) -> dict[str, LoadedTask]:
    """Every folder under ``root`` holding ``problem.json`` and ``train.npy``, by
    task id: the folder's path relative to ``root``, a last ``agent`` component
    dropped (MechBench's export layout ``<task>/agent/``)."""
    root = Path(root)
    if not root.is_dir():
        raise NotADirectoryError(f"no task directory {root}")
    tasks: dict[str, LoadedTask] = {}
    for problem_file in sorted(root.rglob("problem.json")):
        folder = problem_file.parent
        if not (folder / "train.npy").is_file():
            continue
        parts = folder.relative_to(root).parts
        if parts and parts[-1] == "agent":
            parts = parts[:-1]
        task_id = "/".join(parts) or "."
        problem, train = problem_file.read_bytes(), (folder / "train.npy").read_bytes()
        try:
            task = public_task(read_problem(problem), read_train(train))
        except TaskError as error:
            raise TaskError(f"task folder {folder}: {error}") from None
        if task_id in tasks:
            raise ValueError(f"two task folders have the id {task_id!r}")
        tasks[task_id] = LoadedTask(task, _digest(problem, train))
    if not tasks:
        raise FileNotFoundError(f"no task folder (problem.json + train.npy) under {root}")
    return tasks


def _json(value, status: int = 200, *, cache: str | None = None) -> web.Response:
    response = web.json_response(value, status=status, dumps=_dumps)
    if cache is not None:
        response.headers[CACHE_HEADER] = cache
    return response


class _Service:
    def __init__(self, pool: FeedbackPool, memo: Memo, tasks: dict[str, LoadedTask]):
        self.pool = pool
        self.memo = memo
        self.tasks = tasks
        self.uploaded = task_memo()  # task key -> its reading (a task or a TaskError)
        self.clients = LRU(4096, 4096, lambda _: 1)  # client (host, port) -> True: last job within its slice, False: a runaway
        self.overran = LRU(4096, 4096, lambda _: 1)  # answer key (task + submission) -> True: it ran past its slice and budget

    async def _evaluate(self, request: web.Request, key: str, task, submission: bytes,
                        answer_key: str) -> tuple[dict, bool]:
        """The pool's answer; a client (connection) whose last job ran past its slice and
        then its budget, or a submission (on this task) that did, goes to the long lane at once
        (a runaway cannot escape by reconnecting), a client whose last job ended within
        its slice is served first (``FeedbackPool.evaluate``'s ``low`` and ``trusted``)."""
        client = request.transport.get_extra_info("peername") if request.transport is not None else None
        known = None if client is None else self.clients.get(client)
        ran_over = []
        answer, final = await self.pool.evaluate(
            key, task, submission, arrived=request["arrived"],
            low=known is False or self.overran.get(answer_key) is True,
            trusted=known is True, overran=lambda: ran_over.append(True))
        runaway = bool(ran_over) and not final  # past its slice, then its budget: slow but answered is not
        if runaway:
            self.overran.put(answer_key, True)
        if client is not None and (runaway or final):
            self.clients.put(client, None if ran_over and not runaway else not runaway)
        return answer, final

    async def health(self, request: web.Request) -> web.Response:
        return _json({"ok": True, "protocol": PROTOCOL})

    async def evaluate(self, request: web.Request) -> web.Response:
        files = await _read_upload(request)
        if len(files["problem"]) + len(files["train_data"]) > _INLINE:
            task_key = await asyncio.to_thread(_digest, files["problem"], files["train_data"])
        else:
            task_key = _digest(files["problem"], files["train_data"])

        async def compute():
            task = self.uploaded.get(task_key)
            if task is None:
                if len(files["problem"]) + len(files["train_data"]) > _INLINE:
                    task = await asyncio.to_thread(_uploaded_task, files)
                else:
                    task = _uploaded_task(files)
                self.uploaded.put(task_key, task)
            if isinstance(task, TaskError):
                return {"ok": False, "error": str(task), "error_type": "TaskError"}, True
            return await self._evaluate(request, task_key, task, files["submission"], answer_key)

        answer_key = _digest(task_key.encode(), files["submission"])
        answer, request["cache"] = await self.memo.get(answer_key, compute)
        return _json(protocol_answer(answer), cache=request["cache"])

    async def status(self, request: web.Request) -> web.Response:
        return _json({"ok": True, "pool": self.pool.status(), "cached_answers": len(self.memo)})

    async def tasks_list(self, request: web.Request) -> web.Response:
        listed = []
        for task_id, loaded in self.tasks.items():
            task = loaded.task
            listed.append({"task": task_id, "target": task.target, "sources": list(task.sources),
                           "n_samples": task.n_samples, "task_description": task.description})
        return _json({"ok": True, "tasks": listed})

    async def feedback(self, request: web.Request) -> web.Response:
        body = await _read_json_body(request)
        try:  # off the event loop when large: other requests are served meanwhile
            query = json.loads(body) if len(body) <= _CHUNK else await asyncio.to_thread(json.loads, body)
        except (ValueError, RecursionError):  # not JSON, not UTF-8, an integer of thousands of digits
            raise UploadError("the body must be a JSON object {\"task\": ..., \"submission\": ...}") from None
        if not isinstance(query, dict) or set(query) != {"task", "submission"}:
            raise UploadError("the body must be a JSON object with exactly the keys task and submission")
        if not isinstance(query["task"], str) or not isinstance(query["submission"], str):
            raise UploadError("task and submission must be strings")
        loaded = self.tasks.get(query["task"])
        if loaded is None:
            return _json({"ok": False, "error": f"unknown task {query['task'][:200]!r}; see GET /v1/tasks"}, 404)
        submission = query["submission"].encode("utf-8", "surrogatepass")  # a lone surrogate fails to decode later

        async def compute():
            return await self._evaluate(request, loaded.key, loaded.task, submission, answer_key)

        answer_key = _digest(loaded.key.encode(), submission)
        answer, request["cache"] = await self.memo.get(answer_key, compute)
        return _json(answer if EXTRAS in answer else answer | {EXTRAS: {}}, cache=request["cache"])


def _uploaded_task(files: dict[str, bytes]) -> PublicTask | TaskError:
    """The task of an upload, or why it is not a public task; ``UploadError`` when
    train_data is not an NPY array at all."""
    try:
        train = read_train(files["train_data"])
    except TaskError as error:
        raise UploadError(str(error)) from None
    try:
        return public_task(read_problem(files["problem"]), train)
    except TaskError as error:
        return error


async def _read_json_body(request: web.Request) -> bytes:
    """A JSON request's body: at most ``MAX_JSON`` bytes, read within ``BODY_SECONDS``."""
    length = request.content_length
    if length is not None and length > MAX_JSON:
        raise UploadError(f"the JSON body must be at most {MAX_JSON} bytes, got {length}")
    chunks, total = [], 0
    try:
        async with asyncio.timeout(BODY_SECONDS):
            while chunk := await request.content.read(_CHUNK):
                total += len(chunk)
                if total > MAX_JSON:
                    raise UploadError(f"the JSON body must be at most {MAX_JSON} bytes")
                chunks.append(chunk)
    except TimeoutError:
        raise UploadError(f"the body was not received within {BODY_SECONDS:g} s") from None
    return b"".join(chunks)


async def _read_upload(request: web.Request) -> dict[str, bytes]:
    """The three file fields of a multipart upload, each read with the size cap, all
    within ``BODY_SECONDS``."""
    try:
        async with asyncio.timeout(BODY_SECONDS):
            return await _read_fields(request)
    except TimeoutError:
        raise UploadError(f"the upload was not received within {BODY_SECONDS:g} s") from None


async def _read_fields(request: web.Request) -> dict[str, bytes]:
    length = request.content_length
    if length is not None and not 1 <= length <= MAX_UPLOAD:
        raise UploadError(f"upload must be 1 to {MAX_UPLOAD} bytes, got {length}")
    if request.content_type != "multipart/form-data":
        raise UploadError("use multipart/form-data with the three file fields problem, train_data, submission")
    files: dict[str, bytes] = {}
    total = 0
    try:
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                raise UploadError("nested multipart parts are not accepted")
            name = part.name
            if name not in FIELDS:
                raise UploadError(f"unexpected field {str(name)[:60]!r}: expected problem, train_data, submission")
            if name in files:
                raise UploadError(f"field {name} is given more than once")
            if part.headers.get(hdrs.CONTENT_ENCODING, "identity").lower() != "identity":
                raise UploadError(f"field {name}: compressed parts are not accepted")
            chunks = []
            while chunk := await part.read_chunk(_CHUNK):
                total += len(chunk)
                if total > MAX_UPLOAD:
                    raise UploadError(f"upload must be 1 to {MAX_UPLOAD} bytes")
                chunks.append(chunk)
            files[name] = bytes(part.decode(b"".join(chunks)))
    except (ValueError, AssertionError, LookupError, RuntimeError) as error:
        if isinstance(error, UploadError):
            raise
        raise UploadError(f"malformed multipart body: {str(error).splitlines()[0] if str(error) else type(error).__name__}") from None
    missing = [name for name in FIELDS if name not in files]
    if missing:
        raise UploadError(f"missing field{'s' if len(missing) > 1 else ''} {', '.join(missing)}: "
                          "upload problem JSON, train NPY and submission text")
    return files


@web.middleware
async def _shape_and_log(request: web.Request, handler) -> web.StreamResponse:
    """JSON errors for every failure, and one log line per request."""
    started = time.perf_counter()
    request["arrived"] = asyncio.get_running_loop().time()  # a job's budget counts from here
    try:
        response = await handler(request)
    except asyncio.CancelledError:  # the client went away: its work is cancelled
        ms = 1000 * (time.perf_counter() - started)
        print(f"fastscore serve: {request.method} {request.raw_path[:200]} client gone {ms:.1f} ms "
              f"cache={request.get('cache', '-')}", file=sys.stderr, flush=True)
        raise
    except UploadError as error:
        response = _json({"ok": False, "error": str(error)}, 400)
    except web.HTTPException as error:
        response = _json({"ok": False, "error": error.reason}, error.status)
    except Exception as error:  # noqa: BLE001 - a bug answers 500 and the service goes on
        response = _json({"ok": False, "error": f"internal error: {type(error).__name__}: {error}"[:500]}, 500)
    ms = 1000 * (time.perf_counter() - started)
    print(f"fastscore serve: {request.method} {request.raw_path[:200]} {response.status} {ms:.1f} ms "
          f"cache={request.get('cache', '-')}", file=sys.stderr, flush=True)
    return response


def create_app(pool: FeedbackPool, *, tasks: dict[str, LoadedTask] | None = None,
               cache_size: int = DEFAULT_CACHE) -> web.Application:
    """The aiohttp application over a started ``pool``."""
    service = _Service(pool, Memo(cache_size), tasks or {})
    app = web.Application(middlewares=[_shape_and_log], client_max_size=MAX_UPLOAD)
    app.router.add_get("/health", service.health, allow_head=False)
    app.router.add_post("/evaluate", service.evaluate)
    app.router.add_get("/v1/tasks", service.tasks_list, allow_head=False)
    app.router.add_get("/v1/status", service.status, allow_head=False)
    app.router.add_post("/v1/feedback", service.feedback)
    return app


async def serve(host: str = "127.0.0.1", port: int = 8000, *, workers: int = 2, budget: float = DEFAULT_BUDGET,
                cache_size: int = DEFAULT_CACHE, tasks: dict[str, LoadedTask] | None = None) -> None:
    """Run the service until SIGINT or SIGTERM.  Prints one JSON line to stdout when
    listening: ``{"url": ".../evaluate", "protocol": ..., "tasks": n}``."""
    pool = FeedbackPool(workers, limit=budget)
    pool.start()
    # a client that goes away cancels its handler (and so its evaluation, fastscore.service.memo);
    # an idle kept-alive connection is closed after KEEPALIVE_SECONDS
    runner = web.AppRunner(create_app(pool, tasks=tasks, cache_size=cache_size), access_log=None,
                           handle_signals=False, handler_cancellation=True, keepalive_timeout=KEEPALIVE_SECONDS)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
        bound = runner.addresses[0][1]
        shown = f"[{host}]" if ":" in host else host
        print(_dumps({"url": f"http://{shown}:{bound}/evaluate", "protocol": PROTOCOL, "tasks": len(tasks or {})}),
              flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await stop.wait()
    finally:
        await runner.cleanup()
        await pool.close()
