"""An SCM hypothesis's equations judged against a GRN task's reference mechanism.

A GRN task (``fastscore.benchmarks.grn``) may give a reference mechanism: one structural
equation per non-root node, ``mechanism: ["Y = 2*X/(1+X)", "Z = X - 0.5*Y"]``, each a
function of that node's parents in the task's ``edges``; the nodes without an equation
are the roots (exogenous inputs), drawn uniformly over ``inputs: {X: [lo, hi]}``
(``DEFAULT_RANGE`` for a root not named).  It is read at load time (``read_mechanism``)
by fastscore's own parser and solved once: a name that is not a node, an equation for a
node twice, a parent that is not an edge, a node with parents and no equation, no root,
a system the solver cannot reduce, a node without a closed form in the roots or not a
finite real number at every sampled point is a clear load error.

The mapping onto fastscore's mechanism scoring: the reference is a mechanism whose
knowns are the roots; every non-root node is a quantity that, the others eliminated
(``fastscore.solve.mechanism.solve_mechanism``), is a function of the roots.  A
submission's ``mechanisms`` (EvoSCM's JSON: ``target``, ``parents``, ``equation``) are
solved the same way, node by node over the equations it depends on, and each node's
function is judged against the reference's by ``fastscore.algebra.equivalence.judge``
on the sampled roots (the numeric screen, certified differences, high precision, the
exact proof; the same tolerances and verdict names as laws: ``proven`` and ``numeric``
are equivalent, ``different`` and ``undecided`` are not).

Rules for a submission's equations (``MechanismJudge``):

- an ``equation`` is ``"Y = f(...)"`` or its right side only; ``parents`` is not
  checked (the equation is what is judged);
- a name in an equation is a task node, a parameter of the submission, or a latent
  variable (in ``variables``, declared unobserved, not a task node nor a parameter): a
  latent variable with a mechanism is an intermediate, eliminated; one without is an
  exogenous noise term, set to 0 (the noise-free mechanism, as the reference is
  noise-free).  A parameter (a key of ``parameters`` or a variable of ``role``
  ``parameter``; ``fastscore.benchmarks.evoscm.parameter_values``) with a finite numeric
  ``estimate`` (or a bare number) is that number, put in as the exact rational of its
  shortest decimal text, as the parser reads a literal; one without (no entry, no
  ``estimate``, not a number, not finite) leaves each equation that uses it unusable,
  with that reason.  A parameter named like a task node is not substituted (the node
  keeps its meaning; the row's ``error`` says so).  Any other name (a typo) makes that
  equation unusable: constants are numbers;
- an equation for a root of the task is not used (the roots are the inputs);
- a mechanism for a name that is neither a task node nor a latent variable, a second
  mechanism for a name, an equation that does not parse or whose left side is another
  name: that mechanism is unusable, the first such reason is the row's ``error``
  (``status`` stays ``ok``; the graph scores stand);
- a non-root node is ``undecided`` when it has no mechanism, its mechanism is unusable,
  it depends on a node or latent variable without a usable mechanism, or its equations
  cannot be solved (``SolveError``, within ``Settings.solve_budget`` and ``Limits``).

An SCM hypothesis's edge without a sign (``edge_signs``) takes the sign of its target's
equation (read as above, every node's equation used) differentiated in its source, when
that sign is the same and the derivative finite at each of ``SIGN_POINTS`` points, each
name of the derivative drawn uniformly over its range (a task root: ``inputs`` or
``DEFAULT_RANGE``; any other name: ``DEFAULT_RANGE``; one fixed seed); otherwise, or
without a usable equation for the target, the edge is bad input with the reason.

This module owns the reference mechanism of a GRN task, the reading of a submission's
equations and the judging of them; ``grn`` calls it only for tasks that have one (the plain-graph
path loads neither SymEngine nor Numba).
"""
from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se

from fastscore.algebra.equivalence import Domain, Quantity, Verdict, judge
from fastscore.benchmarks.base import BadInput
from fastscore.benchmarks.evoscm import hypothesis, parameter_names, parameter_values, submission_data
from fastscore.benchmarks.grn import unobserved
from fastscore.kernels import evaluate
from fastscore.problems.splits import problem_rng
from fastscore.settings import DEFAULT_SETTINGS, Settings
from fastscore.solve.mechanism import SolveError, solve_mechanism
from fastscore.support.caches import memoized
from fastscore.tapes.compile import UnsupportedExpression, compile_tape
from fastscore.text.answers import read_expression
from fastscore.text.parse import parse_equation, parse_expression, symbol
from fastscore.text.tokens import Limits

__all__ = ["DEFAULT_RANGE", "SIGN_POINTS", "MechanismJudge", "MechanismSpec", "edge_signs", "read_equations",
           "read_mechanism"]

DEFAULT_RANGE = (0.1, 10.0)
"""The range a root (exogenous) node is drawn over when ``inputs`` does not name it."""
MAX_REASON = 300
"""Characters kept of ``grn_mech_reason``."""
_POINT_STREAM = 7
"""The stream of ``problem_rng`` the roots are drawn from (the law references use 1)."""
_NONE = "no mechanisms submitted"
"""The reason of a submission without ``mechanisms`` (a graph only: not an error)."""
SIGN_POINTS = 64
"""The points an unsigned edge's sign is read at (``edge_signs``)."""
_SIGN_SEED = 11
"""The seed of those points (one fixed draw: the sign does not depend on the run)."""
_KEPT = 1 << 12
"""At most this many verdicts kept per batch."""


@dataclass(frozen=True)
class MechanismSpec:
    """A task's reference mechanism as read: (node, right side) in the order given, the
    roots (task order) with their ranges, and the judged (non-root) nodes in task order."""

    equations: tuple[tuple[str, str], ...]
    """(node, its equation's text)."""
    roots: tuple[str, ...]
    ranges: tuple[tuple[float, float], ...]
    judged: tuple[str, ...]
    nodes: tuple[str, ...]


def _range(root: str, value) -> tuple[float, float]:
    if not isinstance(value, (list, tuple)) or len(value) != 2 or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
        raise ValueError(f"inputs: {root}: expected [low, high], two numbers")
    low, high = float(value[0]), float(value[1])
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise ValueError(f"inputs: {root}: expected finite low < high, got [{value[0]}, {value[1]}]")
    return low, high


def read_mechanism(data: Mapping, nodes: Sequence[str], edges: frozenset) -> MechanismSpec:
    """A task's ``mechanism`` and ``inputs`` checked and solved once (module doc);
    raises ``ValueError`` with the reason."""
    texts = data.get("mechanism")
    if texts is None:
        raise ValueError("inputs: given without a mechanism")
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise ValueError("mechanism: expected a list of equations 'Node = expression'")
    parents: dict[str, set] = {node: set() for node in nodes}
    for source, target, _ in edges:
        parents[target].add(source)
    equations: dict[str, str] = {}
    for i, text in enumerate(texts):
        try:
            lhs, rhs = parse_equation(text, names=nodes)
        except ValueError as error:
            raise ValueError(f"mechanism[{i}]: {error}") from None
        if not lhs.is_Symbol or lhs.name not in parents:
            raise ValueError(f"mechanism[{i}]: the left side must be one node, got {str(lhs)[:40]!r}")
        node = lhs.name
        if node in equations:
            raise ValueError(f"mechanism[{i}]: a second equation for {node}")
        for name in sorted(s.name for s in rhs.free_symbols):
            if name not in parents[node]:
                raise ValueError(f"mechanism[{i}]: {node}'s equation uses {name}, but the task has no edge "
                                 f"{name} -> {node} or {name} -| {node}")
        equations[node] = text
    for node in nodes:
        if node not in equations and parents[node] - {node}:
            raise ValueError(f"mechanism: {node} has parents in the edges but no equation")
    roots = tuple(node for node in nodes if node not in equations)
    if not roots:
        raise ValueError("mechanism: every node has an equation: no root (exogenous) node to sample")
    inputs = data.get("inputs") or {}
    if not isinstance(inputs, Mapping):
        raise ValueError("inputs: expected a mapping root -> [low, high]")
    for name in inputs:
        if name not in parents:
            raise ValueError(f"inputs: {name} is not a node of the task")
        if name in equations:
            raise ValueError(f"inputs: {name} has an equation: it is not a root")
    spec = MechanismSpec(equations=tuple(equations.items()), roots=roots,
                         ranges=tuple(_range(r, inputs[r]) if r in inputs else DEFAULT_RANGE for r in roots),
                         judged=tuple(node for node in nodes if node in equations), nodes=tuple(nodes))
    reference_of(str(data.get("name") or "task"), spec, DEFAULT_SETTINGS.n_points, DEFAULT_SETTINGS.point_seed,
                 DEFAULT_SETTINGS.rtol, DEFAULT_SETTINGS.solve_budget)
    return spec


@dataclass(frozen=True)
class MechanismReference:
    """The reference side, once per task and settings: the sampled roots (``domain``) and
    each judged node's function of them (``quantities``, with error bounds)."""

    domain: Domain
    points: Mapping[str, np.ndarray]
    quantities: Mapping[str, Quantity]


@memoized(1 << 8)
def reference_of(task_id: str, spec: MechanismSpec, n_points: int, seed: int, rtol: float,
                 budget: float) -> MechanismReference:
    """The reference mechanism solved over its sampled roots (raises ``ValueError``)."""
    rng = problem_rng(task_id, seed, _POINT_STREAM)
    points = np.ascontiguousarray(np.vstack([rng.uniform(low, high, n_points) for low, high in spec.ranges]))
    domain = Domain(names=spec.roots, points=points, sampled=spec.roots,
                    positive=frozenset(r for r, (low, _) in zip(spec.roots, spec.ranges) if low > 0))
    values = dict(zip(spec.roots, points))
    equations = [parse_equation(text, names=spec.nodes) for _, text in spec.equations]
    try:
        solution = solve_mechanism(equations, knowns=spec.roots, target=spec.judged[0], points=values,
                                   budget=budget, rtol=rtol)
    except SolveError as error:
        raise ValueError(f"mechanism: cannot be solved for the non-root nodes: {error}") from None
    quantities = {}
    for node in spec.judged:
        expr = solution.expressions.get(node)
        if expr is None:
            raise ValueError(f"mechanism: {node} has no closed form in the roots ({', '.join(spec.roots)})")
        quantity = Quantity.bounded(expr, domain)
        if not np.isfinite(quantity.values).all():
            raise ValueError(f"mechanism: {node} = {str(expr)[:60]} is not a finite real number at every "
                             "sampled point of the inputs' ranges")
        quantities[node] = quantity
    return MechanismReference(domain=domain, points=values, quantities=quantities)


class _Unusable(ValueError):
    """A submission's mechanisms that cannot be read at all (the row's reason)."""


def read_equations(data: Mapping, order: Sequence[str], roots: frozenset, limits: Limits
                   ) -> tuple[dict[str, se.Basic], dict[str, str]]:
    """A hypothesis's usable equations (name -> right side: parameters' estimates put in,
    noise terms set to 0) and the reasons of its unusable ones (name -> reason, in order),
    over the task's nodes (``order``); an equation for one of ``roots`` is not used.
    Raises ``_Unusable`` when the mechanisms cannot be read at all."""
    nodes = frozenset(order)
    items = data.get("mechanisms")
    if items is None:
        raise _Unusable(_NONE)
    if isinstance(items, Mapping):
        items = [{"target": k, **v} if isinstance(v, Mapping) else {"target": k, "equation": v}
                 for k, v in items.items()]
    if not isinstance(items, list):
        raise _Unusable("mechanisms: expected a list of {target, parents, equation}")
    if len(items) > limits.max_equations:
        raise _Unusable(f"mechanisms: {len(items)} of them, limit {limits.max_equations}")
    parameters, no_value = parameter_values(data)
    named = parameter_names(data)
    equations: dict[str, se.Basic] = {}
    bad: dict[str, str] = {}
    for name in sorted(named & nodes):  # the node keeps its meaning
        bad[f"parameters.{name}"] = f"parameters: {name[:30]} is a node of the task, not a parameter (not substituted)"
    named -= nodes  # a parameter's estimate: the exact rational of its shortest decimal text (as a literal)
    latent = frozenset(n for n in unobserved(data) if isinstance(n, str)) - nodes - named
    values = {}
    for name in sorted(named & parameters.keys()):
        try:
            values[symbol(name)] = parse_expression(repr(parameters[name]), names=(), limits=limits)
        except ValueError as failure:  # the literal is past the parser's limits
            no_value[name] = f"its estimate cannot be read: {str(failure)[:60]}"
            del parameters[name]
    known = (*order, *sorted(latent), *sorted(named))
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("target"), str):
            raise _Unusable(f"mechanisms[{i}]: expected an object with a 'target' name and an 'equation'")
        target, equation = item["target"], item.get("equation")
        where = f"mechanisms[{i}] ({target[:30]})"
        if target not in nodes and target not in latent:
            bad.setdefault(target, f"{where}: neither a node of the task nor a latent variable")
            continue
        if target in equations or target in bad:
            bad[target] = f"{where}: a second mechanism for {target}"
            equations.pop(target, None)
            continue
        if target in roots:
            continue  # a root is an input: its equation is not used
        if not isinstance(equation, str):
            bad[target] = f"{where}: 'equation' must be a text"
            continue
        try:
            rhs = read_expression(equation, target=target, names=known, allow_new_names=True, limits=limits)
        except ValueError as failure:
            bad[target] = f"{where}: {str(failure)[:120]}"
            continue
        names = {s.name for s in rhs.free_symbols}
        unvalued = sorted(names & no_value.keys() - nodes)
        if unvalued:
            name = unvalued[0]
            bad[target] = f"{where}: parameter {name[:30]} has no usable estimate: {no_value[name]}"
            continue
        unknown = sorted(name for name in names if name not in nodes and name not in latent
                         and name not in parameters)
        if unknown:
            bad[target] = (f"{where}: unknown name {', '.join(unknown)[:60]} (not a node of the task, a "
                           "latent variable or a parameter; constants must be numbers)")
            continue
        equations[target] = rhs.xreplace(values) if values and names & parameters.keys() else rhs
    noise = {symbol(name): se.Integer(0) for name in latent if name not in equations and name not in bad}
    if noise:
        equations = {name: rhs.xreplace(noise) for name, rhs in equations.items()}
    return equations, bad


def edge_signs(data: Mapping, unsigned: Sequence[tuple[str, str, str]], nodes: Sequence[str],
               ranges: Mapping[str, tuple[float, float]]) -> list[int]:
    """The sign of each unsigned edge (source, target, where) of an SCM hypothesis: the
    sign of the partial derivative of the target's equation (``read_equations``) in the
    source, when it is the same, and finite, at every one of ``SIGN_POINTS`` points, each
    name of the derivative drawn uniformly over its range (``ranges``: a task root's
    ``inputs``; any other name ``DEFAULT_RANGE``); raises ``BadInput`` naming the edge."""
    try:
        equations, bad = read_equations(data, tuple(nodes), frozenset(), DEFAULT_SETTINGS.limits)
    except _Unusable as failure:
        source, target, where = unsigned[0]
        raise BadInput(f"{where}: edge {source} -> {target} has no sign, and the mechanisms to take it from "
                       f"cannot be read: {failure}") from None
    signs = []
    for source, target, where in unsigned:
        head = f"{where}: edge {source} -> {target} has no sign"
        if target not in equations:
            why = f"its mechanism is unusable ({bad[target]})" if target in bad else "it has no mechanism"
            raise BadInput(f"{head}, and {target} cannot give it: {why}"[:MAX_REASON])
        try:
            derivative = equations[target].diff(symbol(source))
            names = sorted(s.name for s in derivative.free_symbols)
            if not names:
                values = np.full(SIGN_POINTS, float(derivative))
            else:
                rng = np.random.default_rng(_SIGN_SEED)
                points = np.vstack([rng.uniform(*ranges.get(name, DEFAULT_RANGE), SIGN_POINTS) for name in names])
                values = evaluate(compile_tape(derivative, names), np.ascontiguousarray(points))
        except (UnsupportedExpression, RuntimeError, TypeError, ValueError, ArithmeticError) as failure:
            # e.g. abs, sign or relu of the source: SymEngine leaves their derivative unevaluated
            raise BadInput(f"{head}, and the derivative of {target}'s equation in {source} cannot be evaluated: "
                           f"{str(failure)[:80]}") from None
        if np.isfinite(values).all() and ((values > 0).all() or (values < 0).all()):
            signs.append(1 if values[0] > 0 else -1)
            continue
        if not derivative.free_symbols and float(derivative) == 0:
            raise BadInput(f"{head}, and {target}'s equation does not depend on {source}")
        raise BadInput(f"{head}, and the derivative of {target}'s equation in {source} is not of one sign "
                       f"(or not finite) over the sampled values of {', '.join(names)[:60]}")
    return signs


class MechanismJudge:
    """The mechanism columns of one task's batch of submissions: the reference built (or
    taken from the process's memo) once, solved blocks and verdicts kept across the batch."""

    def __init__(self, problem, spec: MechanismSpec, settings: Settings | None):
        self.settings = settings = DEFAULT_SETTINGS if settings is None else settings
        self.spec = spec
        try:
            self.reference, self.failure = reference_of(problem.task_id, spec, settings.n_points, settings.point_seed,
                                                        settings.rtol, settings.solve_budget), None
        except ValueError as error:  # with this run's settings (load time checked the defaults')
            self.reference, self.failure = None, f"the reference mechanism: {error}"
        self.nodes = frozenset(spec.nodes)
        self.roots = frozenset(spec.roots)
        self.blocks: dict = {}    # solve_mechanism's solved_blocks: same knowns, points and rtol
        self.verdicts: dict = {}  # (node, closed form) -> Verdict

    def fields(self, text: str) -> tuple[str | None, dict]:
        """(the row's error or None, the mechanism columns) of one submission's text."""
        try:
            if self.failure is not None:
                raise _Unusable(self.failure)
            equations, bad = self._equations(text)
        except _Unusable as failure:  # no node judged: the one reason
            error = None if self.failure is None and str(failure) == _NONE else str(failure)
            verdicts = {node: Verdict("undecided", str(failure)) for node in self.spec.judged}
            failed = str(failure)
        else:
            error = next(iter(bad.values()), None)
            verdicts = {node: self._verdict(node, equations, bad) for node in self.spec.judged}
            failed = "; ".join(f"{node}: {v.provenance}: {v.reason}" for node, v in verdicts.items()
                               if not v.equivalent)
        equal = sum(v.equivalent for v in verdicts.values())
        return error, {"grn_mech_equivalent": equal, "grn_mech_share": equal / len(verdicts),
                       "grn_mech_all": equal == len(verdicts),
                       "grn_mech_verdicts": json.dumps({node: v.provenance for node, v in verdicts.items()}),
                       "grn_mech_reason": failed[:MAX_REASON] or None}

    def _equations(self, text: str) -> tuple[dict[str, se.Basic], dict[str, str]]:
        """The submission's usable equations (name -> right side, noise terms set to 0) and
        the reasons of its unusable ones (name -> reason, in order)."""
        try:
            data = submission_data(text)
            data = hypothesis(data) if isinstance(data, Mapping) else None
        except BadInput:  # the graph's reading has already said why
            raise _Unusable(_NONE) from None
        if data is None or data.get("mechanisms") is None:
            raise _Unusable(_NONE)
        return read_equations(data, self.spec.nodes, self.roots, self.settings.limits)

    def _verdict(self, node: str, equations: Mapping[str, se.Basic], bad: Mapping[str, str]) -> Verdict:
        """The verdict of one judged node: its function of the roots from the equations it
        depends on, against the reference's."""
        if node in bad:
            return Verdict("undecided", bad[node])
        if node not in equations:
            return Verdict("undecided", "no mechanism")
        needed, todo = [], [node]
        while todo:
            name = todo.pop()
            if name in needed:
                continue
            if name not in equations:
                why = "its mechanism is unusable" if name in bad else "it has no mechanism"
                return Verdict("undecided", f"depends on {name}, but {why}")
            needed.append(name)
            todo += [s.name for s in equations[name].free_symbols if s.name not in self.roots]
        reference, settings = self.reference, self.settings
        try:
            solution = solve_mechanism([(symbol(name), equations[name]) for name in needed], knowns=self.spec.roots,
                                       target=node, points=reference.points, budget=settings.solve_budget,
                                       rtol=settings.rtol, solved_blocks=self.blocks, limits=settings.limits)
            expr = solution.expressions.get(node)
            values = None if expr is not None else solution.values([node], reference.points)[node]
        except (SolveError, ValueError, TypeError, RuntimeError, KeyError, ArithmeticError) as failure:
            return Verdict("undecided", f"cannot solve: {str(failure)[:120]}")
        expected = reference.quantities[node]
        if expr is None:  # solved numerically only: judged by its values
            return judge(Quantity(None, values), expected, domain=reference.domain, settings=settings)
        key = (node, expr)
        verdict = self.verdicts.get(key)
        if verdict is None:
            try:
                tape = compile_tape(expr, reference.domain.names)
            except UnsupportedExpression as failure:
                return Verdict("undecided", f"cannot evaluate: {str(failure)[:120]}")
            verdict = judge(Quantity(expr, evaluate(tape, reference.domain.points), tape), expected,
                            domain=reference.domain, settings=settings)
            if len(self.verdicts) < _KEPT:
                self.verdicts[key] = verdict
        return verdict
