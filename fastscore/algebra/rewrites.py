"""The rewrites of the exact-proof ladder (``fastscore.algebra.canonical``), each a
function of one expression, bottom-up and memoised per subtree (the reference's subtrees
recur in every pair):

- ``expand_arguments``: the arguments of functions and non-integer exponents expanded
  (valid unconditionally);
- ``rewrite_positive``: power/log/exp identities that hold when every base is positive
  (``is_positive``: positive as follows from the form and the names the domain keeps
  positive);
- ``reduced_roots``: integer roots with the powers of small primes taken out;
- ``normal_abs``: every absolute value in a normal form.

``_plain`` tells the rational functions, which every rewrite leaves as they are.
"""
from __future__ import annotations

import re

import symengine as se

from fastscore.algebra.sizes import (
    _INTEGER_CLASSES,
    _LEAVES,
    MAX_ARGUMENT_TERMS,
    _small_integer,
    count_nodes,
    guarded_expand,
    subexpressions,
)
from fastscore.support.caches import memoized


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
