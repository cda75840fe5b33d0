"""A corpus of formula pairs with known truth, for testing the equivalence engine.

Every case is data: two formula texts, the domain they are judged on (sampled
variables with ranges and distributions, plus constants held fixed as rows of the
domain), the truth (equivalent or not), whether the equality is exact (an identity)
or only within tolerance (a decimal constant), a tag and the reason.

The truth never comes from fastscore.  It is re-established independently by
``truth_of``: both texts are evaluated with plain ``mpmath`` at 50 digits at random
points of the domain, by a small evaluator of Python's own ``ast`` (no ``eval``; a
fixed table of mpmath functions; ``^`` is read as ``**``).  A case is equivalent when
the largest relative difference is at most ``EQUIVALENT_BELOW`` (10x under the
engine's default rtol 1e-6) and the two sides are defined at the same points;
different when some point differs by at least ``DIFFERENT_ABOVE`` or is defined on one
side only.  Anything in between is ambiguous and rejected by the tests.
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from functools import lru_cache

import mpmath
import numpy as np

EQUIVALENT_BELOW = 1e-7
DIFFERENT_ABOVE = 1e-5
TRUTH_POINTS = 64
DIGITS = 50

C_LIGHT = 299792458.0
HBAR = 1.054571817e-34
G_NEWTON = 6.6743e-11
EPS0 = 8.8541878128e-12
SIGMA_SB = 5.670374419e-08
K_B = 1.380649e-23
Q_E = 1.602176634e-19
M_E = 9.1093837015e-31


@dataclass(frozen=True)
class Case:
    """One pair: ``candidate`` and ``reference`` texts over a domain.

    variables: ``(name, min, max, "log" | "uniform")`` of each sampled variable;
    constants: ``(name, value)`` held fixed (rows of the domain, like MDBench's
    declared constants); equivalent: the truth; exact: the equality is an identity
    (a ``proven`` verdict is legitimate), not only agreement within tolerance.
    """

    candidate: str
    reference: str
    variables: tuple[tuple[str, float, float, str], ...]
    equivalent: bool
    tag: str
    why: str
    constants: tuple[tuple[str, float], ...] = ()
    exact: bool = True
    bug: str = ""  # non-empty: a known engine bug, the test is xfail(strict) with this reason

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(v[0] for v in self.variables) + tuple(c[0] for c in self.constants)

    @property
    def id(self) -> str:
        return f"{self.tag}:{self.candidate}|{self.reference}"[:120]


def V(name, lo, hi, dist="uniform"):
    return (name, float(lo), float(hi), dist)


# ---------------------------------------------------------------- sampling


def sample(case: Case, n: int, seed: int) -> np.ndarray:
    """``(len(names), n)`` float64 points: each variable drawn uniformly or
    log-uniformly over ``[min, max)``, constants repeated."""
    rng = np.random.default_rng(seed)
    rows = []
    for _, lo, hi, dist in case.variables:
        if dist == "log":
            rows.append(np.exp(rng.uniform(math.log(lo), math.log(hi), n)))
        else:
            rows.append(rng.uniform(lo, hi, n))
    rows += [np.full(n, value) for _, value in case.constants]
    return np.ascontiguousarray(np.vstack(rows))


# ---------------------------------------------------------------- independent evaluator


class Undefined(ArithmeticError):
    """No finite real value."""


def _real(value):
    if isinstance(value, mpmath.mpc):
        if value.imag != 0:
            raise Undefined("complex")
        value = value.real
    if not mpmath.isfinite(value):
        raise Undefined("not finite")
    return value


def _power(base, exponent):
    if base == 0 and exponent < 0:
        raise Undefined("0 to a negative power")
    if base < 0 and not mpmath.isint(exponent):
        raise Undefined("negative base, fractional exponent")
    return mpmath.power(base, exponent)


def _log(x, base=None):
    if x <= 0 or (base is not None and (base <= 0 or base == 1)):
        raise Undefined("log of a non-positive number")
    return mpmath.log(x) if base is None else mpmath.log(x) / mpmath.log(base)


def _sqrt(x):
    if x < 0:
        raise Undefined("sqrt of a negative number")
    return mpmath.sqrt(x)


def _checked(function, lo=None, hi=None, open_interval=False):
    def call(x):
        if lo is not None and (x < lo or (open_interval and x == lo)):
            raise Undefined("out of domain")
        if hi is not None and (x > hi or (open_interval and x == hi)):
            raise Undefined("out of domain")
        return function(x)
    return call


FUNCTIONS = {
    "sqrt": _sqrt,
    "cbrt": lambda x: _power(x, mpmath.mpf(1) / 3),
    "exp": mpmath.exp,
    "log": _log,
    "ln": _log,
    "log10": lambda x: _log(x, 10),
    "log2": lambda x: _log(x, 2),
    "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,
    "asin": _checked(mpmath.asin, -1, 1), "acos": _checked(mpmath.acos, -1, 1), "atan": mpmath.atan,
    "sinh": mpmath.sinh, "cosh": mpmath.cosh, "tanh": mpmath.tanh,
    "asinh": mpmath.asinh, "acosh": _checked(mpmath.acosh, 1), "atanh": _checked(mpmath.atanh, -1, 1, True),
    "atan2": mpmath.atan2,
    "abs": abs, "Abs": abs,
}


@lru_cache(maxsize=None)
def _tree(text: str) -> ast.expr:
    return ast.parse(text.replace("^", "**"), mode="eval").body


def mp_value(text: str, env: dict):
    """Value of ``text`` at the point ``env`` ({name: mpf}); None where it has no
    finite real value.  Undeclared ``pi``/``π`` are mpmath's pi."""
    source = text.replace("^", "**")
    try:
        return _real(_walk(_tree(text), env, source))
    except (Undefined, ZeroDivisionError, ValueError, OverflowError):
        return None


def _walk(node, env, source):
    if isinstance(node, ast.Constant):
        return mpmath.mpf(ast.get_source_segment(source, node))  # the exact decimal text
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        if node.id in ("pi", "π"):
            return +mpmath.pi
        raise KeyError(node.id)
    if isinstance(node, ast.UnaryOp):
        value = _walk(node.operand, env, source)
        return -value if isinstance(node.op, ast.USub) else +value
    if isinstance(node, ast.BinOp):
        a, b = _walk(node.left, env, source), _walk(node.right, env, source)
        op = type(node.op)
        if op is ast.Add:
            return a + b
        if op is ast.Sub:
            return a - b
        if op is ast.Mult:
            return a * b
        if op is ast.Div:
            if b == 0:
                raise Undefined("division by zero")
            return a / b
        if op is ast.Pow:
            return _real(_power(a, b))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
        return _real(FUNCTIONS[node.func.id](*[_walk(a, env, source) for a in node.args]))
    raise TypeError(f"unsupported syntax: {ast.dump(node)}")


def relative_difference(a, b) -> float:
    """``|a - b| / max(|a|, |b|)`` (0 when both are 0; inf when one side is None)."""
    if a is None and b is None:
        return 0.0
    if a is None or b is None:
        return math.inf
    size = max(abs(a), abs(b))
    return 0.0 if size == 0 else float(abs(a - b) / size)


def _values_at(case: Case, point: dict) -> tuple:
    """Both sides at one point ({name: float}) at ``DIGITS`` digits; a side that is a
    rounding residue of an exact zero (it shrinks by at least ``DIGITS/2`` orders of
    magnitude at twice the digits, as ``1 + |c| - |c - 1|`` at ``c <= 0`` does when ``c``
    is inexact) is 0."""
    values = []
    for text in (case.candidate, case.reference):
        with mpmath.workdps(DIGITS):
            value = mp_value(text, {name: mpmath.mpf(float(v)) for name, v in point.items()})
        if value is not None and value != 0:
            with mpmath.workdps(2 * DIGITS):
                finer = mp_value(text, {name: mpmath.mpf(float(v)) for name, v in point.items()})
            if finer is not None and abs(finer) <= abs(value) * mpmath.mpf(10) ** (-DIGITS // 2):
                value = mpmath.mpf(0)
        values.append(value)
    return tuple(values)


def difference_at(case: Case, point: dict) -> float:
    """Relative difference of the two sides at one point ({name: float})."""
    return relative_difference(*_values_at(case, point))


def max_difference(case: Case, *, n: int = TRUTH_POINTS, seed: int = 12345) -> tuple[float, int]:
    """Largest relative difference over ``n`` random points of the domain (drawn with
    a seed of its own), and the number of points where either side is defined."""
    points = sample(case, n, seed)
    worst, defined = 0.0, 0
    for j in range(n):
        a, b = _values_at(case, {name: points[i, j] for i, name in enumerate(case.names)})
        if a is None and b is None:
            continue
        defined += 1
        worst = max(worst, relative_difference(a, b))
    return worst, defined


def truth_of(case: Case) -> bool | None:
    """Independent truth: True (equivalent), False (different) or None (ambiguous)."""
    worst, defined = max_difference(case)
    if defined < 16:
        return None
    if worst <= EQUIVALENT_BELOW:
        return True
    if worst >= DIFFERENT_ABOVE:
        return False
    return None


# ---------------------------------------------------------------- the cases

CASES: list[Case] = []


def eq(candidate, reference, variables, tag, why, *, constants=(), exact=True, bug=""):
    CASES.append(Case(candidate, reference, tuple(variables), True, tag, why, tuple(constants), exact, bug))


def ne(candidate, reference, variables, tag, why, *, constants=(), bug=""):
    CASES.append(Case(candidate, reference, tuple(variables), False, tag, why, tuple(constants), False, bug))


def fitted(value: float, relative: float) -> str:
    """A fitted decimal constant: ``value * (1 + relative)`` written with 12 digits."""
    return f"{value * (1 + relative):.12g}"


@dataclass(frozen=True)
class Base:
    """A realistic law written as a template with one numeric coefficient ``{k}``,
    with hand-written exact rewrites and wrong variants."""

    tag: str
    template: str
    k: str
    variables: tuple
    constants: tuple = ()
    rewrites: tuple = ()
    wrong: tuple = ()
    approximate: tuple = ()  # equivalent only within tolerance (decimal constants)

    @property
    def law(self) -> str:
        return self.template.format(k=self.k)


_PI_TEXT = {"2*pi": "6.283185307179586", "4*pi": "12.566370614359172", "pi": "3.141592653589793"}


def add_base(base: Base) -> None:
    """The base's own rewrites and wrong variants, plus generated ones: fitted
    coefficients (1e-9 off: equivalent; 1e-3 off: different), decimal pi, decimal
    constants in place of constant rows, and a sign flip."""
    law, v, c = base.law, base.variables, base.constants
    for text in base.rewrites:
        eq(text, law, v, base.tag, "hand-written algebraic rewrite", constants=c)
    for text in base.approximate:
        eq(text, law, v, base.tag, "decimal constants within 1e-7", constants=c, exact=False)
    for text in base.wrong:
        ne(text, law, v, base.tag, "hand-written wrong variant", constants=c)
    k = float(eval_number(base.k))
    for rel in (1e-9, -1e-9):
        eq(base.template.format(k=fitted(k, rel)), law, v, base.tag + "/fit1e-9",
           "coefficient off by 1e-9 relative", constants=c, exact=False)
    for rel in (1e-3, -1e-3):
        ne(base.template.format(k=fitted(k, rel)), law, v, base.tag + "/fit1e-3",
           "coefficient off by 1e-3 relative", constants=c)
    for key, decimal in _PI_TEXT.items():
        if key in law:
            eq(law.replace(key, decimal, 1), law, v, base.tag + "/decimal-pi",
               f"{key} written as {decimal}", constants=c, exact=False)
            ne(law.replace(key, f"{float(decimal):.3g}", 1), law, v, base.tag + "/rounded-pi",
               f"{key} rounded to 3 digits", constants=c)
            break
    for name, value in c:
        eq(_replace_name(law, name, repr(value)), law, v, base.tag + "/decimal-constant",
           f"constant {name} written as its decimal value", constants=c, exact=False)
        ne(_replace_name(law, name, f"{value:.2g}"), law, v, base.tag + "/rounded-constant",
           f"constant {name} rounded to 2 digits", constants=c)
    ne(f"-({law})", law, v, base.tag + "/sign", "sign flip", constants=c)


def eval_number(text: str):
    """Value of a constant numeric text such as ``2/9`` (independent evaluator)."""
    with mpmath.workdps(DIGITS):
        return mp_value(text, {})


def _replace_name(text: str, name: str, replacement: str) -> str:
    """Replace every whole-word occurrence of ``name`` (a plain tokeniser on ``ast``)."""
    tree = ast.parse(text.replace("^", "**"), mode="eval")
    spans = sorted((n.col_offset, n.end_col_offset) for n in ast.walk(tree)
                   if isinstance(n, ast.Name) and n.id == name)
    source = text.replace("^", "**").encode()  # ast offsets count UTF-8 bytes
    out, last = [], 0
    for start, end in spans:
        out += [source[last:start], f"({replacement})".encode()]
        last = end
    return b"".join(out + [source[last:]]).decode()


# ---------------------------------------------------------------- realistic laws

PENDULUM = (V("L", 0.1, 10, "log"), V("g", 1, 20))
SPRING = (V("m", 0.01, 10, "log"), V("k", 1, 1000, "log"))
PROJECTILE = (V("v0", 1, 100, "log"), V("theta", 0.02, 1.2), V("g", 1, 20))
STOKES = (V("r", 1e-6, 1e-3, "log"), V("g", 1, 20), V("rho_p", 2000, 8000), V("rho_f", 500, 1500),
          V("u", 1e-4, 0.1, "log"))
POISEUILLE = (V("r", 1e-6, 1e-2, "log"), V("dP", 1e2, 1e6, "log"), V("u", 1e-4, 1, "log"),
              V("L", 1e-2, 10, "log"))
CAPILLARY = (V("gamma", 0.01, 0.1), V("theta", 0.0, 1.4), V("rho", 500, 2000), V("g", 1, 20),
             V("r", 1e-5, 1e-2, "log"))
BOHR = (V("m", 1e-31, 1e-27, "log"), V("q", 1e-19, 1e-18, "log"))
BOHR_CONSTANTS = (("eps", EPS0), ("hbar", HBAR))
RADIAL = (V("M_1", 1e29, 1e31, "log"), V("M_2", 1e29, 1e31, "log"), V("P", 1e4, 1e8, "log"),
          V("i", 0.1, 1.5))
TEMPERATURE = (V("a", 0.0, 0.9), V("S", 100, 3000, "log"), V("b", 0.0, 1.0))
ENZYME = (V("k1", 1e5, 1e8, "log"), V("k2", 1, 1e3, "log"), V("k3", 1, 1e3, "log"),
          V("E_T", 1e-9, 1e-6, "log"), V("S", 1e-6, 1e-2, "log"))
ATWOOD = (V("m1", 2, 10), V("m2", 0.1, 1.9), V("g", 1, 20), V("I", 1e-4, 1e-1, "log"), V("R", 0.01, 0.5))
COULOMB = (V("q1", 1e-19, 1e-15, "log"), V("q2", 1e-19, 1e-15, "log"), V("r", 1e-10, 1e-6, "log"))
GRAVITY = (V("M", 1e20, 1e30, "log"), V("m", 1, 1e4, "log"), V("r", 1e6, 1e12, "log"))
LUMINOSITY = (V("R", 1e6, 1e10, "log"), V("T", 1e3, 1e5, "log"))
PLANCK = (V("nu", 1e9, 1e15, "log"), V("T", 10, 1e4, "log"))
PLANCK_CONSTANTS = (("h", 6.62607015e-34), ("c", C_LIGHT), ("k", K_B))
SETTLING = (V("r", 1e-6, 1e-4, "log"), V("g", 1, 20), V("rho_p", 2000, 8000), V("rho_f", 500, 1500),
            V("u", 1e-3, 1e-1, "log"), V("t", 1e-6, 1e-2, "log"))
ARRHENIUS = (V("A", 1e6, 1e13, "log"), V("E_a", 1e4, 2e5, "log"), V("T", 200, 2000))
GAS = (V("N", 1e20, 1e25, "log"), V("T", 100, 1000), V("V", 1e-3, 1, "log"))
CAPACITOR = (V("Q", 1e-9, 1e-3, "log"), V("C", 1e-12, 1e-3, "log"))
ADIABATIC = (V("P", 1e3, 1e6, "log"), V("V", 1e-3, 1, "log"), V("gamma", 1.1, 1.67))
INCLINE = (V("g", 1, 20), V("theta", 0.3, 1.2), V("mu", 0.0, 0.25), V("t", 0.1, 10),
           V("c_env", 0.1, 5), V("m", 0.5, 10))
KEPLER = (V("a", 1e9, 1e13, "log"), V("M", 1e28, 1e32, "log"))

BASES = [
    Base("pendulum", "{k}*pi*sqrt(L/g)", "2", PENDULUM,
         rewrites=("2*pi*(L/g)**0.5", "2*pi*sqrt(L)/sqrt(g)", "pi*sqrt(4*L/g)", "2*π*sqrt(L/g)",
                   "2*pi*L^(1/2)*g^(-1/2)", "sqrt(4*pi**2*L/g)", "2*pi*sqrt(L)*g**-0.5",
                   "2*pi/sqrt(g/L)", "2*pi*exp(log(L/g)/2)"),
         wrong=("2*pi*sqrt(g/L)", "pi*sqrt(L/g)", "2*pi*(L/g)**0.5001", "2*pi*sqrt(L/g)*(1 + 1e-3)",
                "2*pi*sqrt(L/(g + 0.01))")),
    Base("pendulum-amplitude", "{k}*pi*sqrt(L/g)*(1 + theta0**2/16)", "2",
         (*PENDULUM, V("theta0", 0.1, 0.2)),
         rewrites=("2*pi*sqrt(L/g) + pi*sqrt(L/g)*theta0**2/8",),
         wrong=("2*pi*sqrt(L/g)",)),  # the missing term is 6e-4 .. 2.5e-3 of the total
    Base("spring", "2*pi*sqrt(m/{k}/k)", "1", SPRING,
         rewrites=("2*pi*sqrt(m)/sqrt(k)", "sqrt(4*pi**2*m/k)", "2*pi*(m/k)^0.5", "2*pi/sqrt(k/m)",
                   "pi*sqrt(m/k)*2"),
         wrong=("2*pi*sqrt(k/m)", "2*pi*m/k", "2*pi*sqrt(m/k)**1.001")),
    Base("projectile", "v0**2*sin({k}*theta)/g", "2", PROJECTILE,
         rewrites=("2*v0**2*sin(theta)*cos(theta)/g", "v0^2*2*sin(theta)*cos(theta)/g",
                   "v0*v0*sin(2*theta)/g", "v0**2*2*tan(theta)*cos(theta)**2/g"),
         wrong=("v0**2*sin(theta)/g", "v0**2*sin(2*theta)*g", "v0**2*cos(2*theta)/g",
                "v0**2*sin(2*theta)/(2*g)", "2*v0**2*sin(theta)**2/g")),
    Base("stokes", "{k}*r**2*g*(rho_p - rho_f)/u", "2/9", STOKES,
         rewrites=("2*r**2*g*(rho_p - rho_f)/(9*u)", "2*r^2*g*rho_p/(9*u) - 2*r^2*g*rho_f/(9*u)",
                   "(2/9)*r*r*g*(rho_p - rho_f)/u", "-2*r**2*g*(rho_f - rho_p)/(9*u)"),
         approximate=("0.2222222222222222*r**2*g*(rho_p - rho_f)/u",),
         wrong=("2*r**2*g*(rho_f - rho_p)/(9*u)", "2*r**2*g*(rho_p + rho_f)/(9*u)",
                "2*r**3*g*(rho_p - rho_f)/(9*u)", "2*r**2*g*rho_p/(9*u)", "0.222*r**2*g*(rho_p - rho_f)/u")),
    Base("poiseuille", "pi*r**4*dP/({k}*u*L)", "8", POISEUILLE,
         rewrites=("pi*r^4*dP/(8*u*L)", "π*r**4*dP/(8*u*L)", "pi*(r**2)**2*dP/(8*u*L)",
                   "pi*r**4*dP*(8*u*L)**-1", "0.125*pi*r**4*dP/(u*L)"),
         approximate=("0.39269908169872414*r**4*dP/(u*L)",),
         wrong=("pi*r**3*dP/(8*u*L)", "pi*r**4*dP/(8*u)", "pi*r**4*dP*u/(8*L)", "pi*r**4.001*dP/(8*u*L)")),
    Base("capillary", "{k}*gamma*cos(theta)/(rho*g*r)", "2", CAPILLARY,
         rewrites=("2*cos(theta)*gamma/(r*g*rho)", "gamma*cos(theta)/(rho*g*r/2)",
                   "2*gamma*sin(pi/2 - theta)/(rho*g*r)"),
         wrong=("2*gamma*sin(theta)/(rho*g*r)", "2*gamma*cos(theta)/(rho*g)", "gamma*cos(theta)/(rho*g*r)",
                "2*gamma/(rho*g*r)")),
    Base("bohr", "{k}*pi*eps*hbar**2/(m*q**2)", "4", BOHR, BOHR_CONSTANTS,
         rewrites=("4*pi*eps*hbar*hbar/(m*q*q)", "eps*(2*hbar)**2*pi/(m*q**2)",
                   "4*pi*eps*(hbar/q)**2/m"),
         approximate=("4*3.141592653589793*eps*hbar**2/(m*q**2)", "4*pi*eps*1.0545718e-34**2/(m*q**2)",
                      "4*pi*8.8541878128e-12*hbar**2/(m*q**2)",
                      "1.1126500560536185e-10*hbar**2/(m*q**2)"),
         wrong=("4*pi*eps*hbar/(m*q**2)", "4*pi*eps*hbar**2/(m*q)", "4*pi*eps*hbar**2/(m**2*q**2)",
                "4*pi*eps*1.05e-34**2/(m*q**2)", "pi*eps*hbar**2/(m*q**2)")),
    Base("radial-velocity", "({k}*pi*G*M_2**3/(P*(M_1 + M_2)**2))**(1/3)*sin(i)", "2", RADIAL,
         (("G", G_NEWTON),),
         rewrites=("(2*pi*G/P)**(1/3)*M_2/(M_1 + M_2)**(2/3)*sin(i)",
                   "cbrt(2*pi*G*M_2**3/(P*(M_1 + M_2)**2))*sin(i)",
                   "sin(i)*M_2*(2*pi*G/(P*(M_1+M_2)**2))**(1/3)"),
         wrong=("(2*pi*G*M_1**3/(P*(M_1 + M_2)**2))**(1/3)*sin(i)",
                "(2*pi*G*M_2**3/(P*(M_1 + M_2)**2))**(1/3)*cos(i)",
                "(2*pi*G*M_2**3/(P*(M_1 + M_2)**2))**0.333*sin(i)",
                "(2*pi*G*M_2**3/(P*(M_1 + M_2)))**(1/3)*sin(i)")),
    Base("equilibrium-temperature", "((1 - a)*S/({k}*s*(1 - b/2)))**(1/4)", "4", TEMPERATURE,
         (("s", SIGMA_SB),),
         rewrites=("((1 - a)*S/(2*s*(2 - b)))**0.25", "sqrt(sqrt((1 - a)*S/(4*s*(1 - b/2))))",
                   "((S - a*S)/(4*s - 2*b*s))**(1/4)"),
         wrong=("((1 - a)*S/(4*s*(1 + b/2)))**(1/4)", "((1 + a)*S/(4*s*(1 - b/2)))**(1/4)",
                "((1 - a)*S/(4*s*(1 - b/2)))**(1/3)", "((1 - a)*S/(4*s))**(1/4)")),
    Base("enzyme", "k3*E_T*S/(({k}*k2 + k3)/k1 + S)", "1", ENZYME,
         rewrites=("k1*k3*E_T*S/(k2 + k3 + k1*S)", "E_T*S*k3/(S + k2/k1 + k3/k1)",
                   "k3*E_T/(1 + (k2 + k3)/(k1*S))"),
         wrong=("k3*E_T*S/((k2 + k3)/k1)", "k2*E_T*S/((k2 + k3)/k1 + S)", "k3*E_T*S/((k2 - k3)/k1 + S)",
                "k3*E_T*S/((k2 + k3)*k1 + S)")),
    Base("atwood-pulley", "g*(m1 - m2)/(m1 + m2 + {k}*I/R**2)", "1", ATWOOD,
         rewrites=("g*(m1 - m2)*R**2/((m1 + m2)*R**2 + I)", "(g*m1 - g*m2)/(m1 + m2 + I*R**-2)",
                   "g*(m1 - m2)/(m1 + m2 + I/R/R)"),
         wrong=("g*(m1 - m2)/(m1 + m2)", "g*(m2 - m1)/(m1 + m2 + I/R**2)", "g*(m1 - m2)/(m1 + m2 + I*R**2)",
                "g*(m1 + m2)/(m1 - m2 + I/R**2)")),
    Base("coulomb", "q1*q2/({k}*pi*eps*r**2)", "4", COULOMB, (("eps", EPS0),),
         rewrites=("q1*q2/(4*pi*eps)/r**2", "(q1/r)*(q2/r)/(4*pi*eps)", "q1*q2*r**-2/(4*pi*eps)"),
         approximate=("8987551792.3*q1*q2/r**2", "8.9875517923e9*q1*q2/r**2"),
         wrong=("q1*q2/(4*pi*eps*r)", "q1*q2/(2*pi*eps*r**2)", "9e9*q1*q2/r**2", "q1**2/(4*pi*eps*r**2)")),
    Base("gravity", "{k}*G*M*m/r**2", "1", GRAVITY, (("G", G_NEWTON),),
         rewrites=("G*M*m*r**-2", "G*m*M/(r*r)", "(G*M/r)*(m/r)", "exp(log(G*M*m) - 2*log(r))"),
         wrong=("G*M*m/r", "G*M/r**2", "G*M*m/r**2.001", "G*(M + m)/r**2")),
    Base("luminosity", "{k}*pi*R**2*s*T**4", "4", LUMINOSITY, (("s", SIGMA_SB),),
         rewrites=("4*pi*s*(R*T**2)**2", "pi*(2*R)**2*s*T**4", "4*pi*R^2*s*T^4", "4*pi*R**2*s*(T**2)**2"),
         wrong=("4*pi*R**2*s*T**3", "4*pi*R*s*T**4", "4*pi*R**2*s*T**4.001", "pi*R**2*s*T**4")),
    Base("planck", "{k}*h*nu**3/c**2/(exp(h*nu/(k*T)) - 1)", "2", PLANCK, PLANCK_CONSTANTS,
         rewrites=("2*h*nu**3*exp(-h*nu/(k*T))/(c**2*(1 - exp(-h*nu/(k*T))))",
                   "2*h*nu^3/(c^2*(exp(h*nu/(k*T)) - 1))"),
         wrong=("2*h*nu**3/c**2/(exp(h*nu/(k*T)) + 1)", "2*h*nu**3/c**2*exp(-h*nu/(k*T))",
                "2*h*nu**2/c**2/(exp(h*nu/(k*T)) - 1)")),
    Base("settling-transient", "{k}*r**2*g*(rho_p - rho_f)/(9*u)*(1 - exp(-9*u*t/(2*rho_p*r**2)))", "2",
         SETTLING,
         rewrites=("2*r**2*g*(rho_p - rho_f)/(9*u) - 2*r**2*g*(rho_p - rho_f)/(9*u)*exp(-9*u*t/(2*rho_p*r**2))",
                   "2*r**2*g*(rho_p - rho_f)*(1 - 1/exp(9*u*t/(2*rho_p*r**2)))/(9*u)"),
         wrong=("2*r**2*g*(rho_p - rho_f)/(9*u)*(1 + exp(-9*u*t/(2*rho_p*r**2)))",
                "2*r**2*g*(rho_p - rho_f)/(9*u)*(1 - exp(-9*u*t/(2*rho_f*r**2)))",
                "2*r**2*g*(rho_p - rho_f)/(9*u)")),
    Base("arrhenius", "{k}*A*exp(-E_a/(R*T))", "1", ARRHENIUS, (("R", 8.314462618),),
         rewrites=("A/exp(E_a/(R*T))", "A*exp(-E_a/R/T)", "exp(log(A) - E_a/(R*T))"),
         wrong=("A*exp(E_a/(R*T))", "A*exp(-E_a/(R*T**2))", "A*exp(-E_a*R*T)", "A*exp(-E_a/(R*T))*T")),
    Base("ideal-gas", "{k}*N*k*T/V", "1", GAS, (("k", K_B),),
         rewrites=("N*T*k/V", "k*T*(N/V)", "N*k*T*V**-1"),
         approximate=("N*1.380649e-23*T/V",),
         wrong=("N*k*T*V", "N*k/(T*V)", "N*k*T/V**2")),
    Base("capacitor", "Q**2/({k}*C)", "2", CAPACITOR,
         rewrites=("Q*Q/(2*C)", "0.5*Q**2/C", "(Q/C)**2*C/2", "Q^2*C^-1/2"),
         wrong=("Q**2/C", "Q/(2*C)", "Q**2*C/2", "C**2/(2*Q)")),
    Base("adiabatic", "{k}*P*V**gamma", "1", ADIABATIC,
         rewrites=("P*exp(gamma*log(V))", "V**gamma*P", "P*V*V**(gamma - 1)"),
         wrong=("P*V**(1/gamma)", "P*gamma**V", "P*V**(gamma + 0.001)", "P*V")),
    Base("incline-drag", "{k}*m*g*(sin(theta) - mu*cos(theta))*(t/c_env - m*(1 - exp(-c_env*t/m))/c_env**2)",
         "1", INCLINE,
         rewrites=("m*g*(sin(theta) - mu*cos(theta))*t/c_env - m**2*g*(sin(theta) - mu*cos(theta))"
                   "*(1 - exp(-c_env*t/m))/c_env**2",),
         wrong=("m*g*(sin(theta) + mu*cos(theta))*t/c_env - m**2*g*(sin(theta) + mu*cos(theta))"
                "*(1 - exp(-c_env*t/m))/c_env**2",
                "g*(sin(theta) - mu*cos(theta))*t**2/2")),
    Base("kepler", "{k}*pi*sqrt(a**3/(G*M))", "2", KEPLER, (("G", G_NEWTON),),
         rewrites=("2*pi*a*sqrt(a/(G*M))", "2*pi*a**1.5/sqrt(G*M)", "sqrt(4*pi**2*a**3/(G*M))"),
         wrong=("2*pi*sqrt(a**2/(G*M))", "2*pi*sqrt(a**3/G*M)", "2*pi*a**1.501/sqrt(G*M)")),
]

for _base in BASES:
    add_base(_base)


# ---------------------------------------------------------------- hand-written cases

POS = (V("x", 1e-3, 1e3, "log"), V("y", 1e-3, 1e3, "log"))
WIDE = (V("x", 1e-20, 1e20, "log"),)
SIGNED = (V("x", -1.0, 1.0), V("y", -1.0, 1.0))
AB = (V("a", -5.0, 5.0), V("b", -5.0, 5.0))

# sqrt and **0.5
eq("sqrt(x)", "x**0.5", WIDE, "sqrt", "sqrt(x) = x**(1/2)")
eq("sqrt(x*y)", "sqrt(x)*sqrt(y)", POS, "sqrt", "sqrt(xy) = sqrt(x) sqrt(y) for x, y > 0")
eq("x**1.5", "x*sqrt(x)", WIDE, "sqrt", "x**(3/2) = x sqrt(x)")
eq("x**-0.5", "1/sqrt(x)", WIDE, "sqrt", "x**(-1/2) = 1/sqrt(x)")
eq("sqrt(x)**3", "x**(3/2)", POS, "sqrt", "(x**(1/2))**3 = x**(3/2) for x > 0")
eq("sqrt(x/y)", "sqrt(x)/sqrt(y)", POS, "sqrt", "sqrt(x/y) = sqrt(x)/sqrt(y) for x, y > 0")
eq("sqrt(x**2)", "x", POS, "sqrt", "sqrt(x**2) = x for x > 0")
eq("sqrt(x**2)", "abs(x)", SIGNED, "sqrt", "sqrt(x**2) = |x| for real x")
eq("(x**4)**0.25", "abs(x)", SIGNED, "sqrt", "(x**4)**(1/4) = |x| for real x")
eq("sqrt(sqrt(x))", "x**0.25", WIDE, "sqrt", "nested square roots")
ne("sqrt(x)", "x**0.50001", POS, "sqrt/near-miss", "exponent 0.5 vs 0.50001 (x**1e-5 - 1 up to 7e-5)")
ne("sqrt(x)", "x**(1/3)", POS, "sqrt/near-miss", "square root vs cube root")

# positivity guard: identities of positive bases must not be used on signed domains
ne("sqrt(x**2)", "x", SIGNED, "positivity", "sqrt(x**2) = |x| differs from x for x < 0")
ne("(x**2)**0.5", "x", SIGNED, "positivity", "(x**2)**(1/2) = |x|")
ne("log(x**2)", "2*log(x)", SIGNED, "positivity", "log(x**2) is defined for x < 0, 2 log(x) is not")
eq("log(x**2)", "2*log(abs(x))", SIGNED, "positivity", "log(x**2) = 2 log|x| for x != 0")
ne("(x**2)**(1/4)", "sqrt(x)", SIGNED, "positivity", "defined for x < 0 on the left side only")
ne("sqrt(x*y)", "sqrt(x)*sqrt(y)", SIGNED, "positivity", "x, y < 0: left defined, right not")
ne("exp(log(x))", "x", SIGNED, "positivity", "exp(log(x)) is undefined for x < 0")
ne("(x*y)**2.5", "x**2.5*y**2.5", SIGNED, "positivity", "x, y < 0: left defined, right not")

# log and exp identities
eq("log(x*y)", "log(x) + log(y)", POS, "log-exp", "log(xy) = log x + log y for x, y > 0")
eq("log(x/y)", "log(x) - log(y)", POS, "log-exp", "log(x/y) = log x - log y")
eq("log(x**3)", "3*log(x)", POS, "log-exp", "log(x**3) = 3 log x for x > 0")
eq("exp(a + b)", "exp(a)*exp(b)", AB, "log-exp", "exp(a+b) = exp(a) exp(b)")
eq("exp(2*log(x))", "x**2", POS, "log-exp", "exp(2 log x) = x**2 for x > 0")
eq("log(exp(a))", "a", AB, "log-exp", "log(exp(a)) = a for real a")
eq("log10(x)", "log(x)/log(10)", WIDE, "log-exp", "change of base")
eq("log(x, 2)", "log2(x)", WIDE, "log-exp", "log(x, 2) is log2(x)")
eq("ln(x)", "log(x)", WIDE, "log-exp", "ln is the natural log")
eq("exp(-a)", "1/exp(a)", AB, "log-exp", "exp(-a) = 1/exp(a)")
eq("exp(a)**2", "exp(2*a)", AB, "log-exp", "exp(a)**2 = exp(2a)")
eq("sqrt(exp(a))", "exp(a/2)", AB, "log-exp", "sqrt(exp a) = exp(a/2)")
eq("log(sqrt(x))", "log(x)/2", POS, "log-exp", "log(sqrt x) = log(x)/2")
eq("x**y", "exp(y*log(x))", (V("x", 0.1, 10, "log"), V("y", -3.0, 3.0)), "log-exp", "x**y = exp(y log x), x > 0")
eq("10**log10(x)", "x", WIDE, "log-exp", "10**log10(x) = x", exact=True)
eq("exp(a)*exp(-b)", "exp(a - b)", AB, "log-exp", "exp(a) exp(-b) = exp(a-b)")
eq("log(x**y)", "y*log(x)", (V("x", 0.1, 10, "log"), V("y", -3.0, 3.0)), "log-exp", "log(x**y) = y log x, x > 0")
ne("log(x)", "log10(x)", POS, "log-exp/near-miss", "natural vs decimal log")
ne("log(1 + x)", "log(x)", POS, "log-exp/near-miss", "log(1+x) vs log(x)")
ne("exp(a)", "exp(a) + 1e-3", (V("a", 0.0, 1.0),), "log-exp/near-miss", "missing term 1e-3 .. 4e-4 of the total")
ne("exp(-a)", "exp(a)", AB, "log-exp/near-miss", "sign of the exponent")
ne("log(x*y)", "log(x)*log(y)", POS, "log-exp/near-miss", "product of logs")

# float64 cancellation; the pairs are exactly equal
KE = "m*c**2*(1/sqrt(1 - v**2/c**2) - 1)"
KE_STABLE = "m*v**2/(sqrt(1 - v**2/c**2)*(1 + sqrt(1 - v**2/c**2)))"
SLOW = (V("m", 1e-31, 1e-27, "log"), V("v", 1.0, 1e3, "log"))
CRAWL = (V("m", 1e-31, 1e-27, "log"), V("v", 1e-4, 1.0, "log"))
FAST = (V("m", 1e-31, 1e-27, "log"), V("v", 1e7, 2e8, "log"))
LIGHT = (("c", C_LIGHT),)
SMALL = (V("x", 1e-9, 1e-3, "log"),)
TINY = (V("x", 1e-12, 1e-9, "log"),)
eq(KE, KE_STABLE, SLOW, "cancellation", "gamma - 1 = beta^2 gamma^2/(gamma + 1)... rationalised", constants=LIGHT)
eq(KE, KE_STABLE, CRAWL, "cancellation", "same, v/c < 4e-9: float64 gives 0 for the left side", constants=LIGHT)
eq(KE, KE_STABLE, FAST, "cancellation", "same identity, no cancellation", constants=LIGHT)
eq(KE, "m*v**2/2", CRAWL, "cancellation/limit", "relative difference 3/4 v^2/c^2 < 1e-16",
   constants=LIGHT, exact=False)
eq("1 - cos(x)", "2*sin(x/2)**2", SMALL, "cancellation", "1 - cos x = 2 sin^2(x/2)")
eq("1 - cos(x)", "2*sin(x/2)**2", TINY, "cancellation", "same; float64 gives 0 for the left side")
eq("log(1 + x)", "2*atanh(x/(2 + x))", (V("x", 1e-15, 1e-6, "log"),), "cancellation",
   "log(1+x) = 2 atanh(x/(2+x))")
eq("log(1 + x)", "log((1 + x)**2)/2", (V("x", 1e-15, 1e-6, "log"),), "cancellation", "log((1+x)^2)/2 = log(1+x), 1+x > 0")
eq("exp(x) - 1", "2*exp(x/2)*sinh(x/2)", (V("x", 1e-15, 1e-5, "log"),), "cancellation",
   "exp(x) - 1 = 2 exp(x/2) sinh(x/2)")
eq("sqrt(1 + x) - 1", "x/(sqrt(1 + x) + 1)", (V("x", 1e-16, 1e-6, "log"),), "cancellation",
   "rationalised difference of square roots")
eq("(a + d)**2 - a**2", "d*(2*a + d)", (V("a", 1.0, 10.0), V("d", 1e-12, 1e-8, "log")), "cancellation",
   "difference of squares")
eq("1/(1 - x) - 1", "x/(1 - x)", (V("x", 1e-15, 1e-8, "log"),), "cancellation", "1/(1-x) - 1 = x/(1-x)")
eq("cosh(x) - 1", "2*sinh(x/2)**2", (V("x", 1e-10, 1e-4, "log"),), "cancellation", "cosh x - 1 = 2 sinh^2(x/2)")
eq("1/sqrt(1 - beta**2) - 1", "beta**2/(sqrt(1 - beta**2)*(1 + sqrt(1 - beta**2)))",
   (V("beta", 1e-9, 1e-4, "log"),), "cancellation", "Lorentz factor minus one, rationalised; beta declared")
eq("log(m0) - log(m0 - dm)", "-log(1 - dm/m0)", (V("m0", 1e3, 1e5, "log"), V("dm", 1e-9, 1e-6, "log")),
   "cancellation", "rocket mass ratio: log a - log b = log(a/b)")
eq("tan(x) - sin(x)", "2*tan(x)*sin(x/2)**2", (V("x", 1e-6, 1e-3, "log"),), "cancellation",
   "tan x - sin x = tan x (1 - cos x)")
eq("(1 + x)**2 - 1", "x*(2 + x)", (V("x", 1e-16, 1e-8, "log"),), "cancellation", "expand (1+x)^2 - 1")
eq("h*nu/(exp(h*nu/(k*T)) - 1)", "h*nu*exp(-h*nu/(2*k*T))/(2*sinh(h*nu/(2*k*T)))",
   (V("nu", 1e3, 1e6, "log"), V("T", 100, 1000)), "cancellation",
   "exp(z) - 1 = 2 exp(z/2) sinh(z/2); z = h nu/kT < 5e-10", constants=PLANCK_CONSTANTS)
eq("(a + d)**2 - a**2", "2*a*d", (V("a", 1.0, 10.0), V("d", 1e-12, 1e-8, "log")), "cancellation/limit",
   "relative difference d/(2a) < 5e-9", exact=False)
ne("1 - cos(x)", "sin(x/2)**2", SMALL, "cancellation/near-miss", "off by a factor 2")
ne("exp(x) - 1", "x + x**2", (V("x", 1e-6, 1e-2, "log"),), "cancellation/near-miss", "relative difference ~x/2")
ne("sqrt(1 + x) - 1", "x/2", (V("x", 1e-16, 1e-2, "log"),), "cancellation/near-miss", "relative difference ~x/4")
ne("log(1 + x)", "x", (V("x", 1e-16, 1e-3, "log"),), "cancellation/near-miss", "relative difference ~x/2")
ne(KE, "m*v**2/2", FAST, "cancellation/near-miss", "Newtonian limit wrong at v ~ c", constants=LIGHT)
ne(KE, "m*v**2", CRAWL, "cancellation/near-miss", "twice the kinetic energy; left side 0 in float64",
   constants=LIGHT)
ne("(a + d)**2 - a**2", "a*d", (V("a", 1.0, 10.0), V("d", 1e-12, 1e-8, "log")), "cancellation/near-miss",
   "half the difference")
ne("1/(1 - x) - 1", "-x/(1 - x)", (V("x", 1e-15, 1e-8, "log"),), "cancellation/near-miss", "sign flip")
ne("1 - cos(x)", "2*(1 - cos(x))", TINY, "cancellation/near-miss", "off by a factor 2")
ne("m*c**2*(1/sqrt(1 - 2*v**2/c**2) - 1)", KE, CRAWL, "cancellation/near-miss",
   "factor 2 inside the root doubles the energy", constants=LIGHT)
ne("2*" + KE, KE, CRAWL, "cancellation/near-miss", "twice the kinetic energy", constants=LIGHT)

# singularities inside the domain
POLE = (V("x", 0.0, 2.0),)
eq("1/(x - 1)", "-1/(1 - x)", POLE, "singularity", "sign moved into the denominator")
eq("x/(x - 1)", "1 + 1/(x - 1)", POLE, "singularity", "polynomial division")
eq("(x**2 - 1)/(x - 1)", "x + 1", POLE, "singularity", "removable singularity at x = 1")
eq("1/(x - 1)**2", "1/(x**2 - 2*x + 1)", POLE, "singularity", "expanded square; float64 cancellation near 1")
eq("1/(x - 1) + 1/(x + 1)", "2*x/(x**2 - 1)", POLE, "singularity", "partial fractions")
eq("tan(x)", "sin(x)/cos(x)", (V("x", 0.0, 3.0),), "singularity", "tan = sin/cos, pole at pi/2")
eq("F/(m*(w0**2 - w**2))", "F/(m*(w0 - w)*(w0 + w))", (V("F", 1, 10), V("m", 1, 2), V("w", 0, 20)),
   "singularity", "driven oscillator amplitude, resonance at w = w0", constants=(("w0", 10.0),))
eq("f*d/(d - f)", "1/(1/f - 1/d)", (V("d", 0.1, 2.0),), "singularity", "thin lens, pole at d = f",
   constants=(("f", 0.5),))
eq("sqrt(x - 1)", "(x - 1)**0.5", POLE, "singularity", "defined on half the domain only")
ne("1/(x - 1)", "1/(1 - x)", POLE, "singularity/near-miss", "sign flip")
ne("1/(x - 1)", "1/abs(x - 1)", POLE, "singularity/near-miss", "absolute value")
ne("1/(x - 1)", "1/(x - 1.01)", POLE, "singularity/near-miss", "pole moved by 0.01")
ne("x/(x - 1)", "1/(x - 1)", POLE, "singularity/near-miss", "numerator dropped")
ne("1/(x**2 - 1)", "1/(x - 1)**2", POLE, "singularity/near-miss", "different second factor")
ne("tan(x)", "sin(x)/cos(x)**2", (V("x", 0.0, 3.0),), "singularity/near-miss", "wrong power of cos")
ne("F/(m*(w0**2 - w**2))", "F/(m*(w**2 - w0**2))", (V("F", 1, 10), V("m", 1, 2), V("w", 0, 20)),
   "singularity/near-miss", "sign flip", constants=(("w0", 10.0),))
ne("sqrt(x - 1)", "sqrt(abs(x - 1))", POLE, "singularity/near-miss", "defined on different halves")

# near misses in realistic laws
ne("x**2", "x**2.001", (V("x", 0.5, 50, "log"),), "near-miss", "exponent 2 vs 2.001")
ne("G*M/r**2", "G*M/r**2.001", (V("M", 1e20, 1e30, "log"), V("r", 1e6, 1e12, "log")), "near-miss",
   "exponent -2 vs -2.001 (r**-0.001 ~ 0.97)", constants=(("G", G_NEWTON),))
ne("v0*t", "v0*t + g*t**2/2", (V("v0", 100, 200), V("t", 0.01, 0.04)), "near-miss",
   "missing term g t/(2 v0) < 2e-3 of the total", constants=(("g", 9.81),))
ne("L0", "L0*(1 + alpha*dT)", (V("L0", 1, 10), V("alpha", 1e-5, 2e-5), V("dT", 10, 100)), "near-miss",
   "missing thermal expansion term (up to 2e-3)")
ne("m1*g/(m1 + m2)", "m2*g/(m1 + m2)", (V("m1", 1, 10), V("m2", 1, 10)), "near-miss", "swapped masses",
   constants=(("g", 9.81),))
ne("x**y", "y**x", (V("x", 2, 5), V("y", 2, 5)), "near-miss", "swapped base and exponent")
ne("sin(a)*cos(b)", "sin(b)*cos(a)", AB, "near-miss", "swapped angles")
ne("k1*S/(k2 + S)", "k2*S/(k1 + S)", (V("k1", 1, 10), V("k2", 1, 10), V("S", 0.1, 10, "log")), "near-miss",
   "swapped rate constants")
ne("exp(-E_a/(k*T))", "exp(E_a/(k*T))", (V("E_a", 1e-21, 1e-19, "log"), V("T", 100, 1000)), "near-miss",
   "sign flip in the exponent", constants=(("k", K_B),))
ne("-g*z*B/(T + B*z)", "-g*z*B/(T - B*z)", (V("z", 0, 1000), V("B", 1e-3, 1e-2), V("T", 200, 300)),
   "near-miss", "sign flip in the denominator", constants=(("g", 9.81),))
ne("x*(1 - exp(-t))", "x*(1 - exp(t))", (V("x", 1, 10), V("t", 0.1, 5)), "near-miss", "sign flip")
eq("x + 1e-10", "x", (V("x", 1, 10),), "near-miss/within", "offset 1e-10 of the total", exact=False)
ne("x + 1e-3", "x", (V("x", 0.5, 1),), "near-miss", "offset 1e-3 of the total")

# names that clash with SymPy built-ins, declared as variables
IR = (V("I", 1e-3, 10, "log"), V("R", 1, 1e4, "log"))
eq("I*R", "R*I", IR, "names", "I is a current")
eq("I**2*R", "I*I*R", IR, "names", "Joule heating")
eq("I*R", "R/I**-1", IR, "names", "I**-1 is 1/I")
EX = (V("E", 1.0, 10.0), V("x", 1, 10))
ne("E*x", "exp(1)*x", EX, "names", "E is a variable, not Euler's number")
eq("E/x", "E*x**-1", EX, "names", "E is a variable")
ne("E**2", "exp(2)", EX, "names", "E is a variable")
ne("exp(E)", "E", EX, "names", "exp of a variable named E")
STN = (V("S", 1e-26, 1e-24, "log"), V("T", 1, 1000), V("N", 1e20, 1e25, "log"), V("E", 1e-21, 1e-19, "log"))
eq("S*T", "T*S", STN, "names", "S is an entropy")
eq("S/N", "S*N**-1", STN, "names", "S and N are variables")
eq("E - T*S", "E - S*T", STN, "names", "free energy")
ne("E - T*S", "E + T*S", STN, "names", "free energy, sign flip")
eq("N*S", "S*N", STN, "names", "N is a number of particles")
QC = (V("Q", 1e-9, 1e-3, "log"), V("C", 1e-12, 1e-3, "log"))
eq("Q*C", "C*Q", QC, "names", "Q is a charge, C a capacitance")
ne("Q/C", "C/Q", QC, "names", "swapped")
GB = (V("gamma", 1.1, 1.67), V("beta", 0.0, 0.99), V("x", 1, 10))
eq("gamma*x", "x*gamma", GB, "names", "gamma is an adiabatic index")
ne("gamma", "0.5772156649015329", GB, "names", "gamma is not the Euler-Mascheroni constant")
eq("beta**2", "beta*beta", GB, "names", "beta is v/c")
eq("sqrt(1 - beta**2)", "sqrt((1 - beta)*(1 + beta))", GB, "names", "difference of squares")
ne("beta*x", "x", GB, "names", "beta is a variable, not the Beta function")
PI_VAR = (V("pi", 1.0, 2.0), V("x", 1, 10))
ne("pi*x", "3.141592653589793*x", PI_VAR, "names", "pi declared as a variable is that variable")
eq("pi*x", "x*pi", PI_VAR, "names", "pi declared as a variable")

# targets of tiny and huge magnitude: a fixed absolute tolerance would accept everything
X1 = (V("x", 1, 10),)
ne("2e-9*x", "3e-9*x", X1, "magnitude", "1e-8 targets")
eq("2e-9*x", "1.9999999998e-9*x", X1, "magnitude", "fitted 1e-10 relative", exact=False)
ne("1e-15*x", "1.1e-15*x", X1, "magnitude", "1e-15 targets")
eq("1e-15*x", "1.0000000001e-15*x", X1, "magnitude", "fitted 1e-10 relative", exact=False)
ne("1e-10*(x - y)", "1e-10*(y - x)", (V("x", 0, 1), V("y", 0, 1)), "magnitude", "sign flip, crossing zero")
ne("1e-15*(x + y)", "1e-15*(x - y)", (V("x", 0, 1), V("y", 0, 1)), "magnitude", "sign of a term")
TINY_MASSES = (V("m1", 1e-31, 1e-27, "log"), V("m2", 1e-31, 1e-27, "log"), V("r", 1e-10, 1e-6, "log"))
eq("G*m1*m2/r", "G*m1*m2*r**-1", TINY_MASSES, "magnitude", "1e-63 energies", constants=(("G", G_NEWTON),))
ne("G*m1*m2/r", "1.01*G*m1*m2/r", TINY_MASSES, "magnitude", "1e-63 energies, 1%", constants=(("G", G_NEWTON),))
ne("m*v**2/2", "m*v**2/3", (V("m", 1e-31, 1e-27, "log"), V("v", 1, 1e3, "log")), "magnitude", "1e-31 kg")
ne("q**2/(4*pi*eps*r)", "q**2/(4*pi*eps*r**1.001)", (V("q", 1e-19, 1e-18, "log"), V("r", 1e-10, 1e-8, "log")),
   "magnitude", "exponent near-miss at 1e-28 J", constants=(("eps", EPS0),))
ne("h*nu", "1.001*h*nu", (V("nu", 1e9, 1e15, "log"),), "magnitude", "1e-25 J photon energies",
   constants=(("h", 6.62607015e-34),))
ne("M*c**2", "M*c**2.001", (V("M", 1e20, 1e27, "log"),), "magnitude", "1e44 J rest energies",
   constants=LIGHT)
eq("M*c**2", "M*c*c", (V("M", 1e20, 1e27, "log"),), "magnitude", "1e44 J", constants=LIGHT)
eq("1e-10*x + 1e-20", "1e-10*x", X1, "magnitude", "offset 1e-10 of the total", exact=False)
ne("x**8 + 1e-16", "x**8", (V("x", 1e-3, 1e3, "log"),), "magnitude/range",
   "16 decades of target: +1e-16 is 1e8 times the smallest targets")

eq("A*(exp(-E_a/R))**(1/T)", "A*exp(-E_a/(R*T))", ARRHENIUS, "log-exp",
   "(e^u)^v = e^(uv); exp(-E_a/R) underflows to 0 in float64", constants=(("R", 8.314462618),))

# inverse and hyperbolic functions, trigonometric identities
eq("atan2(y, x)", "atan(y/x)", (V("x", 0.1, 10), V("y", -10, 10)), "functions", "atan2 = atan(y/x) for x > 0")
ne("atan2(y, x)", "atan(y/x)", SIGNED, "functions", "atan2 differs by pi for x < 0")
eq("asin(x)", "atan(x/sqrt(1 - x**2))", (V("x", -0.99, 0.99),), "functions", "asin via atan")
eq("acosh(x)", "log(x + sqrt(x**2 - 1))", (V("x", 1.0, 10.0),), "functions", "acosh via log")
eq("asinh(x)", "log(x + sqrt(x**2 + 1))", (V("x", -10.0, 10.0),), "functions", "asinh via log")
eq("atanh(x)", "log((1 + x)/(1 - x))/2", (V("x", -0.99, 0.99),), "functions", "atanh via log")
eq("sinh(a)", "(exp(a) - exp(-a))/2", AB, "functions", "definition of sinh")
eq("tanh(a)", "(exp(2*a) - 1)/(exp(2*a) + 1)", AB, "functions", "tanh via exp")
eq("cosh(a)**2 - sinh(a)**2", "1", AB, "functions", "hyperbolic Pythagoras")
eq("sin(a)**2 + cos(a)**2", "1", AB, "functions", "Pythagoras")
eq("sin(2*a)", "2*sin(a)*cos(a)", AB, "functions", "double angle")
eq("cos(2*a)", "1 - 2*sin(a)**2", AB, "functions", "double angle")
eq("sin(a + pi)", "-sin(a)", AB, "functions", "half-period shift")
eq("sin(x)", "sin(x + 6.283185307179586)", (V("x", 0.1, 3.0),), "functions", "decimal 2 pi", exact=False)
ne("sin(a)", "cos(a)", AB, "functions", "sin vs cos")
ne("asinh(x)", "log(x + sqrt(x**2 - 1))", (V("x", 1.0, 10.0),), "functions", "acosh form for asinh")

# float64 overflow in intermediates
eq("cosh(x)/exp(x)", "(1 + exp(-2*x))/2", (V("x", 0.0, 1000.0),), "overflow",
   "cosh x = (e^x + e^-x)/2; float64 inf/inf above x = 710")
eq("sqrt(x**2 + y**2)", "x*sqrt(1 + (y/x)**2)", (V("x", 1e150, 1e200, "log"), V("y", 1e150, 1e200, "log")),
   "overflow", "hypotenuse, x > 0; x**2 overflows")
eq("sqrt(x**4)/x", "x", (V("x", 1e40, 1e120, "log"),), "overflow", "x**4 overflows above 1e77")
ne("sqrt(x**4)/x", "2*x", (V("x", 1e40, 1e120, "log"),), "overflow/near-miss", "factor 2; x**4 overflows")
ne("sqrt(x**2 + y**2)*(1 + 1e-3*x**2/(x**2 + 1e308))", "sqrt(x**2 + y**2)",
   (V("x", 1e100, 1e200, "log"), V("y", 1e100, 1e200, "log")), "overflow/near-miss",
   "contrived: 1e-3 larger where x > 1e154, exactly where float64 overflows on both sides")
ne("sqrt(x**4)/x", "2*sqrt(x**4)/x", (V("x", 1e80, 1e120, "log"),), "overflow/near-miss",
   "factor 2; both sides inf in float64 at every point")

# principal roots of negative numbers, and domain restrictions lost at parse time
eq("cbrt(x)", "x**(1/3)", SIGNED, "roots", "cbrt is the principal cube root; both undefined for x < 0")
ne("cbrt(x)", "-cbrt(-x)", SIGNED, "roots", "defined on opposite halves")
ne("x**(2/3)", "cbrt(x**2)", SIGNED, "roots", "x**(2/3) undefined for x < 0, cbrt(x**2) defined")
eq("x**(1/3)", "x**0.3333333333333333", POS, "roots", "decimal exponent within 1e-16", exact=False)
ne("sqrt(x)**2", "x", SIGNED, "roots", "sqrt(x)**2 has no real value for x < 0",
   bug="SymEngine rewrites sqrt(x)**2 to x while parsing, so the candidate becomes defined for x < 0 "
       "and is proven 'identical'; the domain restriction of the text is lost")

# regions where both sides are exactly zero (MechBench's clamps ((1 + |c| - |c - 1|)/2)**2):
# at high precision both are rounding residues of 0 there, which is agreement, not a counterexample
CLAMP_A = (V("a", 0.0, 10.0),)
eq("((1 + Abs((a - 3)/7) - Abs((a - 3)/7 - 1))/2)**2", "((7 + Abs(a - 3) - Abs(a - 10))/14)**2", CLAMP_A,
   "zero-region", "clamp of (a - 3)/7 to [0, 1], squared; zero for a <= 3")
eq("((1 + Abs((a - 3)/7) - Abs((a - 3)/7 - 1))/2)**2*(a + 1)",
   "(a + 1)*(Abs(a - 3)/14 - Abs(a - 10)/14 + 1/2)**2", CLAMP_A, "zero-region", "clamp times a factor")
eq("(x + Abs(x))/2*(y + 1/3)", "(x*y + Abs(x)*y + (x + Abs(x))/3)/2", (V("x", -1, 1), V("y", 0, 2)),
   "zero-region", "max(x, 0) times a factor, expanded; zero for x <= 0")
eq("(x + sqrt(x**2))*exp(y/3)", "(x + Abs(x))*exp(y/3)", (V("x", -1, 1), V("y", 0, 2)),
   "zero-region", "max-like form with sqrt(x**2) = |x|")
ne("((1 + Abs((a - 3)/7) - Abs((a - 3)/7 - 1))/2)**2", "((1 + Abs((a - 3)/7) - Abs((a - 3)/7 - 1.001))/2)**2",
   CLAMP_A, "zero-region/near-miss", "a shifted breakpoint: no longer zero for a <= 3")
ne("(x + Abs(x))/2*(y + 1/3)", "(x + Abs(x))/2*(y + 1/3) + (Abs(x) - x)/1000", (V("x", -1, 1), V("y", 0, 2)),
   "zero-region/near-miss", "equal where x > 0, zero against non-zero where x < 0")
ne("((1 + Abs((a - 3)/7) - Abs((a - 3)/7 - 1))/2)**2", "1.01*((1 + Abs((a - 3)/7) - Abs((a - 3)/7 - 1))/2)**2",
   CLAMP_A, "zero-region/near-miss", "both zero for a <= 3, 1% apart elsewhere")
