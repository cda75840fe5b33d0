"""Exact symbolic proofs of equality on SymEngine (the first rung of SPEC §4).

``prove_equal(a, b, positive=...)`` tries, cheapest first:

1. ``identical``: the canonical forms are the same object;
2. ``expand``: ``expand(a - b)`` is zero;
3. ``rational``: the numerator of ``a - b`` over a common denominator expands to zero;
   for a rational function of names and function applications (no root or exponential
   outside a function) this is decided exactly in FLINT (``fastscore.algebra.rational``), whose
   common denominator stays a product of factors, so it also settles the pairs whose
   common numerator is too large for SymEngine to expand (nested fractions of a solved
   linear block) and "ratio" is never needed for them;
4. ``ratio``: ``a / b`` reduces to one the same ways;
5. ``arguments``: steps 2-4 after expanding the arguments of functions and exponents
   (``exp(-(a+b)/c)`` against ``exp(-a/c)*exp(-b/c)``);
6. ``positive``: both sides rewritten with identities that hold when every base is
   positive (``(x*y)**r = x**r*y**r``, ``(x**p)**q = x**(p*q)``, ``log(x*y) = log x +
   log y``, ``log(x**p) = p*log x``, ``log(exp z) = z``, ``exp(p*log x) = x**p``), then
   steps 2-4 again.  A base counts as positive only when that follows from its form:
   positive numbers, ``pi``, ``E``, names the domain keeps positive, and sums, products,
   powers and exponentials of those (applied to the argument-expanded forms).
7. ``roots``: steps 2-4 with the integer roots of both sides reduced (`reduced_roots`);
8. ``abs``: then with every absolute value in a normal form (`normal_abs`: products and
   powers split, ``|c*x| = |c|*|x|``, so ``Abs(u/11700)`` and ``Abs(-u)/11700`` agree;
   even powers of real values and positive forms out of the absolute value).

The answer is the first rule in that order that holds.  The rewrites are cheap next
to the expansions (``as_numer_denom`` above all), so they are computed first: when
the rewritten sides are the same tree even without the product split, "positive" is
returned at once (see ``_same_without_splits``).  Rewrites and expansion sizes are
memoised per subtree, since the reference's subtrees recur in every pair.

Decimal literals are exact rationals (see ``fastscore.text.parse``), so floats are
compared exactly.  Expansion is skipped when its size estimate is too large, so a
hostile ``(a+b+c)**900`` cannot stall the scorer; such pairs fall to the numeric rung.
Function arguments and exponents are expanded only up to ``MAX_ARGUMENT_TERMS``
terms: SymEngine builds a function of an n-term sum in time quadratic in n (``sin``
of a 4,000-term sum: 0.8 s), and every rewrite rebuilds it, so ``sin(u)**2 +
cos(u)**2`` with ``u = (r+M+m+G+1)**16`` (4,845 terms) would cost seconds a pair.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from math import comb

import symengine as se

from fastscore.support.caches import memoized
from fastscore.algebra.rational import in_complete_algebra, rational_identity

MAX_EXPANDED_TERMS = 20_000
MAX_ARGUMENT_TERMS = 500


def prove_equal(a: se.Basic, b: se.Basic, *, positive: frozenset[str] = frozenset(),
                refuted: Callable[[], bool] | None = None) -> str | None:
    """Name of the rule that proves ``a == b`` exactly, or None when no rule does.

    ``refuted`` is called once the cheap rules have failed, before the expansions: when
    it returns True (the sides are known to differ somewhere, e.g. a decimal ``pi`` at
    high precision), no exact proof exists and None is returned at once."""
    if a == b:
        return "identical"
    if _plain(a) and _plain(b):  # no function or root for the rewrites below to change: the expansions alone
        return None if refuted is not None and refuted() else _zero_rule(a, b)
    a1, b1 = expand_arguments(a), expand_arguments(b)
    if a1 == b1:
        return _zero_rule(a, b) or "arguments"
    if positive and _same_without_splits(a1, b1, positive):
        return "positive"  # known before the expansions, which cost the most
    if refuted is not None and refuted():
        return None
    rule = _zero_rule(a, b)
    if rule is not None:
        return rule
    tried = (a, b)  # the last pair _zero_rule failed on: the same pair fails again
    if a1 != a or b1 != b:
        if _zero_rule(a1, b1) is not None:
            return "arguments"
        tried = (a1, b1)
    if positive:
        a2, b2 = _positive_form(a1, positive), _positive_form(b1, positive)
        if (a2, b2) != tried and (a2 == b2 or _zero_rule(a2, b2) is not None):
            return "positive"
        tried = (a2, b2)
    a3, b3 = reduced_roots(a1), reduced_roots(b1)  # last: they can only add proofs
    if (a3 != a1 or b3 != b1) and (a3, b3) != tried and (a3 == b3 or _zero_rule(a3, b3) is not None):
        return "roots"
    tried = (a3, b3)
    a4, b4 = (reduced_roots(expand_arguments(normal_abs(e, positive))) for e in (a, b))  # before the expansions split products
    if (a4, b4) != tried and (a4 == b4 or _zero_rule(a4, b4) is not None):
        return "abs"
    return None


@memoized(1 << 16)
def _plain(expr: se.Basic) -> bool:
    """A rational function: sums, products and integer powers of names and numbers only
    (every rewrite of the ladder leaves it as it is: arguments, positive-base identities,
    roots and absolute values all need a function or a non-integer power)."""
    args = expr.args
    if not args:
        return True
    kind = type(expr)
    if kind is se.Add or kind is se.Mul:
        return all(_plain(a) for a in args)
    if kind is se.Pow:
        base, exponent = args
        return exponent.is_Integer and type(base) is not _EXP1 and _plain(base)
    return False


_EXP1 = type(se.E)


@memoized(1 << 14)
def normal_abs(expr: se.Basic, positive: frozenset[str] = frozenset()) -> se.Basic:
    """``expr`` with every absolute value in a normal form, bottom-up, by identities valid
    for real names (``positive``: the names the domain keeps
    positive, as in `is_positive`):

    - of a product, the product of the factors' (``|x*y| = |x|*|y|``), a number's taken out;
    - of an integer power, the power of the base's (``|b**n| = |b|**n``), and of an even
      power of a rational function of the names, the power itself (``|b**2| = b**2``);
    - of a form `is_positive` shows positive, the form;
    - of a sum, its numeric factor taken out, so that the term of the expanded argument
      first in text order has coefficient 1 (``Abs(5600/23400 - w/23400)`` is
      ``(1/23400)*Abs(-5600 + w)``, and so is ``Abs(w/23400 - 5600/23400)``): proportional
      arguments, of either sign, become the same."""
    old = expr.args
    if not old:
        return expr
    args = [a if type(a) in _LEAVES else normal_abs(a, positive) for a in old]
    kind = type(expr)
    node = expr if _same(args, old) else _rebuild(kind, expr, args)
    return _absolute(args[0], positive) if kind is se.Abs else node


def _absolute(argument: se.Basic, positive: frozenset[str]) -> se.Basic:
    """``Abs(argument)`` in `normal_abs`'s form (``argument`` in it already)."""
    kind = type(argument)
    if argument.is_Number:
        return abs(argument)
    if kind is se.Mul:
        return se.Mul(*(_absolute(factor, positive) for factor in argument.args))
    if kind is se.Pow:
        base, exponent = argument.args
        if exponent.is_Integer:
            if int(exponent) % 2 == 0 and _plain(base):
                return argument  # an even power of a real value
            return _absolute(base, positive) ** exponent
    if is_positive(argument, positive):
        return argument
    if kind is not se.Add:
        return se.Abs(argument)
    expanded = guarded_expand(argument, limit=MAX_ARGUMENT_TERMS)
    terms = expanded.args if type(expanded) is se.Add else (expanded,)
    coefficient = min((_split_number(t) for t in terms), key=lambda pair: str(pair[1]))[0]
    if not coefficient.is_Rational or coefficient == 0:
        return se.Abs(expanded)
    return abs(coefficient) * se.Abs(guarded_expand(expanded / coefficient, limit=MAX_ARGUMENT_TERMS))


def _split_number(term: se.Basic) -> tuple[se.Basic, se.Basic]:
    """(numeric factor, rest) of a term: ``-3*x*y`` is ``(-3, x*y)``, ``5`` is ``(5, 1)``."""
    if term.is_Number:
        return term, se.Integer(1)
    if type(term) is se.Mul:
        number = se.Mul(*(a for a in term.args if a.is_Number))
        return number, term / number
    return se.Integer(1), term


@memoized(1 << 12)
def reduced_roots(expr: se.Basic) -> se.Basic:
    """``expr`` with every root of an integer ``n**(p/q)`` written with the ``q``-th powers
    of small primes taken out of ``n`` (``100000000000000000**(1/4)`` is
    ``10000*10**(1/4)``; SymEngine reduces a perfect power only).  Valid for the
    principal root of a positive integer.  Memoised; an expression whose text shows no
    root (``**(p/q)`` or ``sqrt(``) is returned at once: its text is cheaper than its
    atoms, unless its tree is far larger than its distinct nodes."""
    if count_nodes(expr) <= MAX_ROOT_TEXT_NODES and _ROOT_TEXT.search(str(expr)) is None:
        return expr
    mapping = {}
    for power in subexpressions(expr, se.Pow):
        root = _integer_root(*power.args)
        if root is not None:
            mapping[power] = root
    return expr.xreplace(mapping) if mapping else expr


MAX_ROOT_TEXT_NODES = 20_000
"""Above this many tree nodes an expression's text is not written to look for roots
(`reduced_roots`; its text could be far larger than its distinct nodes)."""
_ROOT_TEXT = re.compile(r"\*\*\(-?\d+/\d+\)|sqrt\(")
_ROOT_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97)


def _integer_root(base: se.Basic, exponent: se.Basic) -> se.Basic | None:
    """``base**exponent`` for an integer ``base > 1`` and a non-integer rational exponent
    ``p/q``, with the ``q``-th powers of small primes taken out of ``base``; None when
    there is none to take out (or for another kind of power)."""
    if type(base) not in _INTEGER_CLASSES or not exponent.is_Rational or exponent.is_Integer:
        return None
    q = int(exponent.as_numer_denom()[1])
    n = int(base)
    # Sizes, not values: a fitted decimal exponent has a denominator q near 10**16,
    # and 2**q would never be built.  n < 2**q exactly when n has at most q bits.
    if n.bit_length() <= q:
        return None
    outside, rest = 1, n
    for prime in _ROOT_PRIMES:
        if (prime.bit_length() - 1) * q >= rest.bit_length():
            break  # prime**q > rest, known from the sizes alone
        power = prime ** q
        if power > rest:
            break
        while rest % power == 0:
            rest //= power
            outside *= prime
    if outside == 1:
        return None
    return se.Integer(outside) ** (exponent * q) * se.Integer(rest) ** exponent


def _positive_form(expr: se.Basic, positive: frozenset[str]) -> se.Basic:
    return expand_arguments(rewrite_positive(expr, positive))


def _same_without_splits(a1: se.Basic, b1: se.Basic, positive: frozenset[str]) -> bool:
    """True when the argument-expanded forms are the same tree after the positive
    identities other than ``(x*y)**r = x**r*y**r`` (a proof by itself: every identity
    holds on the domain).  That one is left out because ``as_numer_denom`` also applies
    it (``(n/d)**r`` → ``n**r/d**r``, so the "rational" rule proves ``sqrt(x/y)`` against
    ``sqrt(x)/sqrt(y)``).  The nodes the other identities rewrite (``(x**p)**q``,
    ``exp(c*log x)``, logarithms) stay whole under expansion and ``as_numer_denom``, so
    the earlier rules do not prove such a pair and "positive" is the name in either
    order (measured: ``bench/results/notes.md``).  Contrived algebra can differ: with
    s = (x**3)**(1/3), ``(s+1)**3 - 3*s**2 - 3*s + 3*x**2 + 3*x`` against ``(x+1)**3`` is
    "expand" when tried in order, "positive" here."""
    return rewrite_positive(a1, positive, split_products=False) == rewrite_positive(b1, positive, split_products=False)


@memoized(1 << 16)
def expand_arguments(expr: se.Basic) -> se.Basic:
    """Expand the arguments of every function and every non-integer exponent
    (``exp(-(a+b)/c)`` → ``exp(-a/c - b/c)``), bottom-up; valid unconditionally."""
    old = expr.args
    if not old:
        return expr
    args = [a if type(a) in _LEAVES else expand_arguments(a) for a in old]
    kind = type(expr)
    if kind is se.Pow:
        if _small_integer(args[1]) is None:
            args[1] = guarded_expand(args[1], limit=MAX_ARGUMENT_TERMS)
    elif kind is not se.Add and kind is not se.Mul:
        args = [guarded_expand(a, limit=MAX_ARGUMENT_TERMS) for a in args]
    return expr if _same(args, old) else _rebuild(kind, expr, args)


def guarded_expand(expr: se.Basic, *, limit: int = MAX_EXPANDED_TERMS) -> se.Basic:
    """``se.expand(expr)``, or ``expr`` itself when the expansion would exceed ``limit``
    terms (SymEngine's C++ expansion cannot be interrupted)."""
    if type(expr) in _LEAVES:
        return expr  # an atom expands to itself
    return se.expand(expr) if expansion_size(expr) <= limit else expr


def _same(new: list[se.Basic], old: tuple[se.Basic, ...]) -> bool:
    """True when every rewritten argument is its original (equal as expressions)."""
    return all(n is o or n == o for n, o in zip(new, old))


def _rebuild(kind: type, expr: se.Basic, args: list[se.Basic]) -> se.Basic:
    if kind is se.Add:
        return se.Add(*args)
    if kind is se.Mul:
        return se.Mul(*args)
    if kind is se.Pow:
        return args[0] ** args[1]
    return expr.func(*args)


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


def _zero_rule(a: se.Basic, b: se.Basic) -> str | None:
    difference = a - b
    if _expands_to_zero(difference):
        return "expand"
    complete = in_complete_algebra(a) and in_complete_algebra(b)
    if complete:  # a rational function of names and functions: decided exactly (the rational and ratio rules)
        exact = rational_identity(a, b)
        if exact is not None:
            return "rational" if exact else None
    rule = _fraction_rules(a, b, difference)
    if rule is None and not complete and rational_identity(a, b):
        return "rational"  # an identity with its roots and exponentials as atoms, which SymEngine misses
    return rule


def _fraction_rules(a: se.Basic, b: se.Basic, difference: se.Basic) -> str | None:
    """The rational and ratio rules by SymEngine's ``as_numer_denom`` and expansions."""
    if _fraction_size(difference) > MAX_FRACTION_TERMS:
        return None  # over a common denominator it could not be expanded anyway
    numerator, _ = difference.as_numer_denom()
    if _expands_to_zero(numerator):
        return "rational"
    if expansion_size(numerator) > MAX_EXPANDED_TERMS:
        return None  # the ratio rule's numerator minus denominator is the same cross product
    if b != 0:
        ratio_numerator, ratio_denominator = (a / b).as_numer_denom()
        if _expands_to_zero(ratio_numerator - ratio_denominator):
            return "ratio"
    return None


MAX_FRACTION_TERMS = 10 * MAX_EXPANDED_TERMS
"""Above this estimate of the expanded numerator over a common denominator, the
"rational" and "ratio" rules are skipped: ``as_numer_denom`` alone takes a second on
the nested fractions of a solved eight-unknown balance, and its numerator would be far
past ``MAX_EXPANDED_TERMS``."""


def _fraction_size(expr: se.Basic) -> int:
    """Upper estimate of the expanded terms of the numerator of ``expr`` over a common
    denominator (``as_numer_denom``: the least common multiple of the denominators)."""
    return _fraction_terms(expr)[0] if type(expr) in _COMPOUND else 1


def _product_size(denominator: dict, cap: int) -> int:
    size = 1
    for base, power in denominator.items():
        size = min(cap, size * expansion_size(base) ** min(power, 64))
    return size


@memoized(1 << 16)
def _fraction_terms(expr: se.Basic) -> tuple[int, tuple]:
    """(numerator term estimate, denominator as ((base, power), ...)), capped, memoised."""
    cap = MAX_FRACTION_TERMS + 1
    kind = type(expr)
    if kind is se.Add or kind is se.Mul:
        parts = [_fraction_terms(t) if type(t) in _COMPOUND else (1, ()) for t in expr.args]
        denominator: dict = {}
        for _, factors in parts:
            for base, power in factors:
                denominator[base] = denominator.get(base, 0) + power if kind is se.Mul else \
                    max(denominator.get(base, 0), power)
        if kind is se.Mul:
            numerator = 1
            for n, _ in parts:
                numerator = min(cap, numerator * n)
        else:
            numerator = 0
            for n, factors in parts:
                rest = dict(denominator)
                for base, power in factors:
                    rest[base] -= power
                numerator = min(cap, numerator + n * _product_size(rest, cap))
        return numerator, tuple(denominator.items())
    base, exponent = expr.args
    power = _small_integer(exponent)
    if power is None:
        return 1, ()
    if int(exponent) > 0:
        n, factors = _fraction_terms(base) if type(base) in _COMPOUND else (1, ())
        return min(cap, n ** min(power, 64)), tuple((b, p * power) for b, p in factors)
    n, factors = _fraction_terms(base) if type(base) in _COMPOUND else (1, ())
    numerator = _product_size(dict(factors), cap) ** min(power, 64)
    return min(cap, numerator), ((base, power),)


def _expands_to_zero(expr: se.Basic) -> bool:
    if expr.is_zero:
        return True
    if expansion_size(expr) > MAX_EXPANDED_TERMS:
        return False
    return bool(se.expand(expr).is_zero)


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


def is_positive(expr: se.Basic, positive: frozenset[str]) -> bool:
    """True when ``expr > 0`` follows from its form and the positive names."""
    kind = type(expr).__name__
    if kind == "Symbol":
        return expr.name in positive
    if kind in ("Integer", "Rational", "Half", "One", "RealDouble", "RealMPFR"):
        return float(expr) > 0
    if kind in ("Pi", "Exp1"):
        return True
    if kind in ("Add", "Mul"):
        return all(is_positive(a, positive) for a in expr.args)
    if kind == "Pow":
        base, exponent = expr.args
        if type(base).__name__ == "Exp1":
            return not exponent.free_symbols or _is_real_form(exponent, positive)
        return is_positive(base, positive) and _is_real_form(exponent, positive)
    return False


def _is_real_form(expr: se.Basic, positive: frozenset[str]) -> bool:
    """Conservative: a rational number, or built from positive quantities by + - * /."""
    if not expr.free_symbols:
        return type(expr).__name__ in ("Integer", "Rational", "Half", "One", "Zero", "NegativeOne")
    kind = type(expr).__name__
    if kind == "Symbol":
        return expr.name in positive
    if kind in ("Add", "Mul"):
        return all(_is_real_form(a, positive) for a in expr.args)
    if kind == "Pow":
        return is_positive(expr, positive)
    if kind == "log":
        return is_positive(expr.args[0], positive)
    return False


def rewrite_positive(expr: se.Basic, positive: frozenset[str], *, split_products: bool = True) -> se.Basic:
    """Apply power/log/exp identities that hold for positive bases, bottom-up;
    ``split_products=False`` leaves out ``(x*y)**r = x**r*y**r``."""
    return _rewrite_positive(expr, positive, split_products)


@memoized(1 << 16)
def _rewrite_positive(expr: se.Basic, positive: frozenset[str], split_products: bool) -> se.Basic:
    old = expr.args
    if not old:
        return expr
    args = [a if type(a) in _LEAVES else _rewrite_positive(a, positive, split_products) for a in old]
    kind = type(expr)
    if kind is se.Pow and type(args[0]) in _REWRITTEN_BASES:
        return _rewrite_pow(args[0], args[1], positive, split_products)
    if kind is se.log and type(args[0]) in _REWRITTEN_LOG_ARGUMENTS:
        return _rewrite_log(args[0], positive)
    return expr if _same(args, old) else _rebuild(kind, expr, args)


_REWRITTEN_BASES = frozenset((type(se.E), se.Mul, se.Pow))  # other bases: _rewrite_pow keeps base**exponent
_REWRITTEN_LOG_ARGUMENTS = frozenset((se.Mul, se.Pow))  # other arguments: _rewrite_log keeps log(argument)


def _rewrite_pow(base: se.Basic, exponent: se.Basic, positive: frozenset[str], split_products: bool) -> se.Basic:
    kind = type(base).__name__
    if kind == "Exp1":
        return se.Mul(*[_exp_of_term(t, positive, split_products) for t in _terms(exponent)])
    if split_products and kind == "Mul" and all(is_positive(f, positive) for f in base.args):
        return se.Mul(*[_rewrite_pow(f, exponent, positive, split_products) for f in base.args])
    if kind == "Pow" and is_positive(base.args[0], positive):
        inner_base, inner_exponent = base.args
        product = guarded_expand(inner_exponent * exponent, limit=MAX_ARGUMENT_TERMS)
        return _rewrite_pow(inner_base, product, positive, split_products)
    return base ** exponent


def _exp_of_term(term: se.Basic, positive: frozenset[str], split_products: bool) -> se.Basic:
    """``exp(c*log(x))`` → ``x**c`` for positive x; other terms stay ``exp(term)``."""
    factors = term.args if type(term).__name__ == "Mul" else (term,)
    logs = [f for f in factors if type(f).__name__ == "log" and is_positive(f.args[0], positive)]
    if len(logs) == 1:
        rest = se.Mul(*[f for f in factors if f != logs[0]])
        if not rest.free_symbols:
            return _rewrite_pow(logs[0].args[0], rest, positive, split_products)
    return se.exp(term)


def _rewrite_log(argument: se.Basic, positive: frozenset[str]) -> se.Basic:
    kind = type(argument).__name__
    if kind == "Mul" and all(is_positive(f, positive) for f in argument.args):
        return se.Add(*[_rewrite_log(f, positive) for f in argument.args])
    if kind == "Pow":
        base, exponent = argument.args
        if type(base).__name__ == "Exp1" and _is_real_form(exponent, positive):
            return exponent
        if is_positive(base, positive):
            return exponent * _rewrite_log(base, positive)
    return se.log(argument)


def _terms(expr: se.Basic) -> tuple[se.Basic, ...]:
    return expr.args if type(expr).__name__ == "Add" else (expr,)
