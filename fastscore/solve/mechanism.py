"""Mechanism elimination: equations -> explicit steps + implicit blocks -> derived law.

A mechanism is a set of equations ``lhs = rhs`` (SymEngine expressions built by
``fastscore.text.parse``).  Every free symbol that is not a *known* (input, auxiliary
input, constant) is an unknown.  The system is checked structurally (bipartite
matching equations <-> unknowns), block-triangularised (matching + Tarjan SCC, a
Dulmage-Mendelsohn style decomposition: ``fastscore.solve.blocks``) and solved block by
block:

* one equation in one unknown: ``x = expr``, linear, pure powers, quadratics (in
  ``x`` or in a rational power of ``x``) and single-occurrence inversions give
  closed forms (``fastscore.solve.closed_forms``); several candidate branches are told
  apart by realness, finiteness and sign over the sample ``points``;
* coupled blocks: a block linear in its unknowns is solved exactly by
  ``fastscore.solve.linear``; others are eliminated by substitution down to one equation
  in one unknown;
* SymPy's ``solve`` is a last symbolic attempt inside the time budget (main thread
  only, enforced with ``SIGALRM``: ``fastscore.solve.sympy_fallback``);
* whatever has no closed form is solved numerically per sample by the Newton /
  bracketing kernel of ``fastscore.kernels.roots``.

This module owns the solver (``solve_mechanism`` and its errors); the ``Solution`` it
returns, and the evaluation of its plan, are ``fastscore.solve.solution``'s.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping, Sequence

import numpy as np
import symengine as se

from fastscore.algebra.agreement import agree
from fastscore.algebra.rewrites import reduced_roots
from fastscore.algebra.sizes import count_nodes, subexpressions
from fastscore.kernels import evaluate
from fastscore.kernels.roots import solve_block
from fastscore.settings import DEFAULT_SETTINGS
from fastscore.solve.blocks import blocks, listed, match
from fastscore.solve.closed_forms import add_args, closed_forms, even_root_of, expand, has, names_of
from fastscore.solve.growth import closed_form_problem, power_problem, size_problem
from fastscore.solve.linear import LinearBlock, SingularBlock, UnsatisfiedEquation, linear_block, solve_linear
from fastscore.solve.solution import Solution, _broadcast, _Closed, _Numeric, _stack, compile_block
from fastscore.solve.sympy_fallback import sympy_forms
from fastscore.support.caches import memoized
from fastscore.tapes.compile import compile_tape
from fastscore.tapes.constants import constant_value
from fastscore.tapes.warm import warm_up
from fastscore.text.tokens import DEFAULT_LIMITS, Limits

__all__ = ["SolveError", "SolveTimeout", "solve_mechanism"]

class SolveError(ValueError):
    """A mechanism that cannot be reduced to its law; the message is one clear line."""


class SolveTimeout(SolveError):
    """The solve ran past its time budget."""


def _residual(lhs: se.Basic, rhs: se.Basic) -> se.Basic:
    """``lhs - rhs`` with the smaller side first (then the one of smaller text), so that
    ``a = b`` and ``b = a`` give the same residual (and a linear block the same closed
    forms, not just equal ones: a mechanism written with its sides swapped derives the
    same law).  Smaller first is how balances are written (``2*D1 = ...``), which keeps
    the closed forms free of negated denominators."""
    left, right = count_nodes(lhs), count_nodes(rhs)
    if left == right:
        left, right = str(lhs), str(rhs)
    return lhs - rhs if left <= right else rhs - lhs


# ----------------------------------------------------------------- the solver


class _Solver:
    """State of one ``solve_mechanism`` call."""

    def __init__(self, knowns: Collection[str], points: Mapping[str, np.ndarray], budget: float, rtol: float,
                 solved_blocks: dict | None = None, limits: Limits = DEFAULT_LIMITS, started: float | None = None):
        self.knowns = tuple(sorted(knowns))
        self.limits = limits  # bounds on what substitution builds (fastscore.solve.growth)
        self.solved_blocks = solved_blocks  # (equations, unknowns) -> (closed forms, branch counts)
        self.points = points
        self.env: dict[str, np.ndarray] | None = None  # lazily broadcast points + numeric values
        self.budget = budget
        self.rtol = rtol  # agreement of equation sides and of branches (Settings.rtol)
        self.deadline = (time.perf_counter() if started is None else started) + budget
        self.sympy_left = budget / 2  # SymPy's share: the rest is kept for our own steps
        self.closed: dict[str, se.Basic] = {}  # unknown -> expr in knowns + numeric unknowns
        self.replacing = se.DictBasic()  # the same, by symbol: converted once, not per substitution
        self.numeric: set[str] = set()
        self.plan: list[_Closed | _Numeric] = []
        self.branches: dict[str, int] = {}

    # -- budget and numeric evaluation

    def check_budget(self) -> None:
        if time.perf_counter() > self.deadline:
            raise SolveTimeout(f"solve budget of {self.budget:g} s exceeded")

    def environment(self) -> dict[str, np.ndarray]:
        if self.env is None:
            present = [n for n in self.knowns if n in self.points]
            self.env = _broadcast(self.points, present)
        return self.env

    def evaluate(self, expr: se.Basic) -> np.ndarray:
        """Values of ``expr`` (in knowns and numerically solved unknowns) at the points."""
        return self.evaluate_many([expr])[0]

    def evaluate_many(self, exprs: Sequence[se.Basic], extra: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """Values of several expressions at the points, shape ``(len(exprs), n)``; ``extra``
        gives values of further names (unknowns being checked)."""
        env = self.environment() if extra is None else {**self.environment(), **extra}
        variables = sorted(set().union(*(names_of(e) for e in exprs)))
        missing = set(variables) - env.keys()
        if missing:
            raise SolveError(f"no sample values for {', '.join(sorted(missing))}")
        n = len(next(iter(env.values()))) if env else 1
        compound = [i for i, e in enumerate(exprs) if not e.is_Number]  # a number needs no tape
        values = np.empty((len(exprs), n))
        if compound:
            values[compound] = evaluate([compile_tape(exprs[i], variables) for i in compound],
                                        _stack(env, variables, n))
        for i, e in enumerate(exprs):
            if e.is_Number:
                values[i] = constant_value(e)
        return values

    # -- results

    def bound(self, what: str, expr: se.Basic) -> None:
        """Stop (``SolveError``) when ``expr`` grows past ``Limits.max_solved_nodes`` or
        the budget is spent: checked as an elimination builds its expressions."""
        problem = size_problem(what, expr, self.limits)
        if problem is not None:
            raise SolveError(problem)
        self.check_budget()

    def record(self, name: str, expr: se.Basic) -> None:
        """A closed form, within the bounds of ``fastscore.solve.growth`` (else ``SolveError``);
        one that depends on numeric unknowns is kept out of the law."""
        problem = closed_form_problem(name, expr, self.limits)
        if problem is not None:
            raise SolveError(problem)
        self.check_budget()
        self.closed[name] = expr
        self.replacing[se.Symbol(name)] = expr
        self.plan.append(_Closed(name, expr))
        if names_of(expr) & self.numeric:
            self.numeric.add(name)

    def substitute(self, expr: se.Basic) -> se.Basic:
        return expr.xreplace(self.replacing) if not names_of(expr).isdisjoint(self.closed) else expr

    # -- blocks

    def solve_block(self, equations: list[tuple[se.Basic, se.Basic]], unknowns: list[str]) -> None:
        """Solve one block of the decomposition: its closed forms are recorded, or it is
        solved numerically.  A block whose closed forms are in the knowns (its equations,
        once the closed forms before it are substituted, hold no numeric unknown) is
        looked up in ``solved_blocks`` (shared by the solves of one batch): met before, its
        closed forms and branch counts are recorded again, not solved again."""
        self.check_budget()
        for side in (side for equation in equations for side in equation):
            problem = power_problem(side, self.substitute, self.closed.keys(), names_of, self.limits)
            if problem is not None:
                raise SolveError(problem)
        equations = [(self.substitute(lhs), self.substitute(rhs)) for lhs, rhs in equations]
        key = None
        if self.solved_blocks is not None and not any((names_of(lhs) | names_of(rhs)) & self.numeric
                                               for lhs, rhs in equations):
            key = (tuple(equations), tuple(unknowns))
            found = self.solved_blocks.get(key)
            if found is not None:
                closed, branches = found
                for name, expr in closed:
                    self.record(name, expr)
                self.branches.update(branches)
                return
        start = len(self.plan)
        self.solve_equations(equations, unknowns)
        steps = self.plan[start:]
        if key is not None and all(isinstance(step, _Closed) for step in steps):
            self.solved_blocks[key] = ([(step.name, step.expr) for step in steps],
                                {name: self.branches[name] for name in unknowns if name in self.branches})

    def solve_equations(self, equations: list[tuple[se.Basic, se.Basic]], unknowns: list[str]) -> None:
        """`solve_block` on its equations with the closed forms before it substituted."""
        if len(unknowns) > 1:
            linear = linear_block([_residual(lhs, rhs) for lhs, rhs in equations], unknowns, self.check_budget)
            if linear is not None:
                self.solve_linear_block(linear, equations)
                return
        steps: list[tuple[str, se.Basic]] = []  # name -> expr in remaining block unknowns
        remaining = list(unknowns)
        while len(remaining) > 1:
            pick = self.isolate(equations, remaining)
            if pick is None:
                break
            i, name, expr = pick
            sym = se.Symbol(name)
            del equations[i]
            mapping = se.DictBasic({sym: expr})
            self.bound(f"eliminating {name}", expr)
            equations = [(lhs.xreplace(mapping), rhs.xreplace(mapping)) for lhs, rhs in equations]
            for lhs, rhs in equations:
                self.bound(f"eliminating {name}", lhs - rhs)
            steps.append((name, expr))
            remaining.remove(name)
            for lhs, rhs in equations:
                if not names_of(expand(lhs - rhs)) & set(remaining):
                    self.lost_unknown(lhs, rhs)
            self.check_budget()
        solved: dict[str, se.Basic] = {}
        if len(remaining) == 1:
            (lhs, rhs), = equations
            expr = self.solve_single(lhs, rhs, remaining[0], steps)
            if expr is not None:
                solved[remaining[0]] = expr
        if solved:
            solved = _back_substitute(steps, solved)
            for name in unknowns:
                self.record(name, solved[name])
            return
        self.solve_numerically(equations, remaining)
        for name, expr in _back_substitute(steps, {}).items():
            self.record(name, expr)

    def solve_linear_block(self, block: LinearBlock, equations) -> None:
        """A block linear in its unknowns: exact elimination (``fastscore.solve.linear``), whose
        float64 solution is checked against the block's equations at the points."""
        try:
            solved, _ = solve_linear(block, self.evaluate_many if self.points else None, rtol=self.rtol,
                                     bound=lambda expr: self.bound(f"the linear block in {listed(block.unknowns)}",
                                                                   expr),
                                     check=self.check_budget)
        except UnsatisfiedEquation as error:
            lhs, rhs = equations[error.index]
            raise SolveError(f"the linear block in {listed(block.unknowns)} is singular on part of the "
                             f"domain ({lhs} = {rhs} fails)") from None
        except SingularBlock as error:
            raise SolveError(str(error)) from None
        for name in block.unknowns:
            self.record(name, solved[name])

    def isolate(self, equations, remaining) -> tuple[int, str, se.Basic] | None:
        """The (equation, unknown, unique closed form) with the smallest closed form."""
        best = None
        block = set(remaining)
        for i, (lhs, rhs) in enumerate(equations):
            present = (names_of(lhs) | names_of(rhs)) & block
            for name in sorted(present):
                forms = closed_forms(lhs, rhs, se.Symbol(name))
                if forms is None or len(forms) != 1:
                    continue
                key = (len(names_of(forms[0]) & block), count_nodes(forms[0]))
                if best is None or key < best[0]:
                    best = (key, i, name, forms[0])
        return None if best is None else best[1:]

    def lost_unknown(self, lhs: se.Basic, rhs: se.Basic) -> None:
        """An equation whose unknowns were all eliminated: redundant or inconsistent."""
        if expand(lhs - rhs).is_zero:
            raise SolveError(f"under-determined: dependent equations ({lhs} = {rhs} holds identically)")
        if not self.points or not self.consistent(expand(lhs - rhs), se.Integer(0)):
            raise SolveError(f"inconsistent equations: eliminating the unknowns leaves {expand(lhs - rhs)} = 0")
        raise SolveError(f"under-determined: dependent equations ({lhs} = {rhs} holds on every sample)")

    def consistent(self, lhs: se.Basic, rhs: se.Basic) -> bool:
        """``lhs = rhs`` on every sample (or non-finite on both sides)."""
        return bool(np.all(self.satisfies(lhs, rhs, nan_ok=True)))

    def satisfies(self, lhs: se.Basic, rhs: se.Basic, *, nan_ok: bool = False,
                  extra: Mapping[str, np.ndarray] | None = None) -> np.ndarray:
        """Per sample: ``lhs`` and ``rhs`` agree within the tolerance relative to the
        largest of the sides and of the terms of their expansions (so that sides
        cancelling to zero are judged on the scale of their terms)."""
        if expand(lhs - rhs).is_zero:
            return np.ones(self.evaluate(se.Integer(0)).shape, dtype=bool)
        terms = [t for side in (lhs, rhs) for t in add_args(expand(side))]
        values = self.evaluate_many([lhs, rhs, *terms], extra)
        scale = np.max(np.abs(values), axis=0)
        a, b = values[0], values[1]
        close = np.abs(a - b) <= self.rtol * scale
        return close | (~np.isfinite(a) & ~np.isfinite(b)) if nan_ok else close

    def solve_single(self, lhs, rhs, name, steps) -> se.Basic | None:
        """Closed form of ``name`` from one equation, branch chosen over the points."""
        x = se.Symbol(name)
        forms = closed_forms(lhs, rhs, x)
        explicit = (lhs == x and not has(rhs, x)) or (rhs == x and not has(lhs, x))  # x is under no root
        if forms is not None and len(forms) == 1 and (explicit or not (self.points and even_root_of(lhs - rhs, x))):
            return forms[0]
        if forms is None:
            forms = sympy_forms(self, lhs - rhs, x)
            if not forms or not self.points:
                return None  # SymPy's forms are only trusted after a check on the points
        return self.choose_branch(forms, name, lhs, rhs, steps)

    def choose_branch(self, forms, name, lhs, rhs, steps) -> se.Basic:
        """Prefer the branch real and finite everywhere, that satisfies the equation,
        then positive everywhere (also for the block unknowns that follow from it)."""
        if not self.points:
            raise SolveError(f"ambiguous branch for {name}: no sample points to choose one")
        x = se.Symbol(name)
        scored = []
        for form in forms:
            try:
                value = self.evaluate(form)
                ok = np.isfinite(value)
                residual_ok = self.satisfies(lhs.xreplace({x: form}), rhs.xreplace({x: form}))
                ok &= residual_ok
                positive = np.all(value > 0)
                followers = _back_substitute(steps, {name: form})
                del followers[name]
                for expr in followers.values():
                    follow = self.evaluate(expr)
                    ok &= np.isfinite(follow)
                    positive = positive and bool(np.all(follow > 0))
            except (ValueError, TypeError, RuntimeError, SolveError):
                continue  # a form the tapes cannot evaluate (e.g. complex constants)
            scored.append((float(ok.mean()), bool(positive), form, value))
        if not scored:
            raise SolveError(f"no real solution for {name}")
        scored.sort(key=lambda s: (s[0], s[1]), reverse=True)
        self.branches[name] = sum(s[0] == 1.0 for s in scored)
        best = scored[0]
        if best[0] == 0.0:
            raise SolveError(f"no real solution for {name} on 100% of the domain")
        if best[0] < 1.0:
            raise SolveError(f"no real solution for {name} on {100 * (1 - best[0]):.0f}% of the domain")
        for other in scored[1:]:
            if (other[0], other[1]) == (best[0], best[1]) and not agree(other[3], best[3], rtol=self.rtol).all():
                raise SolveError(f"ambiguous branch for {name}: {best[2]} or {other[2]}")
        return best[2]

    def solve_numerically(self, equations, names: list[str]) -> None:
        residuals = tuple(lhs - rhs for lhs, rhs in equations)
        given = tuple(sorted(set().union(*(names_of(r) for r in residuals)) - set(names)))
        step = _Numeric(tuple(names), residuals, given)
        if self.points:
            env = self.environment()
            missing = set(given) - env.keys()
            if missing:
                raise SolveError(f"no sample values for {', '.join(sorted(missing))}")
            n = len(next(iter(env.values())))
            solution, converged = solve_block(compile_block(residuals, given, tuple(names)), _stack(env, given, n))
            if not converged.all():
                share = 100 * (1 - converged.mean())
                raise SolveError(f"no real solution for {', '.join(names)} on {share:.0f}% of the domain")
            env.update(zip(names, solution))
        self.plan.append(step)
        self.numeric.update(names)


def _back_substitute(steps: Sequence[tuple[str, se.Basic]], solved: Mapping[str, se.Basic]) -> dict[str, se.Basic]:
    """Closed forms of eliminated unknowns, last eliminated first, from ``solved``.

    Each step's expression holds the unknowns eliminated after it; the result maps
    the names of ``solved`` and of every step (in solving order) to expressions."""
    out = dict(solved)
    for name, expr in reversed(steps):
        mapping = {se.Symbol(k): v for k, v in out.items() if k in names_of(expr)}
        out[name] = expr.xreplace(mapping) if mapping else expr
    return out


@memoized(1 << 10)
def _decomposition(equation_unknowns: tuple[frozenset[str], ...],
                   unknowns: tuple[str, ...]) -> tuple[dict[int, str], list[list[int]]]:
    """The matching of equations to unknowns and, when it fixes every unknown, the blocks
    in solving order (memoised: a task's mechanisms share their structure; the result is
    not to be changed)."""
    matching = match(list(equation_unknowns), list(unknowns))
    complete = len(set(matching.values())) == len(unknowns)
    return matching, blocks(list(equation_unknowns), matching) if complete else []


@memoized(1 << 12)
def _unusable(lhs: se.Basic, rhs: se.Basic) -> tuple[str | None, str | None]:
    """Why the equation ``lhs = rhs`` cannot be solved with: (an unknown function in it,
    it holds identically), each None when not; memoised (a task's submissions share
    most of their equations)."""
    functions = sorted((f for side in (lhs, rhs) for f in subexpressions(side, se.FunctionSymbol)), key=str)
    function = f"unknown function {functions[0].get_name()}" if functions else None
    # x = expr without x in expr is never an identity: no expansion needed
    explicit = any(side.is_Symbol and side.name not in names_of(other) for side, other in ((lhs, rhs), (rhs, lhs)))
    identity = None if explicit or not expand(lhs - rhs).is_zero else \
        f"the equation {lhs} = {rhs} holds identically: it fixes nothing"
    return function, identity


def solve_mechanism(
    equations: Sequence[tuple[se.Basic, se.Basic]],
    *,
    knowns: Collection[str],
    target: str,
    points: Mapping[str, np.ndarray],
    budget: float = DEFAULT_SETTINGS.solve_budget,
    rtol: float = DEFAULT_SETTINGS.rtol,
    solved_blocks: dict | None = None,
    limits: Limits = DEFAULT_LIMITS,
) -> Solution:
    """Eliminate every unknown of ``equations`` and derive the ``target``.

    ``knowns``: names allowed in closed forms (inputs, auxiliary inputs, constants);
    ``points``: sample values of every known over the valid domain, used for branch
    choice, consistency and residual checks and numeric blocks.  Raises
    ``SolveError`` (one line) for under-/over-determined, inconsistent or unsolvable
    systems and ``SolveTimeout`` when ``budget`` seconds are exceeded.  ``rtol``
    (``Settings.rtol``) is the agreement of equation sides and of branches.  ``solved_blocks``:
    a dict shared by solves with the same ``knowns``, ``points`` and ``rtol`` (one batch
    of a task), in which blocks solved in closed form are kept and looked up.  ``limits``
    bounds what substitution and elimination build (``fastscore.solve.growth``): past them,
    and past the budget (checked at each closed form and elimination step), a
    ``SolveError``.  Numba's
    first compilation is not charged to the budget; a garbage-collector pause (which
    grows with the caller's heap) is, unless the caller has paused the collector, as
    the executors and the bulk commands do (``fastscore.support.collector``).
    """
    warm_up()
    started = time.perf_counter()
    known = set(knowns)
    if target in known:
        raise SolveError(f"target {target} is declared as a known")
    problems = []
    for lhs, rhs in equations:
        problems.append(_unusable(lhs, rhs))
        if time.perf_counter() > started + budget:
            raise SolveTimeout(f"solve budget of {budget:g} s exceeded")
    for kind in (0, 1):  # an unknown function anywhere first, then an identity
        for problem in problems:
            if problem[kind] is not None:
                raise SolveError(problem[kind])
    equation_unknowns = [(names_of(lhs) | names_of(rhs)) - known for lhs, rhs in equations]
    unknowns = sorted({target}.union(*equation_unknowns))
    if not any(target in e for e in equation_unknowns):
        raise SolveError(f"under-determined: the target {target} appears in no equation")
    solver = _Solver(known, points, budget, rtol, solved_blocks, limits, started)
    matching, order = _decomposition(tuple(map(frozenset, equation_unknowns)), tuple(unknowns))
    free = set(unknowns) - set(matching.values())
    n_eq, n_un = len(equations), len(unknowns)
    if free:
        raise SolveError(f"under-determined: {n_eq} equations for {n_un} unknowns ({listed(free)} not fixed)")
    extra = [i for i in range(n_eq) if i not in matching]
    for block in order:
        solver.solve_block([equations[i] for i in block], [matching[i] for i in block])
    for i in extra:  # a name fixed by several equations: they must agree
        lhs, rhs = (solver.substitute(side) for side in equations[i])
        if not solver.points and not expand(lhs - rhs).is_zero:
            raise SolveError(f"over-determined: {n_eq} equations for {n_un} unknowns")
        if not solver.consistent(lhs, rhs):
            raise SolveError(f"inconsistent equations: {equations[i][0]} = {equations[i][1]} contradicts the others")
    expressions = {n: e for n, e in solver.closed.items() if n not in solver.numeric}
    if target in expressions:  # the law with its integer roots reduced (10**17**(1/4) as 10000*10**(1/4))
        expressions[target] = reduced_roots(expressions[target])
    return Solution(
        target=target,
        knowns=solver.knowns,
        expressions=expressions,
        law=expressions.get(target),
        _plan=tuple(solver.plan),
        branches=dict(solver.branches),
    )
