"""Exact symbolic proofs of equality on SymEngine (the proof rung of ``fastscore.algebra.equivalence``).

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

This module owns the ladder and its expansion rules; the rewrites it applies are
``fastscore.algebra.rewrites``', the size estimates that guard every expansion
``fastscore.algebra.sizes``'.
"""
from __future__ import annotations

from collections.abc import Callable

import symengine as se

from fastscore.algebra.rational import in_complete_algebra, rational_identity
from fastscore.algebra.rewrites import _plain, expand_arguments, normal_abs, reduced_roots, rewrite_positive
from fastscore.algebra.sizes import _COMPOUND, MAX_EXPANDED_TERMS, _small_integer, expansion_size
from fastscore.support.caches import memoized


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

