#!/usr/bin/env python3
"""Synthetic sweeps with planted truth, of any size, for tests and benchmarks.

    python scripts/make_sweep.py --problems DIR --out FILE.parquet --rows N
        [--configs K] [--runs R] [--duplicate-rate 0.6] [--seed S]

Every row is one submission to one (config, run, task) cell, each cell at most once.
Besides the sweep columns (``config, run, task, phenomenal, mechanism, probes``) each
row carries what fastscore should find (the planted truth) and two ordinary extra
columns that fastscore carries through:

| column | meaning |
|---|---|
| ``planted_status`` | ``ok``, or ``parse_error`` for malformed and hostile rows |
| ``planted_p`` | expected ``p_equivalent`` (False for parse errors) |
| ``planted_m`` | expected ``m_correct``: null for a problem without probes, else every probe answered right |
| ``planted_kind`` | ``correct_rewrite``, ``decimal_constants``, ``fitted_constant``, ``wrong``, ``near_miss``, ``mechanism``, ``shuffled_mechanism``, ``wrong_mechanism``, ``malformed``, ``hostile`` |
| ``planted_detail`` | how the text was made (the transformations applied, the mutation, the probe answers) |
| ``wall_time_s``, ``tokens`` | plausible agent cost (log-normal draws), carried through to ``scores.parquet`` |

**Why the truths hold.** Correct texts are the reference law text after
transformations that leave the expression unchanged: ``(k/k)*(rhs)``; swapping the
first two operands of a top-level product (or sum) when the operator between them is
``*`` (``+``) and nothing binds tighter; ``**`` ↔ ``^`` (the grammar reads ``^`` as
power); ``sqrt(X)`` → ``((X)**0.5)`` (decimals are exact rationals, so ``0.5`` is
1/2 and this is the same expression); dropping or keeping ``y =``.
``decimal_constants`` writes every declared constant (and ``pi``) and every decimal
literal with 17 significant digits (a relative change below 1e-16, far inside rtol
1e-6); ``fitted_constant`` multiplies by ``1 ± e`` with ``e`` in [1e-10, 1e-8].
Wrong texts: a numeric exponent changed (``n`` → ``n+1``, ``1/k`` → ``1/(k+1)``; an
input ``x`` → ``x**2`` when there is none), a term of the first sum dropped, a factor 2,
a sign, each kept for a task only if it changes the law by more than 1e-4 (relative)
at 10% or more of 512 points drawn over the whole domain (``DifferenceCheck``: a
dropped term can be negligible, and then fastscore is right to call the laws
equivalent); ``near_miss`` is the law times ``1 ± d`` with ``d`` in [1e-3, 3e-3], a relative
error 1000 times rtol at every point. Mechanisms are the reference equations (in order,
or shuffled with every intermediate renamed); ``wrong_mechanism`` scales by 2, 3 or 1/2
the right side of the equation defining the target (``target = ...``: the law is then
that factor times the reference law, different by construction; scaling the last
equation merely holding the target can change nothing, as when it defines a quantity
downstream of the target, ``delta_b = L*eps_T - F*L/(A_b*E_T)``); when the target has
no such equation (an implicit system), the last equation holding it is scaled and the
law fastscore's solver derives from the result must differ as a wrong formula must
(``DifferenceCheck``), else the next factor and the earlier equations are tried, and a
problem where none differs gets a ``wrong`` formula instead. Probe answers (problems whose
probes state a formula) are the reference probe formula, rewritten as above, or a wrong
one (times 2, or times ``1 ± d``). The truth-preserving rewrites are also applied on top
of wrong formulas, which stay wrong.

**Duplicates.** Agents converge on the same answers: the same text recurs across runs
and configurations (the textbook law, verbatim, above all). A row repeats, with
probability ``duplicate_rate`` (default 0.6), a submission already given to the same
task in another cell (drawn from a reservoir of up to 512 recent distinct submissions
per task); otherwise a new distinct submission is made. The realised rate (rows whose
(task, phenomenal, mechanism, probes) was already seen) is returned in the stats; it
is a little lower than the parameter in small sweeps, since the first row of every task
is new (300 rows over 72 tasks: about 0.47), and within 0.01 of it from about 30 rows
per task on. The default 0.6 is an assumption, not a measurement: with several runs per
configuration and several configurations per model family, easy tasks get the textbook
law verbatim again and again and hard ones rarely repeat; 0.6 sits between.

**Grid growth.** The grid is ``configs × runs × tasks``; ``rows`` cells are drawn from it
without replacement and written sorted by (config, run, task). When ``rows`` exceeds
the grid, both axes grow by the same factor: ``configs ← ceil(configs·√f)`` with
``f = rows / (configs·runs·tasks)``, then ``runs ← ceil(rows / (configs·tasks))``.

Output is deterministic for a seed, written in chunks through
``pyarrow.parquet.ParquetWriter`` (memory bounded by the chunk size plus one 8-byte
digest per distinct submission).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import symengine as se

from fastscore.problems.formats import load_problems
from fastscore.problems.model import Problem
from fastscore.solve.mechanism import SolveError, solve_mechanism
from fastscore.support.collector import paused
from fastscore.text.answers import split_equations
from fastscore.text.parse import parse_equation, parse_expression, symbol

__all__ = ["Submission", "SweepStats", "DifferenceCheck", "KIND_WEIGHTS", "grid_shape", "make_submission", "generate_rows",
           "write_sweep", "main"]

SCHEMA = pa.schema([
    ("config", pa.string()), ("run", pa.int64()), ("task", pa.string()),
    ("phenomenal", pa.string()), ("mechanism", pa.string()), ("probes", pa.string()),
    ("planted_status", pa.string()), ("planted_p", pa.bool_()), ("planted_m", pa.bool_()),
    ("planted_kind", pa.string()), ("planted_detail", pa.string()),
    ("wall_time_s", pa.float64()), ("tokens", pa.int64()),
])
# Share of new (non-repeated) submissions of each kind.
KIND_WEIGHTS = {
    "correct_rewrite": 0.22, "decimal_constants": 0.06, "fitted_constant": 0.06, "wrong": 0.16,
    "near_miss": 0.08, "mechanism": 0.08, "shuffled_mechanism": 0.10, "wrong_mechanism": 0.06,
    "malformed": 0.14, "hostile": 0.04,
}
RESERVOIR = 512  # distinct submissions kept per task for repeats
PROBE_SHARE = 0.6  # share of rows of a problem with probes that answer the probes
CHUNK_ROWS = 50_000


@dataclass(frozen=True)
class Submission:
    """One submission's texts and its planted truth."""
    kind: str
    detail: str
    phenomenal: str | None = None
    mechanism: str | None = None
    probes: str | None = None
    status: str = "ok"
    p: bool = False
    m: bool | None = None


@dataclass
class SweepStats:
    """What a generated sweep holds."""
    rows: int = 0
    configs: int = 0
    runs: int = 0
    tasks: int = 0
    distinct: int = 0
    kinds: dict = field(default_factory=dict)

    @property
    def duplicate_rate(self) -> float:
        """Share of rows repeating a submission (same task and texts) seen earlier in the sweep."""
        return 1 - self.distinct / self.rows if self.rows else 0.0


# --- a small tokenizer for text rewrites ------------------------------------------------

_TOKEN_RE = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[^\W\d]\w*)"
                       r"|(?P<op>\*\*|[-+*/^(),=]))")


@dataclass(frozen=True)
class _Token:
    kind: str  # num | name | op
    text: str
    start: int
    end: int


def _tokens(text: str) -> list[_Token]:
    """Tokens of a well-formed formula (the reference texts); raises on anything else."""
    out, position = [], 0
    while position < len(text):
        if text[position:].isspace():
            break
        match = _TOKEN_RE.match(text, position)
        if not match:
            raise ValueError(f"cannot tokenize {text!r} at {position}")
        kind = match.lastgroup
        out.append(_Token(kind, match.group(kind), match.start(kind), match.end()))
        position = match.end()
    return out


def _binary(tokens: list[_Token], i: int) -> bool:
    """Whether the +/- at index i is a binary operator (not a sign)."""
    return i > 0 and (tokens[i - 1].kind in ("num", "name") or tokens[i - 1].text == ")")


def _top_level(tokens: list[_Token], lo: int, hi: int) -> list[int]:
    """Indices of tokens in [lo, hi) at parenthesis depth 0 relative to lo."""
    depth, out = 0, []
    for i in range(lo, hi):
        text = tokens[i].text
        if text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
        elif depth == 0:
            out.append(i)
    return out


def _matching(tokens: list[_Token], i: int) -> int:
    """Index of the ')' closing the '(' at index i."""
    depth = 0
    for j in range(i, len(tokens)):
        depth += {"(": 1, ")": -1}.get(tokens[j].text, 0)
        if depth == 0:
            return j
    raise ValueError("unbalanced parentheses")


def split_law(law: str) -> tuple[str, str]:
    """``'y = expr'`` -> ``('y', 'expr')``."""
    lhs, rhs = law.split("=", 1)
    return lhs.strip(), rhs.strip()


# --- truth-preserving rewrites of an expression text -------------------------------------

def swap_operands(rhs: str) -> str | None:
    """Swap the first two operands of the top-level product (``a*b/c`` -> ``b*a/c``), or of
    the top-level sum when there is no product (``a + b - c`` -> ``b + a - c``)."""
    tokens = _tokens(rhs)
    if not tokens or tokens[0].text in "+-":
        return None
    top = _top_level(tokens, 0, len(tokens))
    sums = [i for i in top if tokens[i].text in "+-" and _binary(tokens, i)]
    if not sums:
        ops = [i for i in top if tokens[i].text in ("*", "/")]
        if not ops or tokens[ops[0]].text != "*":
            return None
        cut = ops[0]
        stop = ops[1] if len(ops) > 1 else len(tokens)
    else:
        cut = sums[0]
        if tokens[cut].text != "+":
            return None
        stop = sums[1] if len(sums) > 1 else len(tokens)
    first = rhs[tokens[0].start:tokens[cut - 1].end]
    second = rhs[tokens[cut + 1].start:tokens[stop - 1].end]
    if not second or second[0] in "+-":
        return None
    rest = rhs[tokens[stop - 1].end:]
    return f"{second} {tokens[cut].text} {first}{rest}"


def swap_power_operator(text: str) -> str | None:
    """``**`` -> ``^`` (or ``^`` -> ``**`` when the text has no ``**``)."""
    if "**" in text:
        return text.replace("**", "^")
    if "^" in text:
        return text.replace("^", "**")
    return None


def sqrt_as_power(text: str) -> str | None:
    """Every ``sqrt(X)`` -> ``((X)**0.5)``."""
    changed = False
    while True:
        tokens = _tokens(text)
        at = next((i for i, t in enumerate(tokens[:-1]) if t.text == "sqrt" and tokens[i + 1].text == "("), None)
        if at is None:
            return text if changed else None
        close = _matching(tokens, at + 1)
        inner = text[tokens[at + 1].end:tokens[close].start]
        text = f"{text[:tokens[at].start]}(({inner})**0.5){text[tokens[close].end:]}"
        changed = True


def identity_factor(rhs: str, k: int) -> str:
    """``(k/k)*(rhs)``."""
    return f"({k}/{k})*({rhs})"


def decimal_constants(rhs: str, problem: Problem) -> str | None:
    """Declared constants (and ``pi``/``π``) and decimal literals written with 17 significant digits."""
    values = {c.name: c.value for c in problem.constants}
    declared = {v.name for v in problem.observed} | {problem.target.name}
    for name in ("pi", "π"):
        if name not in declared:
            values.setdefault(name, math.pi)
    out, last, changed = [], 0, False
    for token in _tokens(rhs):
        value = None
        if token.kind == "name" and token.text in values:
            value = values[token.text]
        elif token.kind == "num" and not token.text.isdigit():
            value = float(token.text)
        if value is not None:
            written = format(value, ".17g")
            out.append(rhs[last:token.start] + (f"({written})" if value < 0 else written))
            last, changed = token.end, True
    return "".join(out) + rhs[last:] if changed else None


SAFE_REWRITES: dict[str, Callable[[str], str | None]] = {
    "sqrt_power": sqrt_as_power, "swap": swap_operands, "caret": swap_power_operator,
}


def _rewrite(rhs: str, rng: random.Random, *, p: float = 0.5) -> tuple[str, list[str]]:
    """Apply each safe rewrite with probability ``p``; also ``(k/k)*`` with probability ``p``."""
    applied = []
    for name, rewrite in SAFE_REWRITES.items():
        if rng.random() < p and (new := rewrite(rhs)) is not None:
            rhs = new
            applied.append(name)
    if rng.random() < p:
        k = 2 if rng.random() < 0.3 else rng.randint(3, 999)
        rhs = identity_factor(rhs, k)
        applied.append(f"identity({k})")
    return rhs, applied


def _law_text(lhs: str, rhs: str, rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.2:
        return rhs, "bare"
    return f"{lhs} = {rhs}", "equation"


# --- wrong formulas ------------------------------------------------------------------------

def change_exponent(rhs: str, problem: Problem) -> str | None:
    """The first numeric exponent changed (``n`` -> ``n+1``, ``(1/k)`` -> ``(1/(k+1))``); with no
    numeric exponent, the first input ``x`` becomes ``(x**2)``."""
    tokens = _tokens(rhs)
    for i, token in enumerate(tokens[:-1]):
        if token.text not in ("**", "^"):
            continue
        nxt = tokens[i + 1]
        if nxt.kind == "num":
            new = str(int(nxt.text) + 1) if nxt.text.isdigit() else format(float(nxt.text) + 1, "g")
            return rhs[:nxt.start] + new + rhs[nxt.end:]
        if (nxt.text == "(" and i + 5 < len(tokens) and tokens[i + 2].text == "1" and tokens[i + 3].text == "/"
                and tokens[i + 4].kind == "num" and tokens[i + 4].text.isdigit() and tokens[i + 5].text == ")"):
            k = tokens[i + 4]
            return rhs[:k.start] + f"({int(k.text) + 1})" + rhs[k.end:]
    inputs = {v.name for v in problem.inputs}
    for token in tokens:
        if token.kind == "name" and token.text in inputs:
            return rhs[:token.start] + f"({token.text}**2)" + rhs[token.end:]
    return None


def drop_term(rhs: str) -> str | None:
    """The second term of the first sum (top level, else the first parenthesised sum) dropped."""
    tokens = _tokens(rhs)
    groups = [(0, len(tokens))] + [(i + 1, _matching(tokens, i)) for i, t in enumerate(tokens) if t.text == "("]
    for lo, hi in groups:
        top = _top_level(tokens, lo, hi)
        sums = [i for i in top if tokens[i].text in "+-" and _binary(tokens, i)]
        if sums:
            start = sums[0]
            stop = sums[1] if len(sums) > 1 else hi
            end = tokens[stop].start if stop < len(tokens) else len(rhs)
            return rhs[:tokens[start].start].rstrip() + (" " if stop < hi else "") + rhs[end:]
    return None


class DifferenceCheck:
    """Whether a mutated law really differs from the reference beyond tolerance.

    A mutation can be invisible: dropping ``- w**2*r**3`` from ``G*M - w**2*r**3`` changes
    nothing when ``w**2*r**3`` is 1e-27 of ``G*M`` on the whole domain, and fastscore
    rightly calls the two equivalent (within rtol). So each mutated text is evaluated
    (parsed by ``fastscore.text.parse``, evaluated by SymEngine, not by fastscore's scorer) at
    ``POINTS`` points drawn over every input's whole range ``[min, max)``, and kept only
    if it differs by more than ``RTOL`` (100 times fastscore's default rtol) or in being
    defined at ``SHARE`` of them at least. Results are cached per (task, text)."""

    POINTS, RTOL, SHARE = 512, 1e-4, 0.1

    def __init__(self):
        self._points: dict[str, np.ndarray] = {}
        self._cache: dict[tuple[str, str], bool] = {}
        self._reference: dict[tuple[str, str], np.ndarray] = {}

    def differs(self, problem: Problem, rhs: str, mutated: str) -> bool:
        key = (problem.task_id, mutated)
        if key not in self._cache:
            self._cache[key] = self._differs(problem, rhs, mutated)
        return self._cache[key]

    def _values(self, problem: Problem, text: str):
        expr = parse_expression(text, names=problem.known_names)
        expr = expr.subs({symbol(c.name): c.value for c in problem.constants})
        names = [v.name for v in problem.observed]
        if problem.task_id not in self._points:
            seed = int.from_bytes(hashlib.blake2b(problem.task_id.encode(), digest_size=8).digest(), "little")
            draw = np.random.default_rng(seed)
            columns = []
            for variable in problem.observed:
                s = variable.sampling
                if s.distribution == "log_uniform":
                    columns.append(np.exp(draw.uniform(math.log(s.min), math.log(s.max), self.POINTS)))
                else:
                    columns.append(draw.uniform(s.min, s.max, self.POINTS))
            self._points[problem.task_id] = np.column_stack(columns)
        function = se.Lambdify([symbol(n) for n in names], [expr], real=True, backend="lambda")
        with np.errstate(all="ignore"):
            return np.asarray(function(self._points[problem.task_id]), dtype=float).reshape(-1)

    def mechanism_differs(self, problem: Problem, mechanism: str) -> bool:
        """Whether the law fastscore's solver derives from ``mechanism`` differs from the
        reference law (as ``differs``); False when it cannot be solved."""
        key = (problem.task_id, "mechanism:" + mechanism)
        if key not in self._cache:
            rhs = split_law(problem.law)[1]
            try:
                self._cache[key] = self._compare(self._reference_values(problem, rhs),
                                                 self._mechanism_values(problem, mechanism))
            except SolveError:
                self._cache[key] = False
        return self._cache[key]

    def _mechanism_values(self, problem: Problem, mechanism: str):
        constants = {symbol(c.name): c.value for c in problem.constants}
        names = (*problem.known_names, problem.target.name)
        equations = [parse_equation(text, names=names, allow_new_names=True) for text in split_equations(mechanism)]
        equations = [(lhs.subs(constants), rhs.subs(constants)) for lhs, rhs in equations]
        self._values(problem, split_law(problem.law)[1])  # draws the points
        columns = self._points[problem.task_id]
        points = {v.name: columns[:, i] for i, v in enumerate(problem.observed)}
        with paused():  # as the executors do (fastscore.support.collector)
            solution = solve_mechanism(equations, knowns=problem.known_names, target=problem.target.name,
                                       points=points, budget=10.0)
        return np.asarray(solution.values([problem.target.name], points)[problem.target.name], dtype=float)

    def _reference_values(self, problem: Problem, rhs: str):
        if (problem.task_id, rhs) not in self._reference:
            self._reference[(problem.task_id, rhs)] = self._values(problem, rhs)
        return self._reference[(problem.task_id, rhs)]

    def _differs(self, problem: Problem, rhs: str, mutated: str) -> bool:
        return self._compare(self._reference_values(problem, rhs), self._values(problem, mutated))

    def _compare(self, a, b) -> bool:
        finite_a, finite_b = np.isfinite(a), np.isfinite(b)
        with np.errstate(all="ignore"):
            far = np.abs(a - b) > self.RTOL * np.maximum(np.abs(a), np.abs(b))
        mismatch = (finite_a != finite_b) | (finite_a & finite_b & far)
        return bool(mismatch.mean() >= self.SHARE)


def _wrong(rhs: str, problem: Problem, rng: random.Random, check: DifferenceCheck) -> tuple[str, str]:
    """(mutation name, wrong text): a mutation that changes the law beyond tolerance."""
    options = [("exponent", change_exponent(rhs, problem)), ("dropped_term", drop_term(rhs)),
               ("factor_2", f"2*({rhs})"), ("sign", f"-({rhs})")]
    options = [(name, text) for name, text in options if text is not None and check.differs(problem, rhs, text)]
    weights = [3 if name in ("exponent", "dropped_term") else 1 for name, _ in options]
    return rng.choices(options, weights)[0]


def _off_by(rng: random.Random, low: float, high: float) -> str:
    """A factor ``1 ± d``, ``d`` uniform in [low, high], with 17 significant digits."""
    return format(1 + rng.choice((-1, 1)) * rng.uniform(low, high), ".17g")


# --- mechanisms ----------------------------------------------------------------------------

_NAME_RE = re.compile(r"[^\W\d]\w*")


def rename_names(text: str, renames: dict[str, str]) -> str:
    """Whole-name replacement in a formula text."""
    return _NAME_RE.sub(lambda m: renames.get(m.group(0), m.group(0)), text)


def _renames(problem: Problem, rng: random.Random) -> dict[str, str]:
    keep = set(problem.known_names) | {problem.target.name}
    taken = keep | {v.name for v in problem.intermediates}
    for equation in problem.mechanism:
        taken |= set(_NAME_RE.findall(equation.text))
    suffix = rng.choice(("h", "q", "int", "aux", "m"))
    renames = {}
    for variable in problem.intermediates:
        if variable.name in keep:
            continue
        new, n = f"{variable.name}_{suffix}", 1
        while new in taken:
            n += 1
            new = f"{variable.name}_{suffix}{n}"
        renames[variable.name] = new
        taken.add(new)
    return renames


def _scaled_target(problem: Problem, equations: list[str], rng: random.Random,
                   check: DifferenceCheck) -> tuple[list[str], str] | None:
    """``equations`` with a right side scaled so that the derived law is wrong (see the
    module doc), and the detail; None when no scaling changes the law."""
    target = problem.target.name
    sides = [text.split("=", 1) for text in equations]
    defining = [i for i, (lhs, _) in enumerate(sides) if lhs.strip() == target]
    holding = [i for i, text in enumerate(equations) if target in _NAME_RE.findall(text)]
    factors = rng.sample(("2", "3", "0.5"), 3)
    for at in defining[-1:] or holding[::-1]:
        for factor in factors[:1] if defining else factors:
            scaled = list(equations)
            scaled[at] = f"{sides[at][0].strip()} = {factor}*({sides[at][1].strip()})"
            if defining or check.mechanism_differs(problem, "\n".join(scaled)):
                return scaled, f"scaled({at},{factor})"
    return None


def _mechanism(problem: Problem, kind: str, rng: random.Random, check: DifferenceCheck) -> tuple[str, str] | None:
    """A mechanism text and its detail; None when no wrong mechanism can be made."""
    equations = [e.text for e in problem.mechanism]
    details = []
    if kind == "shuffled_mechanism":
        renames = _renames(problem, rng)
        equations = [rename_names(text, renames) for text in equations]
        order = list(range(len(equations)))
        while len(order) > 1 and order == sorted(order):
            rng.shuffle(order)
        equations = [equations[i] for i in order]
        details.append("shuffled+renamed")
    if kind == "wrong_mechanism":
        scaled = _scaled_target(problem, equations, rng, check)
        if scaled is None:
            return None
        equations, detail = scaled
        details.append(detail)
    # a rewrite of one equation's right side, for variety; the equations stay equal
    at = rng.randrange(len(equations))
    lhs, rhs = equations[at].split("=", 1)
    new, applied = _rewrite(rhs.strip(), rng, p=0.4)
    if applied:
        equations[at] = f"{lhs.strip()} = {new}"
        details.append(f"eq{at}:" + "+".join(applied))
    separator = rng.choice(("\n", "; "))
    return separator.join(equations), ",".join(details) or "verbatim"


# --- probes --------------------------------------------------------------------------------

def _probe_answers(problem: Problem, rng: random.Random) -> tuple[str | None, bool | None, str]:
    """JSON probe answers (or None), the expected ``m_correct``, and a description."""
    if not problem.probes:
        return None, None, ""
    stated = [p for p in problem.probes if p.formula]
    if not stated or rng.random() >= PROBE_SHARE:
        return None, False, "probes:none"
    answers, right, details = {}, len(stated) == len(problem.probes), []
    for probe in stated:
        rhs = split_law(probe.formula)[1] if "=" in probe.formula else probe.formula
        roll = rng.random()
        if roll < 0.6:
            answers[probe.name] = _rewrite(rhs, rng)[0]
            details.append(f"{probe.name}:right")
        elif roll < 0.9:
            factor = "2" if rng.random() < 0.5 else _off_by(rng, 1e-3, 3e-3)
            answers[probe.name] = f"{factor}*({rhs})"
            right = False
            details.append(f"{probe.name}:wrong")
        else:
            answers[probe.name] = f"({rhs}"
            right = False
            details.append(f"{probe.name}:malformed")
    return json.dumps(answers, ensure_ascii=False), right, "probes:" + ",".join(details)


# --- malformed and hostile texts --------------------------------------------------------------

def _malformed(problem: Problem, rng: random.Random) -> tuple[str | None, str | None, str]:
    """(phenomenal, mechanism, detail) of a submission fastscore must reject as a parse error."""
    lhs, rhs = split_law(problem.law)
    n = rng.randint(1, 10**6)
    options = [
        (f"{lhs} = {rhs} * zq_unknown{n}", None, "unknown_name"),
        (f"{lhs} = ({rhs}", None, "unbalanced_open"),
        (f"{lhs} = {rhs})", None, "unbalanced_close"),
        ("", None, "empty"),
        (f"{lhs} =", None, "empty_rhs"),
        (f"{lhs} = {rhs} *", None, "trailing_operator"),
        (f"{lhs} = frobnicate{n % 97}({rhs})", None, "unknown_function"),
        (None, "\n".join(e.text for e in problem.mechanism) + f"\n{lhs} {rhs}", "mechanism_no_equals"),
    ]
    return rng.choice(options)


def _hostile(problem: Problem, rng: random.Random) -> tuple[str | None, str | None, str]:
    lhs = problem.target.name
    x = problem.inputs[0].name
    n = rng.randint(1, 10**6)
    options = [
        (f"{lhs} = __import__('os').system('echo {n}')", None, "import"),
        (f"{lhs} = {x}.__class__.__mro__[{n % 7}]", None, "dunder"),
        (f"{lhs} = (lambda: {n})()", None, "lambda"),
        (f"{lhs} = 9**9**9**{9 + n % 5}", None, "power_tower"),
        (f"{lhs} = {x}**{1001 + n}", None, "huge_exponent"),
        (f"{lhs} = 1e{400 + n}", None, "huge_literal"),
        (f"{lhs} = " + "(" * (65 + n % 500) + x + ")" * (65 + n % 500), None, "deep_nesting"),
        (f"{lhs} = " + "+".join([x] * (2001 + n % 1000)), None, "too_long"),
        (f"{lhs} = {x}; DROP TABLE scores; -- {n}", None, "sql"),
        (f"{lhs} = {x}\x00{n}", None, "nul_byte"),
        (None, "; ".join(f"h{i} = {x} + {i}" for i in range(65 + n % 10)) + f"; {lhs} = h0", "too_many_equations"),
    ]
    return rng.choice(options)


# --- one submission ----------------------------------------------------------------------------

def make_submission(problem: Problem, kind: str, rng: random.Random, *,
                    check: DifferenceCheck | None = None) -> Submission:
    """A new submission of ``kind`` to ``problem`` with its planted truth; ``check`` caches
    the verification of wrong formulas across calls."""
    lhs, rhs = split_law(problem.law)
    if kind in ("malformed", "hostile"):
        phenomenal, mechanism, detail = (_malformed if kind == "malformed" else _hostile)(problem, rng)
        m = None if not problem.probes else False
        return Submission(kind, detail, phenomenal, mechanism, None, status="parse_error", p=False, m=m)
    probes, m, probe_detail = _probe_answers(problem, rng)
    check = check or DifferenceCheck()
    made = _mechanism(problem, kind, rng, check) if kind in ("mechanism", "shuffled_mechanism",
                                                               "wrong_mechanism") else None
    if made is not None:
        mechanism, detail = made
        return Submission(kind, _join(detail, probe_detail), None, mechanism, probes,
                          p=kind != "wrong_mechanism", m=m)
    if kind == "wrong_mechanism":  # no scaling changes this problem's law: a wrong formula instead
        kind = "wrong"
    details = []
    if kind == "correct_rewrite":
        p = True
    elif kind == "decimal_constants":
        p, rhs = True, decimal_constants(rhs, problem) or rhs
        details.append("decimals")
    elif kind == "fitted_constant":
        p, rhs = True, f"{_off_by(rng, 1e-10, 1e-8)}*({rhs})"
        details.append("fitted")
    elif kind == "near_miss":
        p, rhs = False, f"{_off_by(rng, 1e-3, 3e-3)}*({rhs})"
        details.append("off_1e-3")
    elif kind == "wrong":
        p = False
        mutation, rhs = _wrong(rhs, problem, rng, check)
        details.append(mutation)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    rhs, applied = _rewrite(rhs, rng)
    phenomenal, form = _law_text(lhs, rhs, rng)
    detail = "+".join(details + applied + [form])
    return Submission(kind, _join(detail, probe_detail), phenomenal, None, probes, p=p, m=m)


def _join(*parts: str) -> str:
    return ";".join(part for part in parts if part)


# --- the sweep -------------------------------------------------------------------------------

def grid_shape(rows: int, configs: int, runs: int, tasks: int) -> tuple[int, int]:
    """(configs, runs), grown by the same factor when ``rows`` exceeds the grid."""
    if rows <= configs * runs * tasks:
        return configs, runs
    growth = rows / (configs * runs * tasks)
    configs = math.ceil(configs * math.sqrt(growth))
    return configs, math.ceil(rows / (configs * tasks))


def _digest(task: str, s: Submission) -> bytes:
    text = "\x1f".join((task, s.phenomenal or "", s.mechanism or "", s.probes or ""))
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()


def generate_rows(problems: Sequence[Problem], *, rows: int, configs: int = 4, runs: int = 3,
                  duplicate_rate: float = 0.6, seed: int = 0, chunk_rows: int = CHUNK_ROWS,
                  stats: SweepStats | None = None) -> Iterator[dict[str, list]]:
    """The sweep as column chunks (dicts of lists, at most ``chunk_rows`` rows each),
    sorted by (config, run, task). ``stats``, if given, is filled in as chunks are made."""
    if not problems:
        raise ValueError("no problems")
    if rows < 1 or not 0 <= duplicate_rate < 1:
        raise ValueError("need rows >= 1 and 0 <= duplicate_rate < 1")
    stats = stats if stats is not None else SweepStats()
    tasks = len(problems)
    configs, runs = grid_shape(rows, configs, runs, tasks)
    stats.configs, stats.runs, stats.tasks = configs, runs, tasks
    rng = random.Random(seed)
    cells = sorted(rng.sample(range(configs * runs * tasks), rows))
    kinds, weights = list(KIND_WEIGHTS), list(KIND_WEIGHTS.values())
    width = len(str(configs - 1))
    reservoirs: dict[int, list[Submission]] = {}
    seen: set[bytes] = set()
    check = DifferenceCheck()
    for lo in range(0, rows, chunk_rows):
        chunk = {name: [] for name in SCHEMA.names}
        for cell in cells[lo:lo + chunk_rows]:
            config, rest = divmod(cell, runs * tasks)
            run, t = divmod(rest, tasks)
            problem = problems[t]
            pool = reservoirs.setdefault(t, [])
            submission = None
            if pool and rng.random() < duplicate_rate:
                submission = rng.choice(pool)
            else:
                for _ in range(8):  # a new submission, distinct when the kind allows it
                    submission = make_submission(problem, rng.choices(kinds, weights)[0], rng, check=check)
                    if _digest(problem.task_id, submission) not in seen:
                        break
                if len(pool) < RESERVOIR:
                    pool.append(submission)
                else:
                    pool[rng.randrange(RESERVOIR)] = submission
            digest = _digest(problem.task_id, submission)
            if digest not in seen:
                seen.add(digest)
                stats.distinct += 1
            stats.rows += 1
            stats.kinds[submission.kind] = stats.kinds.get(submission.kind, 0) + 1
            values = (f"cfg-{config:0{width}d}", run, problem.task_id, submission.phenomenal or None,
                      submission.mechanism, submission.probes, submission.status, submission.p, submission.m,
                      submission.kind, submission.detail, round(rng.lognormvariate(math.log(40), 0.8), 2),
                      int(rng.lognormvariate(math.log(6000), 0.7)))
            for name, value in zip(SCHEMA.names, values):
                chunk[name].append(value)
        yield chunk


def write_sweep(problems: str | Path | Sequence[Problem], out: str | Path, *, rows: int, configs: int = 4,
                runs: int = 3, duplicate_rate: float = 0.6, seed: int = 0,
                chunk_rows: int = CHUNK_ROWS) -> SweepStats:
    """Write a synthetic sweep with planted truth to the Parquet file ``out``; returns its stats."""
    problem_list = load_problems(problems) if isinstance(problems, (str, Path)) else list(problems)
    stats = SweepStats()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with pq.ParquetWriter(out, SCHEMA, compression="zstd") as writer:
        for chunk in generate_rows(problem_list, rows=rows, configs=configs, runs=runs,
                                   duplicate_rate=duplicate_rate, seed=seed, chunk_rows=chunk_rows, stats=stats):
            writer.write_table(pa.Table.from_pydict(chunk, schema=SCHEMA))
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", required=True, help="problem directory")
    parser.add_argument("--out", required=True, help="output Parquet file")
    parser.add_argument("--rows", type=int, required=True)
    parser.add_argument("--configs", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--duplicate-rate", type=float, default=0.6)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    stats = write_sweep(args.problems, args.out, rows=args.rows, configs=args.configs, runs=args.runs,
                        duplicate_rate=args.duplicate_rate, seed=args.seed)
    print(f"{args.out}: {stats.rows} rows, {stats.configs} configs x {stats.runs} runs x {stats.tasks} tasks, "
          f"{stats.distinct} distinct submissions (duplicate rate {stats.duplicate_rate:.3f})")
    print("kinds: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.kinds.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
