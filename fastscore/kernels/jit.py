"""The one Numba decorator of the kernels: compiled once, cached on disk, IEEE semantics.

``kernel`` is ``numba.njit(cache=True, error_model="numpy")``: floating-point domain
errors give NaN/inf instead of Python exceptions (``1/0`` -> inf, ``log(-1)`` -> NaN).
The compiled code is cached next to the source (``kernels/__pycache__``), or under
``NUMBA_CACHE_DIR`` when set, or in the user-wide cache directory when the source tree
is read-only; when no location is writable, Numba raises at decoration time and we fall
back to an uncached kernel (compiled once per process) with a warning.

Numba keys a cached kernel on its own source file only, but kernels call kernels of
other modules (``roots`` runs ``evaluate.run_tape``).  So on import, a change to any
source file of this package drops the package's in-tree cache (``drop_stale_cache``).
A cache under ``NUMBA_CACHE_DIR`` is the user's to clear.
"""

import hashlib
import importlib
import warnings
from pathlib import Path

import numba

PACKAGE = Path(__file__).parent
STAMP = "kernels-sources.sha256"


def drop_stale_cache(package: Path = PACKAGE) -> None:
    """Delete ``package/__pycache__/*.nbi|*.nbc`` unless they were compiled from the
    current sources (a digest of all ``package/*.py`` kept beside them)."""
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sorted(package.glob("*.py")))).hexdigest()
    cache = package / "__pycache__"
    stamp = cache / STAMP
    try:
        if stamp.read_text() == digest:
            return
    except OSError:
        pass
    try:
        for stale in [*cache.glob("*.nbi"), *cache.glob("*.nbc")]:
            stale.unlink(missing_ok=True)
        cache.mkdir(exist_ok=True)
        stamp.write_text(digest)
    except OSError:
        pass  # read-only tree: Numba caches elsewhere (see the module docstring)


KERNELS: list = []
"""Every kernel made by ``kernel``, in the order their modules were imported."""


def kernel(function):
    """Decorate ``function`` as a cached, IEEE-semantics, single-threaded Numba kernel."""
    try:
        compiled = numba.njit(cache=True, error_model="numpy")(function)
    except RuntimeError as error:  # "cannot cache function ...: no locator available"
        warnings.warn(f"Numba cache unavailable, compiling in memory: {error}", stacklevel=2)
        compiled = numba.njit(error_model="numpy")(function)
    KERNELS.append(compiled)
    return compiled


ON_FIRST_USE = frozenset({"motion", "pairs"})
"""Kernel modules that one benchmark alone uses (the trajectories' integrators): compiled
on that benchmark's first use, not by ``fastscore.tapes.warm.warm_up``, so not part of the
scorer's cold start that ``cache_is_cold`` reports."""


def cache_is_cold() -> bool:
    """Whether some imported kernel has no usable compiled code in Numba's on-disk cache
    (none written yet, or written by other sources or another Numba), so that its first
    call compiles (seconds) rather than loads (milliseconds).  Reads only the cache's
    index files (every module of the package is imported first, so that all kernels
    are known); a kernel already compiled in this process counts as warm."""
    for module in sorted(PACKAGE.glob("*.py")):
        if module.stem != "__init__" and module.stem not in ON_FIRST_USE:
            importlib.import_module(f"{__package__}.{module.stem}")
    for dispatcher in KERNELS:
        if dispatcher.signatures or dispatcher.py_func.__module__.rsplit(".", 1)[-1] in ON_FIRST_USE:
            continue
        index = getattr(getattr(dispatcher, "_cache", None), "_cache_file", None)
        if index is None:  # an uncached kernel: compiled in every process
            return True
        try:
            if not index._load_index():  # {} when missing, stale or from another Numba
                return True
        except Exception:  # noqa: BLE001 - a private Numba API: never fail a run over a notice
            return False
    return False


drop_stale_cache()
