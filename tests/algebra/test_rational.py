"""Exact rational-function identities (fastscore.algebra.rational), and the proofs they give."""
import pytest
import symengine as se

from fastscore.algebra.canonical import prove_equal
from fastscore.algebra.rational import rational_identity

x, y, z, s, e = (se.Symbol(n) for n in ("x", "y", "z", "s", "e"))
Int = se.Integer


def _eliminated(steps: int):
    """A chain of nested fractions, as eliminating a linear balance leaves them."""
    nested = x / y
    for _ in range(steps):
        nested = 1 / (1 + 1 / (1 + nested))
    return nested


@pytest.mark.parametrize(("a", "b"), [
    ((x + 1) ** 2, x ** 2 + 2 * x + 1),
    (1 / (x - 1) + 1 / (x + 1), 2 * x / (x ** 2 - 1)),
    ((x ** 2 - 1) / (x - 1), x + 1),
    (1 / (1 / x + 1 / y), x * y / (x + y)),
    (se.Rational(7, 3) / (2 * x + 4), se.Rational(7, 6) / (x + 2)),
    (-x / (-x - 1), x / (x + 1)),
    (se.pi * (x + 1), se.pi * x + se.pi),  # a symbolic constant is an atom
    (se.Abs(se.sqrt(x) + 1) / (x + 1) + 1, (se.Abs(se.sqrt(x) + 1) + x + 1) / (x + 1)),  # so is a function
    (x ** (10 ** 6) * y, y * x ** (10 ** 6)),
    # a Michaelis-Menten-like balance: free enzyme from a conservation law and two steady states
    (e / (1 + s / 2 + s / 2 * (y / (x + y))), 2 * e * (x + y) / (2 * x + 2 * y + s * x + 2 * s * y)),
])
def test_identities_are_found(a, b):
    assert rational_identity(a, b) is True


@pytest.mark.parametrize(("a", "b"), [
    (1 / (1 / x + 1 / y), x * y / (x + y) + se.Rational(1, 10 ** 12)),  # a near miss
    (se.Abs(x) ** 2, x ** 2),  # |x| is an atom, not x
    (se.sin(x) ** 2 + se.cos(x) ** 2, Int(1)),  # no identity of functions
    (x ** (10 ** 6) + 1, x ** (10 ** 6)),
    (e / (1 + s / 2 + s / 2 * (y / (x + y))), 2 * e * (x + y) / (2 * x + 2 * y + s * x + 3 * s * y)),
])
def test_non_identities_are_refuted(a, b):
    assert rational_identity(a, b) is False


@pytest.mark.parametrize(("a", "b"), [
    (se.sqrt(x) * (y + 1), se.sqrt(x) * y + se.sqrt(x)),  # a root is an atom: a proof all the same
    (se.exp(x) * (x + 1) / (x + 2), se.exp(x) - se.exp(x) / (x + 2)),
])
def test_identities_of_roots_and_exponentials_as_atoms_are_proofs(a, b):
    assert rational_identity(a, b) is True


@pytest.mark.parametrize(("a", "b"), [
    ((se.sqrt(x) + 1) ** 2, x + 2 * se.sqrt(x) + 1),  # SymEngine merges sqrt(x)**2: not an identity of atoms
    (se.exp(x) * (se.exp(y) + 1), se.exp(x + y) + se.exp(x)),  # exp(x)*exp(y) is exp(x+y)
    (se.RealDouble(0.5) * x, x / 2),  # a float
    ((x + y + z) ** 900, Int(1)),  # past MAX_TERMS
    ((x + 2) ** 5000, Int(1)),  # a large power of a sum
])
def test_undecided_outside_the_complete_algebra_is_none(a, b):
    assert rational_identity(a, b) is None
    if (a - b).free_symbols and "900" not in str(a) and "5000" not in str(a):
        assert prove_equal(a, b) is not None or a.has(se.RealDouble(0.5))  # SymEngine's rules still run


def test_nested_fractions_are_proven_as_one_reduced_fraction():
    """The common denominator stays a product of its factors, so a deep chain of nested
    fractions (an eliminated linear block) is compared with its reduced form at once;
    the proof rung names it "rational", and a near miss is refuted."""
    nested, numerator, denominator = _eliminated(12), x, y
    for _ in range(12):  # 1/(1 + 1/(1 + n/d)) = (d + n)/(2d + n)
        numerator, denominator = se.expand(denominator + numerator), se.expand(2 * denominator + numerator)
    assert rational_identity(nested, numerator / denominator) is True
    assert prove_equal(nested, numerator / denominator) == "rational"
    assert rational_identity(nested, (numerator + x / 10 ** 9) / denominator) is False
    assert prove_equal(nested, (numerator + x / 10 ** 9) / denominator) is None


def test_reciprocals_nested_deeper_than_the_limit_are_not_expanded_by_symengine():
    """SymEngine expands ``1/(1 + 1/(1 + ...))`` in time exponential in its depth (twelve
    deep: 25 s, uninterruptible), so such a tree counts as too large to expand: the
    expansions leave it whole and the proof rung refuses it, unless FLINT settles it."""
    from fastscore.algebra.sizes import MAX_EXPANDED_TERMS, MAX_RECIPROCAL_DEPTH, expansion_size, guarded_expand
    shallow, deep = _eliminated(MAX_RECIPROCAL_DEPTH // 2), _eliminated(12)  # two reciprocals a step
    assert expansion_size(shallow) <= MAX_EXPANDED_TERMS < expansion_size(deep)
    assert guarded_expand(deep) is deep
    numerator, denominator = x, y
    for _ in range(12):
        numerator, denominator = se.expand(denominator + numerator), se.expand(2 * denominator + numerator)
    assert prove_equal(deep, numerator / denominator) == "rational"  # FLINT's
    assert prove_equal(se.sqrt(x) * deep, se.sqrt(x) * numerator / denominator) == "rational"  # sqrt(x) an atom
    assert prove_equal(se.sqrt(x) * deep + 1, se.sqrt(x) * numerator / denominator) is None
