"""Batch evaluation of tapes: one shared Numba kernel, vectorised over points.

Points are processed in blocks of ``BLOCK``; for each block every tape runs over a
stack of row buffers (shape ``(depth + 1, BLOCK)``), each instruction a tight loop
over the block.  ``run_tape`` is a kernel of its own so that other kernels (e.g. root
finding) can evaluate a tape on a block of points.

Formulas submitted for one problem share costly parts (``sin(theta)``,
``exp(-E/(k*T))``): in a batch, the result of each costly instruction (``COSTLY``:
library functions and powers) on a block is kept with the instructions that made it,
up to ``SHARED`` per block, and an identical instruction sequence met again in any
tape of the batch copies the kept row instead of calling the function again.  The
match is exact (opcodes and argument bits), so values are bit for bit those of
evaluating each tape alone (how often it pays: ``bench/results/notes.md``).
A part that reads a kept row (LOAD) is never shared: its slot means another value in
another tape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from . import opcodes as op
from .jit import kernel
from .tape import Tape, TapeBatch, pack

BLOCK = 256
"""Points per block: a stack of a few rows of BLOCK doubles stays in L1 cache."""


def evaluate(tapes: Tape | TapeBatch | Sequence[Tape], X: np.ndarray) -> np.ndarray:
    """Evaluate tapes at the points ``X`` (float64, shape ``(n_variables, n_points)``).

    Returns ``(n_tapes, n_points)``, or ``(n_points,)`` for a single Tape.  IEEE
    semantics: domain errors give NaN, overflow gives ±inf; nothing raises."""
    single = isinstance(tapes, Tape)
    if single:  # a batch of one without copying the tape
        starts = np.array([0, len(tapes.ops)], dtype=np.int64)
        batch = TapeBatch(tapes.ops, tapes.args, starts, tapes.depth, tapes.n_variables)
    else:
        batch = tapes if isinstance(tapes, TapeBatch) else pack(tapes)
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must have shape (n_variables, n_points), got {X.shape}")
    if X.shape[0] < batch.n_variables:
        raise ValueError(f"tapes use {batch.n_variables} variables, X has {X.shape[0]} rows")
    out = np.empty((len(batch), X.shape[1]))
    if len(batch) and X.shape[1]:
        evaluate_batch(
            batch.ops.astype(np.int32, copy=False),
            batch.args.astype(np.float64, copy=False),
            batch.starts.astype(np.int64, copy=False),
            batch.depth,
            X,
            out,
        )
    return out[0] if single else out


SHARED = 128
"""Costly results kept per block of points for the other tapes of a batch."""

COSTLY = np.zeros(max(op.NAMES) + 1, dtype=np.bool_)
COSTLY[[op.POW, op.ATAN2, op.POW_C, op.CBRT, *range(op.EXP, op.ATANH + 1)]] = True
"""Opcodes whose results are shared within a batch (library calls; not SQRT, POWI)."""


@kernel
def evaluate_batch(ops, args, starts, depth, X, out):
    """``out[t, :] = tape t at X``; tape t is ``ops[starts[t]:starts[t + 1]]``."""
    n_points = X.shape[1]
    stack = np.empty((depth + 1, BLOCK))
    first = np.empty(depth + 1, dtype=np.int64)  # first instruction of the part in each stack row
    bits = args.view(np.int64)
    keys = np.empty(SHARED, dtype=np.uint64)
    spans = np.empty((SHARED, 2), dtype=np.int64)
    kept = np.empty((SHARED, BLOCK))
    for p0 in range(0, n_points, BLOCK):
        nb = min(BLOCK, n_points - p0)
        n_kept = 0
        for t in range(starts.size - 1):
            sp = -1
            loaded = -1  # the last LOAD of this tape so far
            for k in range(starts[t], starts[t + 1]):
                code = ops[k]
                if code <= op.PUSH_CONST:
                    first[sp + 1] = k
                elif COSTLY[code]:
                    start = first[sp - 1] if code <= op.ATAN2 else first[sp]
                    if start <= loaded:
                        sp = step(code, args[k], X, p0, nb, stack, sp)
                        continue
                    key = _span_key(ops, bits, start, k)
                    found = _find(ops, bits, start, k, key, keys, spans, n_kept)
                    if found >= 0:
                        if code <= op.ATAN2:
                            sp -= 1
                        row, shared = stack[sp], kept[found]
                        for i in range(nb):
                            row[i] = shared[i]
                        continue
                    sp = step(code, args[k], X, p0, nb, stack, sp)
                    if n_kept < SHARED:
                        keys[n_kept] = key
                        spans[n_kept, 0] = start
                        spans[n_kept, 1] = k
                        row, shared = stack[sp], kept[n_kept]
                        for i in range(nb):
                            shared[i] = row[i]
                        n_kept += 1
                    continue
                elif code == op.LOAD:
                    first[sp + 1] = k
                    loaded = k
                sp = step(code, args[k], X, p0, nb, stack, sp)
            row = out[t, p0 : p0 + nb]
            top = stack[0]
            for i in range(nb):
                row[i] = top[i]


@kernel
def _span_key(ops, bits, start, stop):
    """FNV-1a hash of instructions ``start..stop`` (inclusive)."""
    key = np.uint64(14695981039346656037)
    prime = np.uint64(1099511628211)
    for k in range(start, stop + 1):
        key = (key ^ np.uint64(ops[k])) * prime
        key = (key ^ np.uint64(bits[k])) * prime
    return key


@kernel
def _find(ops, bits, start, stop, key, keys, spans, n_kept):
    """Index of a kept result made by the same instructions as ``start..stop``, or -1."""
    length = stop - start
    for s in range(n_kept):
        if keys[s] != key or spans[s, 1] - spans[s, 0] != length:
            continue
        other = spans[s, 0]
        same = True
        for j in range(length + 1):
            if ops[start + j] != ops[other + j] or bits[start + j] != bits[other + j]:
                same = False
                break
        if same:
            return s
    return -1


@kernel
def run_tape(ops, args, start, stop, X, p0, nb, stack):
    """Run instructions ``start:stop`` on points ``p0:p0 + nb`` of X; the result is
    left in ``stack[0, :nb]``.  ``stack`` needs ``depth + 1`` rows of at least ``nb``
    (the extra row is POWI's scratch)."""
    sp = -1
    for k in range(start, stop):
        sp = step(ops[k], args[k], X, p0, nb, stack, sp)


@kernel
def step(code, a, X, p0, nb, stack, sp):
    """Run one instruction on stack rows ``stack[:sp + 1]``; returns the new top ``sp``."""
    if code == op.PUSH_VAR:
        sp += 1
        r = stack[sp]
        x = X[int(a), p0 : p0 + nb]
        for i in range(nb):
            r[i] = x[i]
    elif code == op.PUSH_CONST:
        sp += 1
        r = stack[sp]
        for i in range(nb):
            r[i] = a
    elif code <= op.ATAN2:  # binary on two stack rows
        sp -= 1
        r = stack[sp]
        s = stack[sp + 1]
        if code == op.ADD:
            for i in range(nb):
                r[i] = r[i] + s[i]
        elif code == op.SUB:
            for i in range(nb):
                r[i] = r[i] - s[i]
        elif code == op.MUL:
            for i in range(nb):
                r[i] = r[i] * s[i]
        elif code == op.DIV:
            for i in range(nb):
                r[i] = r[i] / s[i]
        elif code == op.POW:
            for i in range(nb):
                r[i] = r[i] ** s[i]
        else:
            for i in range(nb):
                r[i] = math.atan2(r[i], s[i])
    elif code <= op.RDIV_V:  # binary with a variable row
        r = stack[sp]
        x = X[int(a), p0 : p0 + nb]
        if code == op.ADD_V:
            for i in range(nb):
                r[i] = r[i] + x[i]
        elif code == op.SUB_V:
            for i in range(nb):
                r[i] = r[i] - x[i]
        elif code == op.MUL_V:
            for i in range(nb):
                r[i] = r[i] * x[i]
        elif code == op.DIV_V:
            for i in range(nb):
                r[i] = r[i] / x[i]
        elif code == op.RSUB_V:
            for i in range(nb):
                r[i] = x[i] - r[i]
        else:
            for i in range(nb):
                r[i] = x[i] / r[i]
    elif code <= op.RDIV_C:  # binary with a constant
        r = stack[sp]
        if code == op.ADD_C:
            for i in range(nb):
                r[i] = r[i] + a
        elif code == op.MUL_C:
            for i in range(nb):
                r[i] = r[i] * a
        elif code == op.DIV_C:
            for i in range(nb):
                r[i] = r[i] / a
        elif code == op.POW_C:
            for i in range(nb):
                r[i] = r[i] ** a
        elif code == op.RSUB_C:
            for i in range(nb):
                r[i] = a - r[i]
        else:
            for i in range(nb):
                r[i] = a / r[i]
    elif code <= op.SIGN:
        _unary(code, a, stack, sp, nb)
    else:  # kept rows: slot s is the row ``depth - s`` (see ``opcodes``)
        kept = stack[stack.shape[0] - 1 - int(a)]
        if code == op.STORE:
            r = stack[sp]
            for i in range(nb):
                kept[i] = r[i]
        else:
            sp += 1
            r = stack[sp]
            for i in range(nb):
                r[i] = kept[i]
    return sp


@kernel
def _unary(code, a, stack, sp, nb):
    """In-place unary instruction on ``stack[sp, :nb]``."""
    r = stack[sp]
    if code == op.POWI:
        _powi(r, stack[sp + 1], int(a), nb)
    elif code == op.NEG:
        for i in range(nb):
            r[i] = -r[i]
    elif code == op.SQRT:
        for i in range(nb):
            r[i] = math.sqrt(r[i])
    elif code == op.CBRT:
        for i in range(nb):
            r[i] = np.cbrt(r[i]) if r[i] >= 0.0 else np.nan
    elif code == op.EXP:
        for i in range(nb):
            r[i] = math.exp(r[i])
    elif code == op.LOG:
        for i in range(nb):
            r[i] = math.log(r[i])
    elif code == op.SIN:
        for i in range(nb):
            r[i] = math.sin(r[i])
    elif code == op.COS:
        for i in range(nb):
            r[i] = math.cos(r[i])
    elif code == op.TAN:
        for i in range(nb):
            r[i] = math.tan(r[i])
    elif code == op.ASIN:
        for i in range(nb):
            r[i] = math.asin(r[i])
    elif code == op.ACOS:
        for i in range(nb):
            r[i] = math.acos(r[i])
    elif code == op.ATAN:
        for i in range(nb):
            r[i] = math.atan(r[i])
    elif code == op.SINH:
        for i in range(nb):
            r[i] = math.sinh(r[i])
    elif code == op.COSH:
        for i in range(nb):
            r[i] = math.cosh(r[i])
    elif code == op.TANH:
        for i in range(nb):
            r[i] = math.tanh(r[i])
    elif code == op.ASINH:
        for i in range(nb):
            r[i] = math.asinh(r[i])
    elif code == op.ACOSH:
        for i in range(nb):
            r[i] = math.acosh(r[i])
    elif code == op.ATANH:
        for i in range(nb):
            r[i] = math.atanh(r[i])
    elif code == op.ABS:
        for i in range(nb):
            r[i] = abs(r[i])
    elif code == op.SIGN:
        for i in range(nb):
            r[i] = np.sign(r[i])


@kernel
def _powi(r, scratch, n, nb):
    """``r[:nb] **= n`` for an integer n by repeated squaring (``1 / r**|n|`` if n < 0)."""
    m = abs(n)
    if m == 2:
        for i in range(nb):
            r[i] = r[i] * r[i]
    elif m == 3:
        for i in range(nb):
            r[i] = r[i] * r[i] * r[i]
    else:
        for i in range(nb):
            scratch[i] = r[i]
            r[i] = 1.0
        while m:
            if m & 1:
                for i in range(nb):
                    r[i] = r[i] * scratch[i]
            m >>= 1
            if m:
                for i in range(nb):
                    scratch[i] = scratch[i] * scratch[i]
    if n < 0:
        for i in range(nb):
            r[i] = 1.0 / r[i]
