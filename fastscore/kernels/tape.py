"""Postfix tapes: a formula as the kernels see it (an opcode and a float64 argument per
instruction), and tapes concatenated for one kernel call (``pack``).

Tapes are arrays only; ``fastscore.tapes.compile`` makes them from SymEngine expressions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from . import opcodes as op


@dataclass(frozen=True, eq=False)
class Tape:
    """One formula in postfix form; ``depth`` is the working rows it needs beyond the
    first (the maximal stack depth, plus one kept row per shared subexpression, which
    live in the last rows), ``n_variables`` the rows ``X`` must have (largest variable
    index used + 1)."""

    ops: np.ndarray
    args: np.ndarray
    depth: int
    n_variables: int
    variables: tuple[str, ...] = ()

    def to_text(self) -> str:
        """One instruction per line, variables by name (for debugging)."""
        lines = []
        for code, arg in zip(self.ops.tolist(), self.args.tolist()):
            name = op.NAMES[code]
            if code in op.WITH_VARIABLE:
                i = int(arg)
                lines.append(f"{name} {self.variables[i] if i < len(self.variables) else i}")
            elif code in op.NO_ARGUMENT:
                lines.append(name)
            elif code == op.POWI or code in op.WITH_SLOT:
                lines.append(f"{name} {int(arg)}")
            else:
                lines.append(f"{name} {arg!r}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        body = "; ".join(self.to_text().splitlines())
        return f"Tape(depth={self.depth}: {body})"


@dataclass(frozen=True, eq=False)
class TapeBatch:
    """Concatenated tapes: tape ``t`` is ``ops[starts[t]:starts[t + 1]]`` (``len(starts)``
    is the number of tapes + 1); ``depth`` and ``n_variables`` are the largest of any tape."""

    ops: np.ndarray
    args: np.ndarray
    starts: np.ndarray
    depth: int
    n_variables: int

    def __len__(self) -> int:
        return len(self.starts) - 1


def pack(tapes: Sequence[Tape]) -> TapeBatch:
    """Concatenate tapes for one kernel call."""
    starts = np.zeros(len(tapes) + 1, dtype=np.int64)
    np.cumsum([len(t.ops) for t in tapes], out=starts[1:])
    if tapes:
        ops = np.concatenate([t.ops for t in tapes]).astype(np.int32, copy=False)
        args = np.concatenate([t.args for t in tapes]).astype(np.float64, copy=False)
    else:
        ops, args = np.zeros(0, dtype=np.int32), np.zeros(0)
    depth = max((t.depth for t in tapes), default=0)
    return TapeBatch(ops, args, starts, depth, max((t.n_variables for t in tapes), default=0))
