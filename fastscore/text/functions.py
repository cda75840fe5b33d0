"""The grammar's vocabulary: the whitelisted functions a submission may call (name ->
SymEngine callable and argument counts) and the names that mean a constant when not
declared (``pi``, ``π``).  A new function also needs its instruction in the kernels
(``kernels/opcodes.py``, ``kernels/evaluate.py``, ``kernels/bounds.py``), its place in
the tape compiler (``fastscore/tapes/compile.py``) and in ``fastscore/algebra/precision.py``, and may
have an inverse in ``fastscore/solve/closed_forms.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import symengine as se

__all__ = ["CONSTANTS", "FUNCTIONS", "FUNCTION_TABLE"]

_LOG_10 = se.log(se.Integer(10))
_LOG_2 = se.log(se.Integer(2))
_ONE_THIRD = se.Rational(1, 3)


def _cbrt(x):
    """Principal cube root, ``x**(1/3)``."""
    return se.Pow(x, _ONE_THIRD)


def _log(x, base=None):
    """Natural logarithm, or ``log(x)/log(base)``.

    (``se.log(x, base)`` compares ``base == None``, which imports SymPy.)
    """
    return se.log(x) if base is None else se.log(x) / se.log(base)


def _log10(x):
    return se.log(x) / _LOG_10


def _log2(x):
    return se.log(x) / _LOG_2


def _square(x):
    return x**2


def _cube(x):
    return x**3


def _inv(x):
    return 1 / x


def _neg(x):
    return -x


def _relu(x):
    """``max(x, 0)``, written ``(x + |x|)/2``."""
    return (x + se.Abs(x)) / 2


def _log1p(x):
    return se.log(1 + x)


FUNCTION_TABLE = {
    "sqrt": (se.sqrt, (1,)),
    "cbrt": (_cbrt, (1,)),
    "exp": (se.exp, (1,)),
    "log": (_log, (1, 2)),
    "ln": (se.log, (1,)),
    "log10": (_log10, (1,)),
    "log2": (_log2, (1,)),
    "sin": (se.sin, (1,)),
    "cos": (se.cos, (1,)),
    "tan": (se.tan, (1,)),
    "asin": (se.asin, (1,)),
    "arcsin": (se.asin, (1,)),
    "acos": (se.acos, (1,)),
    "arccos": (se.acos, (1,)),
    "atan": (se.atan, (1,)),
    "arctan": (se.atan, (1,)),
    "atan2": (se.atan2, (2,)),  # atan2(y, x)
    "sinh": (se.sinh, (1,)),
    "cosh": (se.cosh, (1,)),
    "tanh": (se.tanh, (1,)),
    "asinh": (se.asinh, (1,)),
    "acosh": (se.acosh, (1,)),
    "atanh": (se.atanh, (1,)),
    "abs": (se.Abs, (1,)),
    "Abs": (se.Abs, (1,)),
    "sign": (se.sign, (1,)),  # -1, 0 or 1
    # PySR's operators with an exact meaning here (its equation files use them)
    "square": (_square, (1,)),
    "cube": (_cube, (1,)),
    "inv": (_inv, (1,)),
    "neg": (_neg, (1,)),
    "relu": (_relu, (1,)),
    "log1p": (_log1p, (1,)),
}
"""Function name -> (SymEngine callable, allowed argument counts)."""

#: The whitelist: function name -> SymEngine callable.  ``log`` takes 1 argument
#: (natural log) or 2 (``log(x, base)``), ``atan2`` takes 2 (``atan2(y, x)``), every
#: other function takes 1.  ``cbrt`` is the principal cube root ``x**(1/3)`` (undefined
#: below 0, unlike PySR's real cube root).  ``square``, ``cube``, ``inv``, ``neg``,
#: ``relu`` and ``log1p`` are PySR's operators: ``x**2``, ``x**3``, ``1/x``, ``-x``,
#: ``(x + abs(x))/2``, ``log(1 + x)``; ``sign`` is -1, 0 or 1.
FUNCTIONS: Mapping[str, object] = MappingProxyType({name: f for name, (f, _) in FUNCTION_TABLE.items()})

CONSTANTS = {"pi": se.pi, "π": se.pi}
"""The meaning of these names when they are not declared."""
