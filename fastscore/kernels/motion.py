"""Laws of motion integrated over time: fixed-step RK4 or velocity Verlet, the
accelerations given as tapes (``fastscore.benchmarks.trajectories`` compiles them).

Every tape reads the rows of ``MOTION_VARIABLES`` then the law's parameters:
- for particle ``i``'s own acceleration (tapes ``0 .. dim-1``, one per component):
  its position ``x, y, z``, velocity ``vx, vy, vz``, charge ``q``, mass ``m`` and the
  time ``t`` (the pair rows are 0);
- for the pairwise part (tapes ``dim .. 2*dim-1``), summed over the other particles
  ``j``: the same rows of ``i`` plus ``dx, dy, dz`` (``x_j - x_i``, ...), ``r`` (their
  distance), ``q_j`` and ``m_j``.
A component without a tape contributes 0 (``has``); ``reads`` marks the rows the
pairwise tapes read (the others are not filled per pair).  The pairs are evaluated a
block (``BLOCK``) at a time, every pairwise tape on each block, so the pair rows stay
in cache; each particle's pair terms are added in the order of the other particles.  The state at each time of
``times`` is written to ``out`` (particles, times, dim); the step is the interval to
the next time divided by ``substeps``.  Velocity Verlet reads the velocity of the
step's start in its second acceleration (exact when the law does not read velocities).
IEEE semantics: a law that blows up gives inf/NaN, nothing raises.
"""
from __future__ import annotations

import numpy as np

from .evaluate import BLOCK, run_tape
from .jit import kernel

MOTION_VARIABLES = ("x", "y", "z", "vx", "vy", "vz", "q", "m", "t", "dx", "dy", "dz", "r", "q_j", "m_j")
N_FIXED = len(MOTION_VARIABLES)


@kernel
def _run(ops, args, start, stop, X, n_points, stack, out, column):
    """``out[p, column] = tape at point p`` for the ``n_points`` columns of ``X``."""
    for p0 in range(0, n_points, BLOCK):
        nb = min(BLOCK, n_points - p0)
        run_tape(ops, args, start, stop, X, p0, nb, stack)
        for i in range(nb):
            out[p0 + i, column] = stack[0, i]


@kernel
def _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t, params, X, XP, stack, posT, acc):
    """``acc``: each particle's own tapes, then its pairwise tapes summed over the other
    particles in order, a block of a particle's pairs at a time: the block's read rows
    filled in ``XP`` (its parameter rows are set once by ``integrate``), every pairwise
    tape run on it, its results added in order.  ``posT``: scratch for the positions by component."""
    n = pos.shape[0]
    for i in range(n):
        for d in range(3):
            X[d, i] = pos[i, d] if d < dim else 0.0
            X[3 + d, i] = vel[i, d] if d < dim else 0.0
        X[6, i] = q[i]
        X[7, i] = m[i]
        X[8, i] = t
        for k in range(params.size):
            X[N_FIXED + k, i] = params[k]
    for i in range(n):
        for c in range(dim):
            acc[i, c] = 0.0
    for c in range(dim):
        if has[c]:
            _run(ops, args, starts[c], starts[c + 1], X, n, stack, acc, c)
    pairs = False
    for c in range(dim):
        pairs = pairs or has[dim + c]
    if not pairs or n < 2:
        return
    for d in range(dim):  # positions by component: the other particles' rows are contiguous
        for k in range(n):
            posT[d, k] = pos[k, d]
    for i in range(n):
        for o0 in range(0, n - 1, BLOCK):  # the next block of i's pairs: others o0 .. o0 + nb - 1
            nb = min(BLOCK, n - 1 - o0)
            _pair_rows(i, o0, nb, dim, reads, X, posT, q, m, XP)
            for c in range(dim):
                if has[dim + c]:
                    run_tape(ops, args, starts[dim + c], starts[dim + c + 1], XP, 0, nb, stack)
                    total = acc[i, c]
                    for b in range(nb):
                        total += stack[0, b]
                    acc[i, c] = total


@kernel
def _pair_rows(i, o0, nb, dim, reads, X, posT, q, m, XP):
    """Fill the read rows of ``XP`` for particle ``i``'s pairs with the others ``o0 ..
    o0 + nb - 1`` (other ``o`` is particle ``o`` below ``i``, ``o + 1`` from it on): two
    contiguous runs of particles, before and after ``i``; the values are those of the
    formulas of the module doc (``r``: the squares of the components added in order)."""
    cut = min(max(i - o0, 0), nb)  # b < cut: particle o0 + b; from cut on: particle o0 + b + 1
    for row in range(9):
        if reads[row]:
            value = X[row, i]
            for b in range(nb):
                XP[row, b] = value
    for d in range(3):
        if reads[9 + d]:
            if d < dim:
                here = posT[d, i]
                for b in range(cut):
                    XP[9 + d, b] = posT[d, o0 + b] - here
                for b in range(cut, nb):
                    XP[9 + d, b] = posT[d, o0 + b + 1] - here
            else:
                for b in range(nb):
                    XP[9 + d, b] = 0.0
    if reads[12]:
        for b in range(nb):
            XP[12, b] = 0.0
        for d in range(dim):
            here = posT[d, i]
            for b in range(cut):
                delta = posT[d, o0 + b] - here
                XP[12, b] += delta * delta
            for b in range(cut, nb):
                delta = posT[d, o0 + b + 1] - here
                XP[12, b] += delta * delta
        for b in range(nb):
            XP[12, b] = np.sqrt(XP[12, b])
    if reads[13]:
        for b in range(cut):
            XP[13, b] = q[o0 + b]
        for b in range(cut, nb):
            XP[13, b] = q[o0 + b + 1]
    if reads[14]:
        for b in range(cut):
            XP[14, b] = m[o0 + b]
        for b in range(cut, nb):
            XP[14, b] = m[o0 + b + 1]


@kernel
def integrate(ops, args, starts, depth, has, reads, dim, pos0, vel0, q, m, params, t0, times, substeps, method, out):
    """Integrate from ``(pos0, vel0)`` at ``t0``; write positions at ``times`` to ``out``
    (module doc).  ``method`` 0: RK4, 1: velocity Verlet."""
    n = pos0.shape[0]
    n_rows = N_FIXED + params.size
    X = np.zeros((n_rows, max(n, 1)))
    XP = np.zeros((n_rows, BLOCK))
    for k in range(params.size):
        for b in range(BLOCK):
            XP[N_FIXED + k, b] = params[k]
    stack = np.empty((depth + 1, BLOCK))
    posT = np.empty((dim, max(n, 1)))
    pos, vel = pos0.copy(), vel0.copy()
    a1 = np.empty_like(pos)
    a2 = np.empty_like(pos)
    a3 = np.empty_like(pos)
    a4 = np.empty_like(pos)
    p = np.empty_like(pos)
    v = np.empty_like(pos)
    t = t0
    for s in range(times.size):
        start = t
        h = (times[s] - start) / substeps
        for step in range(substeps):
            t = start + step * h
            if method == 0:
                _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t, params, X, XP, stack, posT, a1)
                for i in range(n):
                    for d in range(dim):
                        p[i, d] = pos[i, d] + 0.5 * h * vel[i, d]
                        v[i, d] = vel[i, d] + 0.5 * h * a1[i, d]
                _accelerations(ops, args, starts, has, reads, dim, p, v, q, m, t + 0.5 * h, params, X, XP, stack,
                               posT, a2)
                v2 = v.copy()
                for i in range(n):
                    for d in range(dim):
                        p[i, d] = pos[i, d] + 0.5 * h * v2[i, d]
                        v[i, d] = vel[i, d] + 0.5 * h * a2[i, d]
                _accelerations(ops, args, starts, has, reads, dim, p, v, q, m, t + 0.5 * h, params, X, XP, stack,
                               posT, a3)
                v3 = v.copy()
                for i in range(n):
                    for d in range(dim):
                        p[i, d] = pos[i, d] + h * v3[i, d]
                        v[i, d] = vel[i, d] + h * a3[i, d]
                _accelerations(ops, args, starts, has, reads, dim, p, v, q, m, t + h, params, X, XP, stack, posT, a4)
                for i in range(n):
                    for d in range(dim):
                        pos[i, d] += h / 6.0 * (vel[i, d] + 2.0 * v2[i, d] + 2.0 * v3[i, d] + v[i, d])
                        vel[i, d] += h / 6.0 * (a1[i, d] + 2.0 * a2[i, d] + 2.0 * a3[i, d] + a4[i, d])
            else:
                _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t, params, X, XP, stack, posT, a1)
                for i in range(n):
                    for d in range(dim):
                        pos[i, d] += h * vel[i, d] + 0.5 * h * h * a1[i, d]
                _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t + h, params, X, XP, stack,
                               posT, a2)
                for i in range(n):
                    for d in range(dim):
                        vel[i, d] += 0.5 * h * (a1[i, d] + a2[i, d])
        t = times[s]
        for i in range(n):
            for d in range(dim):
                out[i, s, d] = pos[i, d]
