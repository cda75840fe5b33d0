"""The pairwise part of a law of motion as one register program (``pair_program``) and
its interpreter (``run_scalars``, ``run_rows``), used by ``fastscore.kernels.motion``.

The pairwise tapes of a law (one per component) are read together, once per
integration, into one program over values:
- a value read from a row that is the same for all of particle ``i``'s pairs (its own
  ``x .. t`` and the parameters), a constant, and an instruction whose operands are all
  such values, is a *scalar*: computed once per particle (``run_scalars``, on registers
  ``S`` of one column), not once per pair;
- the other values are *rows* over a block of pairs (``run_rows``, on registers ``W``):
  the pair rows ``dx, dy, dz, r, q_j, m_j`` (``W[0:6]``, filled by ``motion``) are read in
  place, never copied onto a stack; an instruction reads rows and scalars (``mode``) and
  writes a register that is free again after the last read of its value;
- an instruction met twice with the same operands (in one component or in several: the
  ``C*q`` and ``m*r**3`` of a Coulomb law's ``x`` and ``y``) is one value, computed once.
Each value is made by the same IEEE operation on the same operands in the same order
as in its tape (``x - c`` stays ``x - c``; fused tape instructions are unfused into that
operation), so every result is bit for bit the tape's: only where and how often it is
computed changes.  Scalars are computed by the very loops of the rows, on one column (a
library function such as ``exp`` is the same call in a loop as alone: Numba vectorises
no such loop with another library unless SVML is installed, which it is not here;
``tests/kernels/test_pairs.py`` checks scalars of every kind against ``evaluate``).

A program is an int64 array of instructions ``(code, mode, dst, a, b, n)``: ``code`` an
opcode of ``opcodes`` (``PUSH_CONST``: fill row ``dst`` with scalar ``a``; ``ADD ..
ATAN2``: binary; ``POWI .. SIGN``: unary of ``a``, ``n`` the power of ``POWI``), ``mode``
whether ``a`` and ``b`` are rows or scalars (``RR``, ``RS``, ``SR``).  The last row of ``W`` and of
``S`` is scratch (``POWI``).
"""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

import numpy as np

from . import opcodes as op
from .evaluate import _powi, _unary
from .jit import kernel

FIRST_PAIR, N_PAIR = 9, 6
"""The pair rows of the law's variables (``motion.MOTION_VARIABLES[9:15]``: dx, dy, dz,
r, q_j, m_j): ``W[0:6]``."""
RR, RS, SR = 0, 1, 2
"""Operand modes: row and row, row and scalar, scalar and row."""

_OF_VARIABLE = {op.ADD_V: (op.ADD, False), op.SUB_V: (op.SUB, False), op.MUL_V: (op.MUL, False),
                op.DIV_V: (op.DIV, False), op.RSUB_V: (op.SUB, True), op.RDIV_V: (op.DIV, True)}
_OF_CONSTANT = {op.ADD_C: (op.ADD, False), op.MUL_C: (op.MUL, False), op.DIV_C: (op.DIV, False),
                op.POW_C: (op.POW, False), op.RSUB_C: (op.SUB, True), op.RDIV_C: (op.DIV, True)}
"""Fused instruction -> (binary opcode, whether the fused operand is the left one)."""


class PairProgram(NamedTuple):
    """``loads``: (scalar register, row of ``X``) loaded once per particle; ``scalars``/``rows``:
    the instructions run once per particle / per block of pairs; ``constants``: the
    initial scalar registers (scratch and loaded ones 0);
    ``results``: per tape, the row of ``W`` holding its values; ``n_rows``: rows of ``W``."""

    loads: np.ndarray
    scalars: np.ndarray
    rows: np.ndarray
    constants: np.ndarray
    results: np.ndarray
    n_rows: int


def pair_program(ops: np.ndarray, args: np.ndarray, starts: np.ndarray, tapes) -> PairProgram:
    """The program of tapes ``tapes`` (indices into the batch ``ops, args, starts``)."""
    keys: list[tuple] = []  # value -> ("x", row) | ("c", bits, value) | (code, n, a, b)
    ids: dict[tuple, int] = {}
    scalar: list[bool] = []

    def value(key: tuple, is_scalar: bool) -> int:
        found = ids.get(key)
        if found is None:
            found = ids[key] = len(keys)
            keys.append(key)
            scalar.append(is_scalar)
        return found

    def variable(row: int) -> int:
        return value(("x", row), not FIRST_PAIR <= row < FIRST_PAIR + N_PAIR)

    def constant(number: float) -> int:
        return value(("c", struct.pack("<d", number), number), True)

    def apply(code: int, a: int, b: int = -1, n: int = 0) -> int:
        return value((code, n, a, b), scalar[a] and (b < 0 or scalar[b]))

    results = []
    for t in tapes:
        stack: list[int] = []
        slots: dict[int, int] = {}
        for code, arg in zip(ops[starts[t]:starts[t + 1]].tolist(), args[starts[t]:starts[t + 1]].tolist()):
            if code == op.PUSH_VAR:
                stack.append(variable(int(arg)))
            elif code == op.PUSH_CONST:
                stack.append(constant(arg))
            elif code <= op.ATAN2:
                b = stack.pop()
                stack.append(apply(code, stack.pop(), b))
            elif code <= op.RDIV_C:
                binary, left = _OF_VARIABLE[code] if code <= op.RDIV_V else _OF_CONSTANT[code]
                other = variable(int(arg)) if code <= op.RDIV_V else constant(arg)
                top = stack.pop()
                stack.append(apply(binary, other, top) if left else apply(binary, top, other))
            elif code <= op.SIGN:
                stack.append(apply(code, stack.pop(), n=int(arg) if code == op.POWI else 0))
            elif code == op.STORE:
                slots[int(arg)] = stack[-1]
            else:
                stack.append(slots[int(arg)])
        results.append(stack[-1])
    return _allocate(keys, scalar, results)


def _allocate(keys: list[tuple], scalar: list[bool], results: list[int]) -> PairProgram:
    """Registers for the values the results need, in the order the values were met."""
    needed = set()
    todo = list(results)
    while todo:
        v = todo.pop()
        if v not in needed:
            needed.add(v)
            if not isinstance(keys[v][0], str):
                todo += [o for o in keys[v][2:] if o >= 0]
    order = sorted(needed)
    S: dict[int, int] = {}  # scalar value -> its register
    constants, loads, scalars, rows = [], [], [], []
    for v in order:
        if scalar[v]:
            S[v] = len(constants)
            key = keys[v]
            constants.append(key[2] if key[0] == "c" else 0.0)
            if key[0] == "x":
                loads.append((S[v], key[1]))
            elif key[0] != "c":
                code, n, a, b = key
                scalars.append((code, RR, S[v], S[a], S[b] if b >= 0 else -1, n))
    last = {}  # row value -> the last row value reading it (results: read to the end)
    for v in order:
        if not scalar[v] and not isinstance(keys[v][0], str):
            for o in keys[v][2:]:
                if o >= 0 and not scalar[o]:
                    last[o] = v
    for v in results:
        last[v] = len(keys)
    W: dict[int, int] = {}  # row value -> its register
    free: list[int] = []
    n_rows = N_PAIR
    for v in order:
        key = keys[v]
        if scalar[v]:
            continue
        if key[0] == "x":
            W[v] = key[1] - FIRST_PAIR
            continue
        code, n, a, b = key
        done = [W[o] for o in {a, b} if o >= 0 and not scalar[o] and keys[o][0] != "x" and last[o] == v]
        if b < 0:  # a unary instruction runs in place on a register read for the last time
            free += done
        if free:
            W[v] = free.pop()
        else:
            W[v], n_rows = n_rows, n_rows + 1
        if b >= 0:  # a binary one writes another register: rows that do not overlap vectorise
            free += done
        mode = SR if scalar[a] else RS if b >= 0 and scalar[b] else RR
        rows.append((code, mode, W[v], S[a] if scalar[a] else W[a], -1 if b < 0 else S[b] if scalar[b] else W[b], n))
    out = []
    for v in results:
        if scalar[v]:  # the same value for every pair
            if v not in W:
                W[v], n_rows = n_rows, n_rows + 1
                rows.append((op.PUSH_CONST, RR, W[v], S[v], -1, 0))
        out.append(W[v])
    constants.append(0.0)  # scratch
    return PairProgram(np.array(loads, dtype=np.int64).reshape(-1, 2), np.array(scalars, dtype=np.int64).reshape(-1, 6),
                       np.array(rows, dtype=np.int64).reshape(-1, 6),
                       np.array(constants, dtype=np.float64).reshape(-1, 1), np.array(out, dtype=np.int64), n_rows + 1)


@kernel
def run_scalars(loads, program, S, X, i):
    """Load particle ``i``'s rows of ``X`` into ``S`` (one column), then run the scalar
    instructions on it."""
    for k in range(loads.shape[0]):
        S[loads[k, 0], 0] = X[loads[k, 1], i]
    run_rows(program, S, S, 1)


@kernel
def run_rows(program, S, W, nb):
    """Run the instructions of ``program`` on the first ``nb`` columns of ``W``, scalars
    ``S[:, 0]``.  One function, whose loops index ``W`` itself: a call, or a view per
    operand, would cost more than a short row's arithmetic."""
    for k in range(program.shape[0]):
        code, mode, dst, a, b, n = program[k, 0], program[k, 1], program[k, 2], program[k, 3], program[k, 4], \
            program[k, 5]
        if code == op.PUSH_CONST:
            s = S[a, 0]
            for i in range(nb):
                W[dst, i] = s
        elif code <= op.ATAN2 and mode == RR:
            if code == op.ADD:
                for i in range(nb):
                    W[dst, i] = W[a, i] + W[b, i]
            elif code == op.SUB:
                for i in range(nb):
                    W[dst, i] = W[a, i] - W[b, i]
            elif code == op.MUL:
                for i in range(nb):
                    W[dst, i] = W[a, i] * W[b, i]
            elif code == op.DIV:
                for i in range(nb):
                    W[dst, i] = W[a, i] / W[b, i]
            elif code == op.POW:
                for i in range(nb):
                    W[dst, i] = W[a, i] ** W[b, i]
            else:
                for i in range(nb):
                    W[dst, i] = math.atan2(W[a, i], W[b, i])
        elif code <= op.ATAN2 and mode == RS:
            s = S[b, 0]
            if code == op.ADD:
                for i in range(nb):
                    W[dst, i] = W[a, i] + s
            elif code == op.SUB:
                for i in range(nb):
                    W[dst, i] = W[a, i] - s
            elif code == op.MUL:
                for i in range(nb):
                    W[dst, i] = W[a, i] * s
            elif code == op.DIV:
                for i in range(nb):
                    W[dst, i] = W[a, i] / s
            elif code == op.POW:
                for i in range(nb):
                    W[dst, i] = W[a, i] ** s
            else:
                for i in range(nb):
                    W[dst, i] = math.atan2(W[a, i], s)
        elif code <= op.ATAN2:
            s = S[a, 0]
            if code == op.ADD:
                for i in range(nb):
                    W[dst, i] = s + W[b, i]
            elif code == op.SUB:
                for i in range(nb):
                    W[dst, i] = s - W[b, i]
            elif code == op.MUL:
                for i in range(nb):
                    W[dst, i] = s * W[b, i]
            elif code == op.DIV:
                for i in range(nb):
                    W[dst, i] = s / W[b, i]
            elif code == op.POW:
                for i in range(nb):
                    W[dst, i] = s ** W[b, i]
            else:
                for i in range(nb):
                    W[dst, i] = math.atan2(s, W[b, i])
        elif code == op.NEG:
            for i in range(nb):
                W[dst, i] = -W[a, i]
        elif code == op.SQRT:
            for i in range(nb):
                W[dst, i] = math.sqrt(W[a, i])
        elif code == op.POWI and (n == 2 or n == 3):
            if n == 2:
                for i in range(nb):
                    W[dst, i] = W[a, i] * W[a, i]
            else:
                for i in range(nb):
                    W[dst, i] = W[a, i] * W[a, i] * W[a, i]
        else:  # the other unary instructions: in place, by ``evaluate``'s own loops
            if dst != a:
                for i in range(nb):
                    W[dst, i] = W[a, i]
            if code == op.POWI:
                _powi(W[dst], W[W.shape[0] - 1], n, nb)
            else:
                _unary(code, 0.0, W, dst, nb)
