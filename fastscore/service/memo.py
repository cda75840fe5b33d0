"""Bounded LRUs: ``Memo``, answers with single flight (concurrent requests for one key
are computed once, asyncio), and ``LRU``, values bounded in count and total bytes."""
from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable

__all__ = ["LRU", "Memo"]


class LRU:
    """At most ``items`` values of at most ``nbytes`` in all (``size(value)`` each),
    least recently used dropped first."""

    def __init__(self, items: int, nbytes: int, size: Callable[[object], int]):
        self.items = items
        self.nbytes = nbytes
        self._size = size
        self._values: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._total = 0

    def __len__(self) -> int:
        return len(self._values)

    def get(self, key: Hashable):
        """The value of ``key`` (now the most recently used), or None."""
        found = self._values.get(key)
        if found is None:
            return None
        self._values.move_to_end(key)
        return found[0]

    def put(self, key: Hashable, value: object) -> None:
        if key in self._values:
            self._total -= self._values.pop(key)[1]
        size = self._size(value)
        self._values[key] = (value, size)
        self._total += size
        while len(self._values) > 1 and (len(self._values) > self.items or self._total > self.nbytes):
            self._total -= self._values.popitem(last=False)[1][1]


class Memo:
    """At most ``size`` final answers of at most ``nbytes`` in all (each measured by
    ``measure``, default the length of its JSON text), least recently used dropped
    first.

    ``get(key, compute)`` returns ``(answer, how)``: ``how`` is ``"hit"`` (from the
    memo), ``"shared"`` (joined a computation already running for the key) or
    ``"miss"`` (computed by this call).  ``compute()`` returns ``(answer, final)``;
    only final answers are kept.  A computation runs in its own task, so a caller
    that goes away does not cancel it for the others; when every caller waiting for
    it has gone, it is cancelled (its work is abandoned)."""

    def __init__(self, size: int, nbytes: int = 256 * 1024 * 1024, measure: Callable[[object], int] | None = None):
        if size < 1:
            raise ValueError("the memo needs room for at least one answer")
        self.size = size
        self._answers = LRU(size, nbytes, measure or _json_size)
        self._running: dict[str, asyncio.Task] = {}
        self._waiting: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._answers)

    async def get(self, key: str, compute: Callable[[], Awaitable[tuple[object, bool]]]) -> tuple[object, str]:
        found = self._answers.get(key)
        if found is not None:
            return found, "hit"
        running = self._running.get(key)
        how = "shared"
        if running is None:
            how = "miss"
            running = asyncio.get_running_loop().create_task(compute())
            self._running[key] = running
            running.add_done_callback(lambda done: self._finish(key, done))
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            answer, _ = await asyncio.shield(running)
        finally:
            left = self._waiting[key] = self._waiting.get(key, 1) - 1
            if left <= 0:
                self._waiting.pop(key, None)
                if not running.done():  # every caller has gone: nobody wants the answer
                    running.cancel()
        return answer, how

    def _finish(self, key: str, done: asyncio.Task) -> None:
        if self._running.get(key) is done:
            del self._running[key]
        if done.cancelled() or done.exception() is not None:
            return
        answer, final = done.result()
        if final:
            self._answers.put(key, answer)


def _json_size(answer: object) -> int:
    try:
        return len(json.dumps(answer, default=str))
    except (TypeError, ValueError):
        return 1024
