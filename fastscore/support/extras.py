"""The optional parts of fastscore and the packages each needs (the distribution's
extras: ``pip install 'fastscore-bench[serve]'``), and the one-line error a command
gives when its extra is not installed.  Scoring, validation and data need none."""
from __future__ import annotations

import importlib.util

DISTRIBUTION = "fastscore-bench"
"""The name fastscore is installed under (``pip install fastscore-bench``); it is
imported as ``fastscore``."""

EXTRAS: dict[str, tuple[str, ...]] = {
    "ray": ("ray",),  # --executor ray (and auto on a large sweep or with --address)
    "serve": ("aiohttp",),  # fastscore serve
    "report": ("matplotlib",),  # fastscore report, fastscore graph (SVG/PNG)
}
"""Extra name -> the modules it installs (as imported)."""


class MissingExtra(ImportError):
    """A command needs an extra that is not installed."""


def message(extra: str) -> str:
    return f"needs the '{extra}' extra: pip install '{DISTRIBUTION}[{extra}]'"


def has_extra(extra: str) -> bool:
    """Whether every module of ``extra`` can be imported (found, not imported)."""
    try:
        return all(importlib.util.find_spec(module) is not None for module in EXTRAS[extra])
    except (ImportError, ValueError):
        return False


def require(extra: str) -> None:
    """Raise ``MissingExtra`` (one line naming the extra) unless ``extra`` is installed."""
    if not has_extra(extra):
        raise MissingExtra(message(extra))


def extra_of(error: ImportError) -> str | None:
    """The extra whose missing module raised ``error``, if any."""
    top = (getattr(error, "name", None) or "").split(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)
