"""Built-in entries of a registry that live in other modules (MechBench's problem
formats, its run-folder reader): each such module registers its
entries when imported, and a registry imports them once, on its first read, so the
registry's own module never imports them (no import circle, no cost until used)."""
from __future__ import annotations

import importlib

__all__ = ["Builtins"]


class Builtins:
    """The modules that register a registry's built-in entries."""

    def __init__(self, *modules: str):
        self._modules, self._loaded = modules, False

    def load(self) -> None:
        """Import the modules (once; later calls return at once)."""
        if not self._loaded:
            self._loaded = True
            for module in self._modules:
                importlib.import_module(module)
