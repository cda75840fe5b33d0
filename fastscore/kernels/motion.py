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
pairwise tapes read (the others are not filled per pair).  The pairwise tapes are run as
one register program (``pairs``: what is the same for all of a particle's pairs computed
once per particle, what the components share once), a block (``BLOCK``) of particles
``j`` at a time, each particle ``i`` in turn; the block holds ``i`` itself too (its
values are computed and left out), so ``q_j, m_j`` are filled once per block.  Each
particle's pair terms are added in the order of the other particles (blocks in order),
the components' sums side by side: the same additions as one tape after the other, so
the results are bit for bit those of evaluating each tape on each pair.  The state at each time of
``times`` is written to ``out`` (particles, times, dim); the step is the interval to
the next time divided by ``substeps``.  Velocity Verlet reads the velocity of the
step's start in its second acceleration (exact when the law does not read velocities).
IEEE semantics: a law that blows up gives inf/NaN, nothing raises.
"""
from __future__ import annotations

import numpy as np

from .evaluate import BLOCK, run_tape
from .jit import kernel
from .pairs import pair_program, run_rows, run_scalars

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
def _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t, params, X, stack, posT, program, S, W,
                   acc):
    """``acc``: each particle's own tapes, then its pairwise terms (the register program
    ``program`` of ``pairs``, scalars ``S``, rows ``W``) summed over the other particles
    in order, a block of pairs at a time.  ``posT``: scratch for the positions by component."""
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
    loads, scalars, rows, results, columns = program
    if results.size == 0 or n < 2:
        return
    for d in range(dim):  # positions by component: the particles' rows are contiguous
        for k in range(n):
            posT[d, k] = pos[k, d]
    for o0 in range(0, n, BLOCK):  # the pairs with particles o0 .. o0 + nb - 1, of each i in turn
        nb = min(BLOCK, n - o0)
        _other_rows(o0, nb, reads, q, m, W)
        for i in range(n):
            run_scalars(loads, scalars, S, X, i)
            _pair_rows(i, o0, nb, dim, reads, posT, W)
            run_rows(rows, S, W, nb)
            _add_pairs(i, i - o0, nb, results, columns, W, acc)


@kernel
def _other_rows(o0, nb, reads, q, m, W):
    """Fill the pair rows ``q_j, m_j`` (``W[4:6]``, if read) with particles ``o0 .. o0 + nb - 1``."""
    if reads[13]:
        for b in range(nb):
            W[4, b] = q[o0 + b]
    if reads[14]:
        for b in range(nb):
            W[5, b] = m[o0 + b]


@kernel
def _pair_rows(i, o0, nb, dim, reads, posT, W):
    """Fill the pair rows ``dx, dy, dz, r`` (``W[0:4]``) for particle ``i`` with particles
    ``o0 .. o0 + nb - 1``, values of the formulas of the module doc (``r``: the root of
    0 plus the squares of the components in order); the pair of ``i`` with itself is
    filled too (``dx = r = 0``) and left out of the sums.  When ``r`` is read, the
    components below ``dim`` are filled with it; ``dz`` of a 2-D world (``dy, dz`` of 1-D)
    is 0.  The loops index the arrays themselves (no views: see ``pairs.run_rows``)."""
    for d in range(dim, 3):
        if reads[9 + d]:
            for b in range(nb):
                W[d, b] = 0.0
    if not reads[12]:
        for d in range(dim):
            if reads[9 + d]:
                here = posT[d, i]
                for b in range(nb):
                    W[d, b] = posT[d, o0 + b] - here
    elif dim == 1:
        h0 = posT[0, i]
        for b in range(nb):
            dx = posT[0, o0 + b] - h0
            W[0, b] = dx
            W[3, b] = np.sqrt(0.0 + dx * dx)
    elif dim == 2:
        h0, h1 = posT[0, i], posT[1, i]
        for b in range(nb):
            dx = posT[0, o0 + b] - h0
            dy = posT[1, o0 + b] - h1
            W[0, b] = dx
            W[1, b] = dy
            W[3, b] = np.sqrt(0.0 + dx * dx + dy * dy)
    else:
        h0, h1, h2 = posT[0, i], posT[1, i], posT[2, i]
        for b in range(nb):
            dx = posT[0, o0 + b] - h0
            dy = posT[1, o0 + b] - h1
            dz = posT[2, o0 + b] - h2
            W[0, b] = dx
            W[1, b] = dy
            W[2, b] = dz
            W[3, b] = np.sqrt(0.0 + dx * dx + dy * dy + dz * dz)


@kernel
def _add_pairs(i, own, nb, results, columns, W, acc):
    """``acc[i, columns[k]] +=`` the values of row ``results[k]`` of ``W``, one pair after
    the other, skipping column ``own`` (particle ``i`` itself); the components' sums run
    side by side (independent chains of additions, each in the order of the pairs)."""
    k = results.size
    cut = min(max(own, 0), nb)
    rest = min(max(own + 1, 0), nb)
    if k == 1:
        x = results[0]
        t0 = acc[i, columns[0]]
        for b in range(cut):
            t0 += W[x, b]
        for b in range(rest, nb):
            t0 += W[x, b]
        acc[i, columns[0]] = t0
    elif k == 2:
        x, y = results[0], results[1]
        t0, t1 = acc[i, columns[0]], acc[i, columns[1]]
        for b in range(cut):
            t0 += W[x, b]
            t1 += W[y, b]
        for b in range(rest, nb):
            t0 += W[x, b]
            t1 += W[y, b]
        acc[i, columns[0]] = t0
        acc[i, columns[1]] = t1
    else:
        x, y, z = results[0], results[1], results[2]
        t0, t1, t2 = acc[i, columns[0]], acc[i, columns[1]], acc[i, columns[2]]
        for b in range(cut):
            t0 += W[x, b]
            t1 += W[y, b]
            t2 += W[z, b]
        for b in range(rest, nb):
            t0 += W[x, b]
            t1 += W[y, b]
            t2 += W[z, b]
        acc[i, columns[0]] = t0
        acc[i, columns[1]] = t1
        acc[i, columns[2]] = t2


def integrate(ops, args, starts, depth, has, reads, dim, pos0, vel0, q, m, params, t0, times, substeps, method, out):
    """Integrate from ``(pos0, vel0)`` at ``t0``; write positions at ``times`` to ``out``
    (module doc).  ``method`` 0: RK4, 1: velocity Verlet.  The pairwise tapes are read
    into one register program first (``pairs.pair_program``)."""
    tapes = [dim + c for c in range(dim) if has[dim + c]]
    program = pair_program(ops, args, starts, tapes)
    columns = np.array([t - dim for t in tapes], dtype=np.int64)
    _integrate(ops, args, starts, depth, has, reads, dim, pos0, vel0, q, m, params, t0, times, substeps, method,
               (program.loads, program.scalars, program.rows, program.results, columns), program.constants,
               program.n_rows, out)


@kernel
def _integrate(ops, args, starts, depth, has, reads, dim, pos0, vel0, q, m, params, t0, times, substeps, method,
               program, constants, n_rows, out):
    """``integrate`` once the pair program is made: ``constants`` the initial scalar
    registers, ``n_rows`` the rows of the register block ``W``."""
    n = pos0.shape[0]
    X = np.zeros((N_FIXED + params.size, max(n, 1)))
    S = constants.copy()
    W = np.zeros((n_rows, BLOCK))
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
                _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t, params, X, stack, posT,
                               program, S, W, a1)
                for i in range(n):
                    for d in range(dim):
                        p[i, d] = pos[i, d] + 0.5 * h * vel[i, d]
                        v[i, d] = vel[i, d] + 0.5 * h * a1[i, d]
                _accelerations(ops, args, starts, has, reads, dim, p, v, q, m, t + 0.5 * h, params, X, stack,
                               posT, program, S, W, a2)
                v2 = v.copy()
                for i in range(n):
                    for d in range(dim):
                        p[i, d] = pos[i, d] + 0.5 * h * v2[i, d]
                        v[i, d] = vel[i, d] + 0.5 * h * a2[i, d]
                _accelerations(ops, args, starts, has, reads, dim, p, v, q, m, t + 0.5 * h, params, X, stack,
                               posT, program, S, W, a3)
                v3 = v.copy()
                for i in range(n):
                    for d in range(dim):
                        p[i, d] = pos[i, d] + h * v3[i, d]
                        v[i, d] = vel[i, d] + h * a3[i, d]
                _accelerations(ops, args, starts, has, reads, dim, p, v, q, m, t + h, params, X, stack, posT,
                               program, S, W, a4)
                for i in range(n):
                    for d in range(dim):
                        pos[i, d] += h / 6.0 * (vel[i, d] + 2.0 * v2[i, d] + 2.0 * v3[i, d] + v[i, d])
                        vel[i, d] += h / 6.0 * (a1[i, d] + 2.0 * a2[i, d] + 2.0 * a3[i, d] + a4[i, d])
            else:
                _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t, params, X, stack, posT,
                               program, S, W, a1)
                for i in range(n):
                    for d in range(dim):
                        pos[i, d] += h * vel[i, d] + 0.5 * h * h * a1[i, d]
                _accelerations(ops, args, starts, has, reads, dim, pos, vel, q, m, t + h, params, X, stack,
                               posT, program, S, W, a2)
                for i in range(n):
                    for d in range(dim):
                        vel[i, d] += 0.5 * h * (a1[i, d] + a2[i, d])
        t = times[s]
        for i in range(n):
            for d in range(dim):
                out[i, s, d] = pos[i, d]
