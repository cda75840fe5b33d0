"""The solved mechanism (``Solution``) and how its plan is evaluated.

A solve (``fastscore.solve.mechanism``) ends in a plan: closed forms (``_Closed``) and
implicit blocks solved per sample (``_Numeric``), in solving order.  ``Solution`` holds
it with the closed forms in the knowns; ``Solution.values`` runs it: each closed form
written over the closed forms before it (its local plan), compiled once to a tape and run
by the tape kernel, each implicit block compiled to a root-finding ``Block``
(``compile_block``) and run by the Newton / bracketing kernel of
``fastscore.kernels.roots``.  The numeric glue here (broadcast points, stacked rows of
``X``) is shared with the solver.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import symengine as se

from fastscore.kernels import evaluate, pack
from fastscore.kernels.roots import Block, solve_block
from fastscore.solve.closed_forms import names_of
from fastscore.support.caches import memoized
from fastscore.tapes.compile import compile_tape

__all__ = ["Solution", "compile_block"]


# --------------------------------------------------------------------------- plan


@dataclass(frozen=True)
class _Closed:
    """``name = expr`` with ``expr`` in knowns and numerically solved unknowns."""

    name: str
    expr: se.Basic


@dataclass(frozen=True)
class _Numeric:
    """Unknowns ``names`` solved per sample from ``residuals`` (all zero)."""

    names: tuple[str, ...]
    residuals: tuple[se.Basic, ...]
    given: tuple[str, ...]  # the other free names of the residuals


@dataclass(frozen=True)
class Solution:
    """The solved mechanism.

    ``expressions`` holds the closed form, in the knowns only, of every unknown that
    has one; ``law`` is the target's closed form or ``None`` when the target needs
    numeric root finding (then ``values`` still computes it).
    """

    target: str
    knowns: tuple[str, ...]
    expressions: Mapping[str, se.Basic]
    law: se.Basic | None
    _plan: tuple[_Closed | _Numeric, ...] = field(repr=False, compare=False)
    branches: Mapping[str, int] = field(default_factory=dict, compare=False)
    """For each unknown chosen among several closed-form branches, how many were
    admissible (real, finite and satisfying the equation at every point): where this is
    above 1, fastscore chose by sign and MechBench's harness reports an ambiguity."""
    _compiled: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def numeric(self) -> tuple[str, ...]:
        """Unknowns without a closed form: solved by numeric root finding, or from such."""
        return tuple(n for step in self._plan
                     for n in ((step.name,) if isinstance(step, _Closed) else step.names)
                     if n not in self.expressions)

    def renamed(self, names: Mapping[str, str]) -> Solution:
        """This solution for a copy of its mechanism whose unknowns are renamed by ``names``
        (old -> new; the knowns and the target keep theirs): ``fastscore.solve.copies``."""
        if not names:
            return self
        symbols = se.DictBasic({se.Symbol(old): se.Symbol(new) for old, new in names.items()})

        def renamed(name: str) -> str:
            return names.get(name, name)

        def moved(expr: se.Basic) -> se.Basic:
            return expr.xreplace(symbols) if names_of(expr) & names.keys() else expr

        plan = tuple(_Closed(renamed(step.name), moved(step.expr)) if isinstance(step, _Closed) else
                     _Numeric(tuple(map(renamed, step.names)), tuple(map(moved, step.residuals)),
                              tuple(map(renamed, step.given)))
                     for step in self._plan)
        return Solution(target=self.target, knowns=self.knowns,
                        expressions={renamed(n): e for n, e in self.expressions.items()}, law=self.law,
                        _plan=plan, branches={renamed(n): count for n, count in self.branches.items()})

    def values(self, names: Sequence[str], points: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Numeric values of the unknowns ``names`` at ``points`` (values of the knowns).

        Closed forms go through the tape kernel, implicit blocks through the root
        kernel; NaN where a root was not found or failed the residual check.
        """
        plan = self._local_plan()
        steps = _needed_steps(plan, names)
        used = set().union(*(_step_inputs(step) for step in steps)) & set(self.knowns)
        env = _broadcast(points, sorted(used))
        n = max((np.size(v) for v in points.values()), default=1)
        for step in steps:
            if isinstance(step, _Closed):
                tape = self._compiled.get(step.name)
                if tape is None:
                    tape = self._compiled[step.name] = _compile(step.expr)
                env[step.name] = _run(tape, env, n)
            else:
                block = self._compiled.get(step.names)
                if block is None:
                    block = self._compiled[step.names] = compile_block(step.residuals, step.given, step.names)
                solution, _ = solve_block(block, _stack(env, step.given, n))
                env.update(zip(step.names, solution))
        missing = [n for n in names if n not in env]
        if missing:
            raise KeyError(f"not an unknown of this mechanism: {', '.join(missing)}")
        return {n: env[n] for n in names}


    def _local_plan(self) -> tuple[_Closed | _Numeric, ...]:
        """The plan with each closed form written over the closed forms before it: every
        earlier step's expression that occurs in it is that step's name.  A network of 90
        explicit equations compiles 90 small tapes so, not 90 closed forms of the whole
        chain (7 s where this takes a fraction); the values are the same, since each name
        holds the values of the very expression it replaces.  Built once a solution."""
        local = self._compiled.get(_LOCAL)
        if local is None:
            earlier, steps = se.DictBasic(), []
            for step in self._plan:
                if isinstance(step, _Closed):
                    steps.append(_Closed(step.name, step.expr.xreplace(earlier) if len(earlier) else step.expr))
                    if step.expr.args:  # a name or a number is no cheaper as another name
                        earlier[step.expr] = name = se.Symbol(step.name)
                        coefficient, rest = _split_coefficient(step.expr)
                        if coefficient is not None and not rest.is_Mul:  # -tanh(u) stands as tanh(u) in a product
                            earlier[rest] = name / coefficient
                else:
                    steps.append(step)
            local = self._compiled[_LOCAL] = tuple(steps)
        return local


def _split_coefficient(expr: se.Basic) -> tuple[se.Basic | None, se.Basic]:
    """``(c, rest)`` with ``expr = c*rest`` for a product with a numeric coefficient ``c``
    (SymEngine keeps it first), else ``(None, expr)``."""
    if expr.is_Mul and expr.args[0].is_Number:
        coefficient = expr.args[0]
        return coefficient, expr / coefficient
    return None, expr


_LOCAL = ("local plan",)
"""The key of ``Solution._local_plan`` in its cache of compiled steps (no step's name)."""


def _needed_steps(plan: Sequence[_Closed | _Numeric], names: Sequence[str]) -> list[_Closed | _Numeric]:
    """The plan steps that ``names`` depend on, in plan order."""
    wanted = set(names)
    kept = []
    for step in reversed(plan):
        produced = {step.name} if isinstance(step, _Closed) else set(step.names)
        if produced & wanted:
            kept.append(step)
            wanted |= _step_inputs(step)
    return kept[::-1]


def _step_inputs(step: _Closed | _Numeric) -> frozenset[str]:
    return names_of(step.expr) if isinstance(step, _Closed) else set(step.given)


# ----------------------------------------------------------------- numeric glue


def _broadcast(points: Mapping[str, np.ndarray], names: Sequence[str]) -> dict[str, np.ndarray]:
    missing = [n for n in names if n not in points]
    if missing:
        raise KeyError(f"points lack values for {', '.join(missing)}")
    arrays = np.broadcast_arrays(*(np.atleast_1d(np.asarray(points[n], dtype=np.float64)) for n in names))
    return {n: np.ascontiguousarray(a) for n, a in zip(names, arrays)}


@memoized(1 << 12)
def _compile(expr: se.Basic):
    """The tape of a closed form over its own names (memoised: a task's renamed or
    repeated mechanisms share their closed forms, which are in the knowns only)."""
    variables = sorted(names_of(expr))
    return variables, compile_tape(expr, variables)


def _run(compiled, env: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    variables, tape = compiled
    return evaluate(tape, _stack(env, variables, n))


def _stack(env: Mapping[str, np.ndarray], names: Sequence[str], n: int) -> np.ndarray:
    """Rows ``env[name]`` for ``names``: the ``X`` of the kernels, shape ``(len(names), n)``."""
    X = np.empty((len(names), n))
    for i, name in enumerate(names):
        X[i] = env[name]
    return X


def compile_block(residuals: Sequence[se.Basic], given: Sequence[str], unknowns: Sequence[str]) -> Block:
    """The root-finding ``Block`` of ``residuals`` (all zero at a solution) in ``given``
    and ``unknowns``: the residuals and their Jacobian (by ``se.diff``), compiled to tapes."""
    if len(residuals) != len(unknowns):
        raise ValueError(f"{len(residuals)} residuals for {len(unknowns)} unknowns")
    variables = list(given) + list(unknowns)
    symbols = [se.Symbol(u) for u in unknowns]
    exprs = list(residuals) + [se.diff(r, s) for r in residuals for s in symbols]
    batch = pack([compile_tape(e, variables) for e in exprs])
    return Block(batch, tuple(given), tuple(unknowns))
