"""Executors that run ``fastscore.scoring.task`` over a sweep, by name: ``local`` (one
supervised child process), ``ray`` (a pool of Ray actors), and ``auto``, which
``fastscore.run.job`` resolves to one of them by the sweep's size.

An executor is registered as a factory, called as ``factory(problems, settings, *,
address, workers)`` (problems by task id; ``address`` and ``workers`` may be None and
an executor may ignore them), which returns a started ``Executor``
(``fastscore.run.executors.base``: the contract).  ``register_executor`` adds one.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from fastscore.run.executors.base import Executor

ExecutorName = Literal["auto", "local", "ray"]
"""The built-in names (the CLI's choices); Python callers may also pass a registered name."""
ExecutorFactory = Callable[..., "Executor"]


def _local(problems, settings, *, address, workers) -> Executor:
    from fastscore.run.executors.local import LocalExecutor
    return LocalExecutor(problems, settings)


def _ray(problems, settings, *, address, workers) -> Executor:
    from fastscore.support.extras import require
    require("ray")  # one line naming the extra when Ray is not installed
    from fastscore.run.executors.ray import RayExecutor
    return RayExecutor(problems, settings, address=address, workers=workers)


EXECUTORS: dict[str, ExecutorFactory] = {"local": _local, "ray": _ray}
"""Executor names -> factories (``auto`` is not one: the run chooses)."""


def executor_names() -> tuple[str, ...]:
    """Every name ``score_sweep`` accepts: ``auto`` and the registered executors."""
    return ("auto", *EXECUTORS)


def register_executor(name: str, factory: ExecutorFactory) -> None:
    """Add an executor under a new name."""
    if name in executor_names():
        raise ValueError(f"executor name {name!r} is taken")
    EXECUTORS[name] = factory


def make_executor(name: str, problems, settings, *, address: str | None = None,
                  workers: int | None = None) -> Executor:
    """The started executor called ``name`` (not ``auto``)."""
    factory = EXECUTORS.get(name)
    if factory is None:
        raise ValueError(f"unknown executor {name!r}; expected one of {', '.join(executor_names())}")
    return factory(problems, settings, address=address, workers=workers)
