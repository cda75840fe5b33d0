"""Tapes evaluated with a running error bound, at a few chosen points.

``evaluate_bounded(tape, X, columns)`` returns, at each chosen point, the float64 value
of the tape (the same operations in the same order as ``evaluate``) and a bound on its
absolute error against the exact value of the formula at that point (inputs are the
exact float64 numbers of ``X``).  The equivalence check uses it to tell a real
disagreement from a float64 artefact without a high-precision re-evaluation: when two
values differ by far more than their bounds, the point is a proven counterexample.

The bound is a running error analysis (Higham, *Accuracy and Stability of Numerical
Algorithms*, ch. 3): every instruction adds its own rounding (``u = 2**-53`` of the
result for + - * /, ``LIBM_ULPS`` units for library functions, ``u`` of every constant)
to the propagated error of its operands, plus ``ETA`` for a result that may underflow
(a product that rounds to 0.0 or to a subnormal number has lost its relative accuracy;
sums of floats that are subnormal or 0.0 are exact).  Sums, products and quotients propagate
exact bounds; a function ``f`` propagates ``|f'(a)| * err(a)``, which is valid only
while errors are tiny, so a function whose operand or result is off by more than
``LINEAR_LIMIT`` (relative) gets an infinite bound ("unknown").  Non-finite values
and domain edges (``sqrt`` of an uncertain 0, ``sign`` of an uncertain 0, ``atan2`` on
its branch cut) also give infinite bounds.

A NaN value with a bound of 0.0 is certain: the formula has no real value at that
point, because a function met an operand certainly outside its domain (``sqrt``,
``log``, ``cbrt`` or a fractional power of a value below minus its bound; ``asin``,
``acos``, ``atanh`` beyond 1 by more than the bound; ``acosh`` below 1), or a folded
constant is not real, and nothing undefined becomes defined again (the high-precision
evaluators treat an undefined part the same way).  Any other NaN gets ``inf``.
"""
from __future__ import annotations

import math

import numpy as np

from . import opcodes as op
from .jit import kernel
from .tape import Tape

U = 2.0**-53
"""Unit roundoff of float64."""

ETA = 2.0**-1074
"""Absolute rounding error of a result that underflows (the smallest subnormal)."""

LIBM_ULPS = 4.0
"""Error of a library function (exp, log, pow, sin, ...) in units of roundoff; glibc's
are below 1 ulp, this leaves a margin."""

LINEAR_LIMIT = 1e-6
"""Largest relative error of an operand or result of a function for which the
first-order propagation is trusted."""

INF = math.inf


def evaluate_bounded(tape: Tape, X: np.ndarray, columns: np.ndarray, *,
                     constant_rtol: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Values of ``tape`` at the points ``X[:, columns]`` and bounds on their absolute
    errors (``inf`` where no bound is known; 0.0 with a NaN value where the formula is
    certainly undefined).

    ``constant_rtol`` > ``U``: every additive or multiplicative constant of the tape is
    taken as known only within that relative tolerance (exponents keep ``U``), so the
    bound also covers every formula whose constants differ from these by at most
    ``constant_rtol``: the *tolerance band* of the value (``fastscore.algebra.equivalence``).
    Where terms cancel, the band is ``constant_rtol`` times the size of the cancelling
    terms, carried through what follows (a square of a cancelled sum: its square)."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    columns = np.ascontiguousarray(columns, dtype=np.int64)
    values, errors = np.empty(columns.size), np.empty(columns.size)
    _bounded(tape.ops.astype(np.int32, copy=False), tape.args.astype(np.float64, copy=False),
             tape.depth, X, columns, values, errors, max(U, float(constant_rtol)))
    return values, errors


@kernel
def _bounded(ops, args, depth, X, columns, values, errors, uc):
    v = np.empty(depth + 1)
    e = np.empty(depth + 1)
    undefined = np.empty(depth + 1, dtype=np.bool_)  # certainly no real value (see module doc)
    for j in range(columns.size):
        p = columns[j]
        sp = -1
        for k in range(ops.size):
            code = ops[k]
            a = args[k]
            if code == op.PUSH_VAR:
                sp += 1
                v[sp] = X[int(a), p]
                e[sp] = 0.0
                undefined[sp] = False
            elif code == op.PUSH_CONST:
                sp += 1
                v[sp] = a
                e[sp] = abs(a) * uc + ETA  # a folded constant may have underflowed
                undefined[sp] = math.isnan(a)  # a constant that is not real
            elif code <= op.ATAN2:
                sp -= 1
                undefined[sp] = undefined[sp] or undefined[sp + 1]
                v[sp], e[sp] = _binary(code, v[sp], e[sp], v[sp + 1], e[sp + 1])
            elif code <= op.RDIV_V:
                x = X[int(a), p]
                if code == op.ADD_V:
                    v[sp], e[sp] = _binary(op.ADD, v[sp], e[sp], x, 0.0)
                elif code == op.SUB_V:
                    v[sp], e[sp] = _binary(op.SUB, v[sp], e[sp], x, 0.0)
                elif code == op.MUL_V:
                    v[sp], e[sp] = _binary(op.MUL, v[sp], e[sp], x, 0.0)
                elif code == op.DIV_V:
                    v[sp], e[sp] = _binary(op.DIV, v[sp], e[sp], x, 0.0)
                elif code == op.RSUB_V:
                    v[sp], e[sp] = _binary(op.SUB, x, 0.0, v[sp], e[sp])
                else:
                    v[sp], e[sp] = _binary(op.DIV, x, 0.0, v[sp], e[sp])
            elif code <= op.RDIV_C:
                c, ec = a, abs(a) * (U if code == op.POW_C else uc) + ETA
                if math.isnan(c):  # a constant that is not real
                    undefined[sp] = True
                if code == op.ADD_C:
                    v[sp], e[sp] = _binary(op.ADD, v[sp], e[sp], c, ec)
                elif code == op.MUL_C:
                    v[sp], e[sp] = _binary(op.MUL, v[sp], e[sp], c, ec)
                elif code == op.DIV_C:
                    v[sp], e[sp] = _binary(op.DIV, v[sp], e[sp], c, ec)
                elif code == op.POW_C:
                    if c != math.floor(c) and _below(v[sp], e[sp], 0.0):  # fractional power of a negative
                        undefined[sp] = True
                    v[sp], e[sp] = _binary(op.POW, v[sp], e[sp], c, ec)
                elif code == op.RSUB_C:
                    v[sp], e[sp] = _binary(op.SUB, c, ec, v[sp], e[sp])
                else:
                    v[sp], e[sp] = _binary(op.DIV, c, ec, v[sp], e[sp])
            elif code == op.POWI:
                v[sp], e[sp] = _powi(v[sp], e[sp], int(a))
            elif code == op.STORE:  # kept rows: slot s is the row ``depth - s``
                s = depth - int(a)
                v[s], e[s], undefined[s] = v[sp], e[sp], undefined[sp]
            elif code == op.LOAD:
                s = depth - int(a)
                sp += 1
                v[sp], e[sp], undefined[sp] = v[s], e[s], undefined[s]
            else:
                if _outside_domain(code, v[sp], e[sp]):
                    undefined[sp] = True
                v[sp], e[sp] = _unary(code, v[sp], e[sp])
        values[j] = v[0]
        if math.isnan(v[0]) and undefined[0]:
            errors[j] = 0.0
        else:
            errors[j] = e[0] if math.isfinite(v[0]) and math.isfinite(e[0]) else INF


@kernel
def _below(a, ea, limit):
    """Whether every value within ``ea`` of ``a`` is below ``limit`` (0 or 1), allowing
    for the rounding of ``limit - a``."""
    if not (math.isfinite(a) and math.isfinite(ea)):
        return False
    if limit == 0.0:
        return a < 0.0 and -a > ea
    return limit - a > 2.0 * ea + 4.0 * U * abs(a)


@kernel
def _outside_domain(code, a, ea):
    """Whether a one-argument function certainly has no real value at ``a`` (known
    within ``ea``)."""
    if code == op.SQRT or code == op.LOG or code == op.CBRT:
        return _below(a, ea, 0.0)
    if code == op.ASIN or code == op.ACOS or code == op.ATANH:
        return math.isfinite(a) and math.isfinite(ea) and abs(a) - 1.0 > 2.0 * ea + 4.0 * U * abs(a)
    if code == op.ACOSH:
        return _below(a, ea, 1.0)
    return False


@kernel
def _binary(code, a, ea, b, eb):
    """``a code b`` and its error bound, from operands known within ``ea``/``eb``."""
    if code == op.ADD:
        r = a + b
        return r, ea + eb + abs(r) * U
    if code == op.SUB:
        r = a - b
        return r, ea + eb + abs(r) * U
    if code == op.MUL:
        r = a * b
        return r, abs(a) * eb + abs(b) * ea + ea * eb + abs(r) * U + ETA
    if code == op.DIV:
        r = a / b
        if abs(b) <= eb:
            return r, INF
        return r, (ea + abs(r) * eb) / (abs(b) - eb) + abs(r) * U + ETA  # no overflow in |b|**2
    if code == op.POW:
        r = a ** b
        if a == 0.0 or (a < 0.0 and eb > 0.0):
            return r, 0.0 if ea == 0.0 and eb == 0.0 and r == 0.0 else INF
        return _function(r, abs(r) * (abs(b) * ea / abs(a) + abs(math.log(abs(a))) * eb), a, ea)
    r = math.atan2(a, b)  # ATAN2(y=a, x=b)
    norm = a * a + b * b
    if norm == 0.0 or (b < 0.0 and abs(a) <= ea):  # the origin, or the branch cut
        return r, INF
    return _function(r, (abs(b) * ea + abs(a) * eb) / norm, a, ea)


@kernel
def _function(r, propagated, a, ea):
    """Result ``r`` of a library function of ``a`` (known within ``ea``) with first-order
    propagated error ``propagated``: adds the function's rounding; infinite when the
    first-order rule cannot be trusted (see module doc)."""
    if ea > LINEAR_LIMIT * abs(a) or propagated > LINEAR_LIMIT * abs(r):
        return r, INF
    return r, propagated + LIBM_ULPS * (U * abs(r) + ETA)


@kernel
def _powi(a, ea, n):
    """``a ** n`` for an integer n, computed as ``evaluate`` does, and its bound."""
    m = abs(n)
    if m == 2:
        r = a * a
    elif m == 3:
        r = a * a * a
    else:
        r = 1.0
        s = a
        while m:
            if m & 1:
                r = r * s
            m >>= 1
            if m:
                s = s * s
    if n < 0:
        r = 1.0 / r
    if a == 0.0 and ea == 0.0:
        return r, 0.0
    if a == 0.0 or ea > LINEAR_LIMIT * abs(a) or abs(n) * ea / abs(a) > LINEAR_LIMIT:
        if n < 0 or not math.isfinite(ea):
            return r, INF
        # an operand known only roughly (near 0): |x**n - a**n| <= (|a| + ea)**n - |a|**n
        # for every |x - a| <= ea, exactly; plus the rounding of r
        high = (abs(a) + ea) ** n
        return r, high - abs(a) ** n + (4.0 * n + 4.0) * (U * high + ETA)
    relative = abs(n) * ea / abs(a)
    return r, abs(r) * (relative + (2.0 * abs(n) + 2.0) * U) + (2.0 * abs(n) + 2.0) * ETA


@kernel
def _unary(code, a, ea):
    """One-argument instruction on ``a`` (known within ``ea``) and its bound."""
    if code == op.NEG:
        return -a, ea
    if code == op.ABS:
        return abs(a), ea
    if code == op.SIGN:
        r = np.sign(a)
        return r, 0.0 if abs(a) > ea or (a == 0.0 and ea == 0.0) else INF
    if code == op.SQRT:
        r = math.sqrt(a) if a >= 0.0 else math.nan
        if a == 0.0:
            return r, 0.0 if ea == 0.0 else INF
        return _function(r, ea / (2.0 * r), a, ea)
    if code == op.CBRT:
        r = np.cbrt(a) if a >= 0.0 else math.nan
        if a == 0.0:
            return r, 0.0 if ea == 0.0 else INF
        return _function(r, r * ea / (3.0 * a), a, ea)
    if code == op.EXP:
        r = math.exp(a)
        return _function(r, r * ea, a, ea)
    if code == op.LOG:
        r = math.log(a)
        return _function(r, ea / a, a, ea)
    if code == op.SIN:
        return _function(math.sin(a), ea, a, ea)
    if code == op.COS:
        return _function(math.cos(a), ea, a, ea)
    if code == op.TAN:
        r = math.tan(a)
        return _function(r, (1.0 + r * r) * ea, a, ea)
    if code == op.ASIN or code == op.ACOS:
        r = math.asin(a) if code == op.ASIN else math.acos(a)
        slope = 1.0 - a * a
        if slope <= 0.0:
            return r, 0.0 if ea == 0.0 else INF
        return _function(r, ea / math.sqrt(slope), a, ea)
    if code == op.ATAN:
        return _function(math.atan(a), ea / (1.0 + a * a), a, ea)
    if code == op.SINH:
        return _function(math.sinh(a), math.cosh(a) * ea, a, ea)
    if code == op.COSH:
        return _function(math.cosh(a), abs(math.sinh(a)) * ea, a, ea)
    if code == op.TANH:
        r = math.tanh(a)
        return _function(r, (1.0 - r * r) * ea, a, ea)
    if code == op.ASINH:
        return _function(math.asinh(a), ea / math.sqrt(1.0 + a * a), a, ea)
    if code == op.ACOSH:
        r = math.acosh(a)
        if a <= 1.0:
            return r, 0.0 if ea == 0.0 else INF
        return _function(r, ea / math.sqrt(a * a - 1.0), a, ea)
    r = math.atanh(a)  # ATANH
    if abs(a) >= 1.0:
        return r, INF
    return _function(r, ea / (1.0 - a * a), a, ea)
