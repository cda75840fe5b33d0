"""How large an expression is, and how large it would be expanded: the guard on every
expansion of the proofs and the solver.

``count_nodes`` is the size of an expression tree (memoised per subexpression, so a
tree that shares its parts costs its distinct ones), ``subexpressions`` its distinct
subexpressions of one class (each node visited once).  ``expansion_size`` is an upper
estimate of the terms ``se.expand`` produces, and ``guarded_expand`` expands only below
a limit: SymEngine's C++ expansion cannot be interrupted, so a hostile ``(a+b+c)**900``
is never expanded (such pairs fall to the numeric rung), nor reciprocals nested more
than ``MAX_RECIPROCAL_DEPTH`` deep (expanded in time exponential in the depth).
Function arguments and exponents are expanded only up to ``MAX_ARGUMENT_TERMS``
terms: SymEngine builds a function of an n-term sum in time quadratic in n (``sin``
of a 4,000-term sum: 0.8 s), and every rewrite rebuilds it, so ``sin(u)**2 +
cos(u)**2`` with ``u = (r+M+m+G+1)**16`` (4,845 terms) would cost seconds a pair.
"""
from __future__ import annotations

from math import comb

import symengine as se

from fastscore.support.caches import memoized

MAX_EXPANDED_TERMS = 20_000
MAX_ARGUMENT_TERMS = 500


def guarded_expand(expr: se.Basic, *, limit: int = MAX_EXPANDED_TERMS) -> se.Basic:
    """``se.expand(expr)``, or ``expr`` itself when the expansion would exceed ``limit``
    terms (SymEngine's C++ expansion cannot be interrupted)."""
    if type(expr) in _LEAVES:
        return expr  # an atom expands to itself
    return se.expand(expr) if expansion_size(expr) <= limit else expr


@memoized(1 << 15)
def count_nodes(expr: se.Basic) -> int:
    """Size of an expression tree (every node counted once per occurrence), from the sizes
    of its operands: memoised per subexpression, so the work is linear in the distinct
    ones (a solved mechanism can share one subexpression in many places: a chain of 20
    substitutions is a tree of 2**20 nodes) and a new expression built from parts sized
    before (substituted closed forms, a derived law) costs its new nodes only.  A tree
    nested too deep for that is counted over its distinct subexpressions at once."""
    args = expr.args
    if not args:
        return 1
    try:
        return 1 + sum(count_nodes(a) if a.args else 1 for a in args)
    except RecursionError:
        return _tree_size(expr)


def subexpressions(expr: se.Basic, kind: type) -> set[se.Basic]:
    """The distinct subexpressions of ``expr`` of class ``kind``, each node visited once.
    SymEngine's ``atoms`` walks the tree, every occurrence of a shared subexpression
    again: over a solved chain of 22 substitutions (a tree of 2**22 nodes) it took a
    minute where this takes a millisecond."""
    found, seen, stack = set(), set(), [expr]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if isinstance(node, kind):
            found.add(node)
        stack.extend(node.args)
    return found


def _tree_size(expr: se.Basic) -> int:
    """``count_nodes`` over the distinct subexpressions (post-order, each once)."""
    sizes: dict[se.Basic, int] = {}
    stack = [(expr, False)]
    while stack:
        node, done = stack.pop()
        if done:
            sizes[node] = 1 + sum(sizes.get(a, 1) for a in node.args)
        elif node not in sizes and node.args:
            sizes[node] = 0  # in progress: every operand is done before the node
            stack.append((node, True))
            stack.extend((a, False) for a in node.args)
    return sizes.get(expr, 1)


def expansion_size(expr: se.Basic) -> int:
    """Upper estimate of the number of terms ``se.expand(expr)`` produces; past every
    limit for reciprocals nested more than ``MAX_RECIPROCAL_DEPTH`` deep, which SymEngine
    expands in time exponential in the depth (``1/(1 + 1/(1 + ...))`` twelve deep: 25 s,
    uninterruptible, for a one-line formula)."""
    if type(expr) not in _COMPOUND:
        return 1
    return _compound_size(expr) if _reciprocal_depth(expr) <= MAX_RECIPROCAL_DEPTH else _TOO_COSTLY


MAX_RECIPROCAL_DEPTH = 6
"""Deepest nesting of reciprocals of sums expanded (measured: 5 ms at 6, four times more
each level; the real tasks' laws and closed forms nest at most 4 deep)."""
_TOO_COSTLY = 1 << 62


@memoized(1 << 16)
def _reciprocal_depth(expr: se.Basic) -> int:
    """How deep reciprocals (negative powers) of compound bases nest in ``expr``, through
    sums, products and powers (an expansion does not enter a function's argument)."""
    kind = type(expr)
    if kind is se.Pow:
        base, exponent = expr.args
        depth = _reciprocal_depth(base) if type(base) in _COMPOUND else 0
        return depth + 1 if type(base) in _COMPOUND and exponent.is_Number and exponent.is_negative else depth
    return max((_reciprocal_depth(a) for a in expr.args if type(a) in _COMPOUND), default=0)


@memoized(1 << 16)
def _compound_size(expr: se.Basic) -> int:
    """``expansion_size`` of an Add, Mul or Pow, memoised: the reference's subtrees
    recur in every pair it is compared with."""
    kind = type(expr)
    if kind is se.Add:
        return sum(_compound_size(t) if type(t) in _COMPOUND else 1 for t in expr.args)
    if kind is se.Mul:
        size = 1
        for factor in expr.args:
            if type(factor) in _COMPOUND:
                size *= _compound_size(factor)
                if size > MAX_EXPANDED_TERMS:
                    break
        return size
    base, exponent = expr.args
    n = _small_integer(exponent)
    if n is not None and n > 1 and type(base) in _COMPOUND:
        terms = _compound_size(base)
        return comb(n + terms - 1, terms - 1) if terms > 1 else 1
    return 1


_COMPOUND = frozenset((se.Add, se.Mul, se.Pow))  # the nodes whose expansion can exceed one term
_LEAVES = frozenset(type(e) for e in (  # atoms every rewrite here keeps: no cache lookup needed
    se.Symbol("x"), se.Integer(-1), se.Integer(0), se.Integer(1), se.Integer(2),
    se.Rational(1, 2), se.Rational(1, 3), se.RealDouble(0.5), se.pi, se.E))
_INTEGER_CLASSES = frozenset(type(se.Integer(n)) for n in (-1, 0, 1, 2))


def _small_integer(expr: se.Basic) -> int | None:
    if type(expr) in _INTEGER_CLASSES:
        return abs(int(expr))
    return None
