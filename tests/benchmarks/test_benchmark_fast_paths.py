"""The benchmarks' fast paths give what the plain rules give: GRN rows (random graphs,
motif lines, bad input) against parse_graph + graph_scores + row_of one row at a time,
motif labels against the regular expression, and the pairwise law of motion against a
plain RK4 in Python over ``evaluate`` (bit for bit: the same operations in the same order)."""
from __future__ import annotations

import random
import re
from pathlib import Path

import numpy as np
import pytest

from fastscore.benchmarks import grn
from fastscore.benchmarks.base import BadInput, base_fields, row_of, submission_text
from fastscore.benchmarks.trajectories import compile_law
from fastscore.kernels.evaluate import evaluate
from fastscore.kernels.motion import N_FIXED, integrate
from fastscore.kernels.tape import Tape
from fastscore.problems.formats import load_problems
from fastscore.settings import Settings

GRN = Path(__file__).resolve().parents[2] / "problems" / "grn"


def _plain_rows(problem, rows):
    task = problem.task
    base = base_fields(problem, version=task["version"], difficulty=task["difficulty"])
    out = []
    for row in rows:
        text = submission_text(row)
        if text is None:
            out.append(row_of(row, base, "parse_error", "no submission"))
            continue
        try:
            edges, motif = grn.parse_graph(text, task["nodes"])  # a fresh memo each time
        except BadInput as error:
            out.append(row_of(row, base, "parse_error", str(error)))
            continue
        out.append(row_of(row, base, "ok", None, grn.graph_scores(edges, task["edges"], motif, task["motif"])))
    return out


def _random_submission(rng: random.Random) -> str:
    nodes = ["X", "Y", "Z"]
    lines = [f"{rng.choice(nodes)}{' ' * rng.randint(0, 2)}{rng.choice(['->', '-|'])} {rng.choice(nodes)}"
             for _ in range(rng.randint(0, 6))]
    roll = rng.random()
    if roll < 0.05:
        lines.append("W -> X")                      # not a node of the task
    elif roll < 0.1:
        lines.append("X => Y")                      # not an edge
    elif roll < 0.15:
        lines.append("")                            # a blank line
    if rng.random() < 0.7:
        label = rng.choice(["coherent_ffl", "Coherent-FFL", " coherent ffl ", "m1", "MOTIF", "", "ffl x"])
        lines.insert(rng.randint(0, len(lines)), rng.choice(["motif:", "motif: ", "Motif: ", "  motif family :"])
                     + label)
    if rng.random() < 0.05:
        lines.append("motif: twice")
    separator = rng.choice(["\n"] * 8 + [";", ", "])
    return separator.join(lines)


def test_grn_rows_equal_the_plain_rules_row_by_row():
    problem = next(p for p in load_problems(GRN) if p.task_id == "coherent-ffl")
    rng = random.Random(29)
    texts = [_random_submission(rng) for _ in range(600)]
    rows = []
    for i in range(3000):
        row = {"config": f"c{i % 3}", "run": i, "task": "coherent-ffl", "submission": rng.choice(texts)}
        roll = rng.random()
        if roll < 0.02:
            row["submission"] = "  "                 # no submission
        elif roll < 0.04:
            row = {**row, "submission": None, "mechanism": rng.choice(texts)}
        elif roll < 0.06:
            row["extra"] = i                          # a column carried through
        elif roll < 0.07:
            row = {"note": "first", **row}            # another order of columns
        elif roll < 0.08:
            row["submission"] = '{"edges": [["X", "Y", 1]], "motif": "coherent_ffl"}'
        rows.append(row)
    got = grn.score_task(problem, rows)
    want = _plain_rows(problem, rows)
    assert got == want
    assert [list(r) for r in got] == [list(r) for r in want]  # the columns in the same order
    statuses = {r["status"] for r in got}
    assert statuses == {"ok", "parse_error"} and sum(r.get("grn_motif") is True for r in got) > 100


@pytest.mark.parametrize("seed", range(3))
def test_motif_labels_equal_the_regular_expression(seed):
    rng = random.Random(seed)
    alphabet = ["a", "B", "_", "-", " ", "\t", "1", "\u00a0", "\u2003", "\x1c", "\u0130", "é", "x"]
    blanks = re.compile(r"[\s\-_]+")
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert grn.motif_label(text) == (blanks.sub("_", text.strip().lower()).strip("_") or None), repr(text)


def _plain_rk4(law, dim, pos, vel, q, m, t0, times, substeps):
    """integrate's RK4 in Python: the tapes through ``evaluate``, the same operations in order."""
    ops, args, starts, depth, has, reads, params = law
    tapes = [Tape(ops[starts[k]:starts[k + 1]], args[starts[k]:starts[k + 1]], depth, N_FIXED + params.size)
             for k in range(2 * dim)]
    n = pos.shape[0]

    def accelerations(p, v, t):
        X = np.zeros((N_FIXED + params.size, n))
        X[:dim] = p.T
        X[3:3 + dim] = v.T
        X[6], X[7], X[8] = q, m, t
        X[N_FIXED:] = params[:, None]
        acc = np.zeros((n, dim))
        for c in range(dim):
            if has[c]:
                acc[:, c] = evaluate(tapes[c], X)
        for i in range(n):
            others = [j for j in range(n) if j != i]
            XP = np.repeat(X[:, i:i + 1], len(others), axis=1)
            XP[9:12] = 0.0
            r2 = np.zeros(len(others))
            for d in range(dim):
                delta = p[others, d] - p[i, d]
                XP[9 + d] = delta
                r2 = r2 + delta * delta
            XP[12] = np.sqrt(r2)
            XP[13], XP[14] = q[others], m[others]
            for c in range(dim):
                if has[dim + c]:
                    total = acc[i, c]
                    for value in evaluate(tapes[dim + c], XP):
                        total += value
                    acc[i, c] = total
        return acc

    p, v, t, out = pos.copy(), vel.copy(), t0, []
    for target in times:
        start = t
        h = (target - start) / substeps
        for step in range(substeps):
            t = start + step * h
            a1 = accelerations(p, v, t)
            p2, v2 = p + 0.5 * h * v, v + 0.5 * h * a1
            a2 = accelerations(p2, v2, t + 0.5 * h)
            p3, v3 = p + 0.5 * h * v2, v + 0.5 * h * a2
            a3 = accelerations(p3, v3, t + 0.5 * h)
            p4, v4 = p + h * v3, v + h * a3
            a4 = accelerations(p4, v4, t + h)
            p = p + h / 6.0 * (v + 2.0 * v2 + 2.0 * v3 + v4)
            v = v + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        t = target
        out.append(p.copy())
    return np.stack(out, axis=1)


@pytest.mark.parametrize("n, dim, formulas", [
    (6, 3, {"x": "-k*x", "pair_x": "-C*q*q_j*dx/(m*r**3)", "pair_y": "-C*q*q_j*dy/(m*r**3)",
            "pair_z": "G*m_j*dz/(r**2 + 0.1)**1.5 + 0*vy + 0*t"}),
    (300, 2, {"pair_x": "C*m_j*dx/r**3", "pair_y": "sin(dy)*exp(-r) + 0*y"}),   # two blocks of pairs per particle
    (2, 1, {"pair_x": "C*dx*q_j"}),
    (257, 1, {"x": "-k*x", "pair_x": "C*q*m_j*dx/(r**3 + 1)"}),   # a particle's own pair at a block's edge
    (5, 2, {"pair_x": "vx*q_j + C*vy*dx", "pair_y": "-C*q*q_j*dy/(m*r**3) + exp(-t*vx)"}),  # velocities, time
    (4, 3, {"pair_x": "C*q", "pair_y": "dy", "pair_z": "C*q + 0*m_j"}),  # the same for every pair; a pair row
    (4, 2, {"pair_x": "dx/(r - sqrt(r**2))", "pair_y": "log(dy) + exp(1000*r)"}),  # NaN and inf
])
def test_the_pairwise_integrator_is_the_plain_rk4_bit_for_bit(n, dim, formulas):
    law = compile_law(formulas, {"C": 0.7, "k": 0.3, "G": 1.1}, dim, Settings().limits)
    rng = np.random.default_rng(n)
    pos, vel = rng.normal(size=(n, dim)) * 3, rng.normal(size=(n, dim))
    q, m = rng.uniform(-1, 1, n), rng.uniform(0.5, 2, n)
    times = np.array([0.05, 0.1]) if n > 100 else np.array([0.1, 0.25, 0.3])
    out = np.empty((n, times.size, dim))
    ops, args, starts, depth, has, reads, params = law
    integrate(ops, args, starts, depth, has, reads, dim, pos, vel, q, m, params, 0.0, times, 2, 0, out)
    with np.errstate(all="ignore"):  # the NaN and inf law: IEEE values, as the kernel's
        plain = _plain_rk4(law, dim, pos, vel, q, m, 0.0, times, 2)
    assert np.array_equal(out, plain, equal_nan=True)
