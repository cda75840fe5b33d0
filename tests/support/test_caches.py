"""``fastscore.support.caches``: one ``clear()`` empties every memo cache, and every memo cache
of fastscore is recorded there."""
from __future__ import annotations

import importlib
import pkgutil

import symengine as se

import fastscore
import fastscore.kernels
from fastscore.algebra.rewrites import expand_arguments
from fastscore.support import caches
from fastscore.tapes.warm import warm_up
from fastscore.text.parse import parse_expression, symbol

ONCE_PER_PROCESS = {warm_up}
"""Caches that are deliberately not recorded (see ``fastscore.tapes.warm``)."""


def _fastscore_modules():
    for package in (fastscore, fastscore.kernels):
        yield package
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            yield importlib.import_module(module.name)


def test_clear_empties_the_caches_parsing_and_canonicalising_fill():
    parse_expression("2.5*x + y**3", names=["x", "y"])
    x = symbol("x")
    expand_arguments(se.exp((x + 1) / 2))
    assert symbol.cache_info().currsize > 0 and expand_arguments.cache_info().currsize > 0
    assert caches.clear() == len(caches.registered())
    assert all(cached.cache_info().currsize == 0 for cached in caches.registered())


def test_every_memo_cache_of_fastscore_is_recorded():
    found = {value for module in _fastscore_modules() for value in vars(module).values()
             if callable(getattr(value, "cache_info", None))} - ONCE_PER_PROCESS
    recorded = set(caches.registered())  # read once every module is imported
    assert sorted(f"{value.__module__}.{value.__qualname__}" for value in found - recorded) == []
    assert found == recorded
