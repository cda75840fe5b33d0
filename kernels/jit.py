"""The one Numba decorator of the kernels: compiled once, cached on disk, IEEE semantics.

``kernel`` is ``numba.njit(cache=True, error_model="numpy")``: floating-point domain
errors give NaN/inf instead of Python exceptions (``1/0`` -> inf, ``log(-1)`` -> NaN).
The compiled code is cached next to the source (``kernels/__pycache__``), or under
``NUMBA_CACHE_DIR`` when set, or in the user-wide cache directory when the source tree
is read-only; when no location is writable, Numba raises at decoration time and we fall
back to an uncached kernel (compiled once per process) with a warning.

Numba's cache is keyed on the source file of the decorated function only: a kernel
calling kernels of another module is not invalidated when that module changes.
Delete ``kernels/__pycache__/*.nbi`` after editing such a dependency.
"""

import warnings

import numba


def kernel(function):
    """Decorate ``function`` as a cached, IEEE-semantics, single-threaded Numba kernel."""
    try:
        return numba.njit(cache=True, error_model="numpy")(function)
    except RuntimeError as error:  # "cannot cache function ...: no locator available"
        warnings.warn(f"Numba cache unavailable, compiling in memory: {error}", stacklevel=2)
        return numba.njit(error_model="numpy")(function)
