"""fastscore's memo caches, in one registry, so that one call empties them all.

A function is memoised with ``@memoized(maxsize)``: that is ``functools.lru_cache``,
and the function returned is the lru_cache wrapper itself (a call costs no more),
recorded here.  ``clear()`` empties every recorded cache, so that a benchmark pass
starts as a fresh worker would.  ``fastscore.tapes.warm.warm_up`` is not one of them: it
runs once per process, and emptying it would only warm the kernels again.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

__all__ = ["clear", "memoized", "registered"]

_CACHES: list = []


def memoized(maxsize: int) -> Callable[[Callable], Callable]:
    """``functools.lru_cache(maxsize=maxsize)``, with the cache recorded for ``clear()``."""
    def record(function: Callable) -> Callable:
        cached = lru_cache(maxsize=maxsize)(function)
        _CACHES.append(cached)
        return cached
    return record


def registered() -> tuple[Callable, ...]:
    """Every recorded cache (functions with ``cache_info`` and ``cache_clear``)."""
    return tuple(_CACHES)


def clear() -> int:
    """Empty every recorded cache; returns how many there are."""
    for cached in _CACHES:
        cached.cache_clear()
    return len(_CACHES)
