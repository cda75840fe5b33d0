"""Exact identity of rational functions, by polynomial arithmetic in FLINT (python-flint).

``rational_identity(a, b)`` decides whether ``a - b`` is zero as a rational function of
its names and *atoms*: every function application (``Abs(u)``, ``sin(u)``, ``log(u)``)
and symbolic constant (``pi``) is an independent indeterminate, whatever is inside it.
That is the algebra SymEngine's ``expand`` and ``as_numer_denom`` do (neither looks
into a function's argument), done over exact integer polynomials instead: numerators
over a common denominator kept as a product of factors (``1/(x+1) + 1/(x+1)**2`` is
``(x + 2)/(x+1)**2``, never multiplied out until the two sides are compared), so the
nested fractions of an eliminated linear block (a Michaelis-Menten balance) are
compared in milliseconds where SymEngine's common numerator is too large to expand.

True is a proof (wherever both sides are defined).  False means that no identity of
this algebra exists, and is only given when the algebra is complete for the pair: a
non-integer power, an exponential or a float outside a function's argument is an atom
too, but SymEngine's own rules combine those (``sqrt(x)**2`` is ``x``, ``exp(a)*exp(b)``
is ``exp(a+b)``), so a pair holding one that is not an identity of atoms gives None, as
does a polynomial of more than ``MAX_TERMS`` terms or a tree nested too deep.
"""
from __future__ import annotations

from math import comb, gcd

import flint
import symengine as se

from fastscore.support.caches import memoized

__all__ = ["MAX_TERMS", "in_complete_algebra", "rational_identity"]

MAX_TERMS = 20_000
"""Largest polynomial (in terms) built: as ``sizes.MAX_EXPANDED_TERMS``."""
MAX_CONVERTED = 1 << 18
"""Polynomial terms a converter keeps in its conversions (`_converter`): a few MB."""
MAX_POWER = 1024
"""Largest integer exponent applied to anything but a monomial of coefficient 1 or -1."""
MAX_PRODUCT = 2_000_000
"""Largest product of two polynomials' terms multiplied (the work of one product)."""


class _OutOfScope(Exception):
    """Work past a bound (``MAX_TERMS``, ``MAX_PRODUCT``, ``MAX_POWER``), or a division by zero."""


def rational_identity(a: se.Basic, b: se.Basic) -> bool | None:
    """True when ``a - b`` is zero as a rational function of its names and atoms (a
    proof); False when it is not and the algebra is complete for both sides; else None
    (module doc)."""
    try:
        (found_a, complete_a), (found_b, complete_b) = _atoms(a), _atoms(b)
        fraction = _converter(tuple(sorted(found_a | found_b, key=str)))
        (na, ia, fa), (nb, ib, fb) = fraction.of(a), fraction.of(b)
        # na / (ia * prod fa) == nb / (ib * prod fb): cross-multiplied, common factors left out
        left = _times(na * ib, fraction.product({k: (p, e - fa.get(k, (p, 0))[1]) for k, (p, e) in fb.items()}))
        right = _times(nb * ia, fraction.product({k: (p, e - fb.get(k, (p, 0))[1]) for k, (p, e) in fa.items()}))
    except (_OutOfScope, RecursionError):
        return None
    return True if left == right else False if complete_a and complete_b else None


def in_complete_algebra(expr: se.Basic) -> bool:
    """Whether the algebra is complete for ``expr``: no root, exponential or float among
    its atoms (module doc), so that `rational_identity` answers False as well as True."""
    try:
        return _atoms(expr)[1]
    except RecursionError:
        return False


@memoized(8)
def _converter(atoms: tuple) -> _Converter:
    """The converter over ``atoms`` (their order: the generators'), kept with what it has
    converted: a batch's pairs over the same names share their subexpressions (the
    closed forms of one eliminated block share their nested fractions)."""
    context = flint.fmpz_mpoly_ctx.get(tuple(f"x{i}" for i in range(max(1, len(atoms)))), "degrevlex")
    return _Converter(context, {atom: i for i, atom in enumerate(atoms)})


_EXP1 = type(se.E)


@memoized(1 << 14)
def _atoms(expr: se.Basic) -> tuple[frozenset, bool]:
    """The names and atoms of ``expr`` (module doc), and whether the algebra is complete
    for it (no root, exponential or float among its atoms).  Memoised: the reference
    side recurs in every pair."""
    kind = type(expr)
    if kind is se.Add or kind is se.Mul:
        found, complete = frozenset(), True
        for arg in expr.args:
            inner, whole = _atoms(arg)
            found, complete = found | inner, complete and whole
        return found, complete
    if kind is se.Pow:
        base, exponent = expr.args
        if exponent.is_Integer and type(base) is not _EXP1:
            return _atoms(base)
        return frozenset((expr,)), False  # x**(1/2), exp(u): an atom, which SymEngine's rules may combine
    if expr.is_Number:
        return (frozenset(), True) if expr.is_Rational else (frozenset((expr,)), False)
    return frozenset((expr,)), True  # a name, a function application or a symbolic constant


class _Converter:
    """SymEngine trees -> (numerator polynomial, integer denominator, denominator factors
    {base: (polynomial, power)}), memoised per subexpression (never changed in place)."""

    def __init__(self, context, index: dict):
        self.context, self.index = context, index
        self.one = context.from_dict({(0,) * context.nvars(): 1})
        self.generators = context.gens()
        self.done: dict = {}
        self.kept = 0  # terms of the polynomials in ``done``

    def product(self, factors: dict) -> object:
        """The product of ``factors`` ({key: (polynomial, power)}, powers <= 0 left out)."""
        result = self.one
        for polynomial, power in factors.values():
            if power > 0:
                result = _times(result, self._power(polynomial, power))
        return result

    def of(self, expr: se.Basic) -> tuple:
        found = self.done.get(expr)
        if found is None:
            found = self._convert(expr)
            self.kept += len(found[0]) + sum(len(p) for p, _ in found[2].values())
            if self.kept > MAX_CONVERTED:
                self.done.clear()
                self.kept = 0
            self.done[expr] = found
        return found

    def _convert(self, expr: se.Basic) -> tuple:
        atom = self.index.get(expr)
        if atom is not None:
            return self.generators[atom], 1, {}
        kind = type(expr)
        if kind is se.Add:
            return self._sum([self.of(arg) for arg in expr.args])
        if kind is se.Mul:
            numerator, denominator, factors = self.one, 1, {}
            for arg in expr.args:
                n, d, f = self.of(arg)
                numerator = _times(numerator, n)
                denominator *= d
                for key, (polynomial, power) in f.items():
                    factors[key] = (polynomial, factors[key][1] + power) if key in factors else (polynomial, power)
            return numerator, denominator, factors
        if kind is se.Pow:
            base, exponent = expr.args
            n, d, f = self.of(base)
            power = int(exponent)
            if abs(power) > MAX_POWER and (d != 1 or f or len(n) != 1 or abs(int(n.leading_coefficient())) != 1):
                raise _OutOfScope  # (2*x)**10**9: its coefficients alone would not fit in memory
            if power >= 0:
                return self._power(n, power), d ** power, {k: (p, e * power) for k, (p, e) in f.items()}
            power = -power
            # 1/(n/(d*F))**k = (d*F)**k / n**k: n is a new factor of the denominator
            numerator = self.product({k: (p, e * power) for k, (p, e) in f.items()}) * d ** power
            if n.is_constant():
                value = int(n.leading_coefficient()) if len(n) else 0
                if value == 0:
                    raise _OutOfScope  # 1/0: SymEngine folds it to zoo before this
                return numerator * (1 if value > 0 else -1) ** power, abs(value) ** power, {}
            return numerator, 1, {base: (n, power)}
        numerator, denominator = expr.get_num_den()  # an exact number: every other leaf is an atom
        return self.one * int(numerator), int(denominator), {}

    def _sum(self, parts: list[tuple]) -> tuple:
        factors: dict = {}
        denominator = 1
        for _, d, f in parts:
            denominator = denominator * d // gcd(denominator, d)
            for key, (polynomial, power) in f.items():
                if key not in factors or factors[key][1] < power:
                    factors[key] = (polynomial, power)
        numerator = None
        for n, d, f in parts:
            missing = {k: (p, e - f.get(k, (p, 0))[1]) for k, (p, e) in factors.items()}
            term = _times(n * (denominator // d), self.product(missing))
            numerator = term if numerator is None else _sized(numerator + term)
        return numerator, denominator, factors

    def _power(self, polynomial, power: int):
        terms = len(polynomial)
        if terms > 1 and comb(power + terms - 1, terms - 1) > MAX_TERMS:
            raise _OutOfScope
        return polynomial ** power


def _times(p, q):
    """``p * q`` within ``MAX_PRODUCT`` and ``MAX_TERMS``."""
    if len(p) * len(q) > MAX_PRODUCT:
        raise _OutOfScope
    return _sized(p * q)


def _sized(polynomial):
    if len(polynomial) > MAX_TERMS:
        raise _OutOfScope
    return polynomial
