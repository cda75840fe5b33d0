"""Bounded LRUs: ``Memo``, answers with single flight (concurrent requests for one key
are computed once, asyncio), and ``LRU``, values bounded in count and total bytes."""
from __future__ import annotations

import asyncio
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
    """At most ``size`` final answers, least recently used dropped first.

    ``get(key, compute)`` returns ``(answer, how)``: ``how`` is ``"hit"`` (from the
    memo), ``"shared"`` (joined a computation already running for the key) or
    ``"miss"`` (computed by this call).  ``compute()`` returns ``(answer, final)``;
    only final answers are kept.  A computation runs in its own task, so a caller
    that goes away does not cancel it for the others."""

    def __init__(self, size: int):
        if size < 1:
            raise ValueError("the memo needs room for at least one answer")
        self.size = size
        self._answers: OrderedDict[str, object] = OrderedDict()
        self._running: dict[str, asyncio.Task] = {}

    def __len__(self) -> int:
        return len(self._answers)

    async def get(self, key: str, compute: Callable[[], Awaitable[tuple[object, bool]]]) -> tuple[object, str]:
        if key in self._answers:
            self._answers.move_to_end(key)
            return self._answers[key], "hit"
        running = self._running.get(key)
        if running is not None:
            answer, _ = await asyncio.shield(running)
            return answer, "shared"
        running = asyncio.get_running_loop().create_task(compute())
        self._running[key] = running
        running.add_done_callback(lambda done: self._finish(key, done))
        answer, _ = await asyncio.shield(running)
        return answer, "miss"

    def _finish(self, key: str, done: asyncio.Task) -> None:
        del self._running[key]
        if done.cancelled() or done.exception() is not None:
            return
        answer, final = done.result()
        if final:
            self._answers[key] = answer
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
