"""The tape compiler: SymEngine expressions -> postfix tapes (``fastscore.kernels.tape``).

A tape is evaluated by one shared Numba kernel (``kernels.evaluate``); nothing is
compiled per formula.  The compiler is plain Python, outside the kernels, so editing
it does not invalidate Numba's cache of them.  It:

- folds every subexpression without free symbols to one float64 constant (evaluated
  by SymEngine at 80 bits, so ``log(2)``, ``pi**2`` or ``sqrt(3)/2`` cost nothing at run
  time; ``atan2``, which SymEngine cannot evaluate in multi-precision, in double); a
  constant that is not real (e.g. ``asin(3)``) becomes NaN;
- turns SymEngine's ``Add(a, Mul(-1, b))`` into ``a - b`` and ``Mul(a, Pow(b, -1))`` into
  ``a / b``, keeps rational coefficients exact as ``p * ... / q``;
- emits ``x**n`` for integer ``|n| <= 32`` as POWI (repeated squaring), ``x**(1/2)`` as
  SQRT, ``x**(1/3)`` as CBRT (NaN for a negative base: SymEngine's principal root is
  complex there), ``exp(u)`` (``E**u``) as EXP, anything else as POW;
- fuses a constant or variable operand into the binary instruction using it and
  orders commutative operands deepest first, keeping tapes short and stacks shallow
  (``fastscore.tapes.instructions``);
- keeps shared subexpressions shared when the tree is large: an expression whose tree
  has more than ``MAX_TREE_NODES`` nodes (a 20-step chain ``a_i = sin(a_{i-1}) +
  cos(a_{i-1})`` is a tree of 2**20 nodes over 60 distinct ones) is compiled over its
  distinct subexpressions instead, each once: the first use in tape order computes it
  and STOREs it in a kept row, later uses LOAD it.  The operand order is the one the
  tree would give, so the values are bit for bit the same; the work is linear in the
  number of distinct subexpressions.  Smaller trees are compiled as trees (no lookups).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import symengine as se

from fastscore.support.caches import memoized
from fastscore.tapes.instructions import DEPTH, Code, binary, chain, push_const
from fastscore.kernels import opcodes as op
from fastscore.kernels.tape import Tape

__all__ = ["MAX_POWI", "MAX_TREE_NODES", "UnsupportedExpression", "compile_tape", "constant_value"]

MAX_POWI = 32
"""Largest ``|n|`` emitted as POWI; larger integer exponents use POW (libm ``pow``)."""

MAX_TREE_NODES = 5_000
"""Nodes a tree is compiled as a tree before its distinct subexpressions are shared;
also the largest constant subexpression folded in a shared compilation."""

_CONSTANT_BITS = 80
_THIRD = se.Rational(1, 3)
_THIRD_VALUE = 1 / 3

_UNARY = {
    se.sin: (op.SIN,),
    se.cos: (op.COS,),
    se.tan: (op.TAN,),
    se.asin: (op.ASIN,),
    se.acos: (op.ACOS,),
    se.atan: (op.ATAN,),
    se.sinh: (op.SINH,),
    se.cosh: (op.COSH,),
    se.tanh: (op.TANH,),
    se.asinh: (op.ASINH,),
    se.acosh: (op.ACOSH,),
    se.atanh: (op.ATANH,),
    se.log: (op.LOG,),
    se.Abs: (op.ABS,),
    se.sign: (op.SIGN,),
    se.sec: (op.COS, op.RDIV_C),
    se.csc: (op.SIN, op.RDIV_C),
    se.cot: (op.TAN, op.RDIV_C),
}
"""SymEngine one-argument function -> instructions applied to its argument (an
RDIV_C here means ``1 / top``)."""

class UnsupportedExpression(ValueError):
    """The expression holds a node (or a free symbol) that tapes cannot evaluate."""


def compile_tape(expr: se.Basic, variables: Sequence[str]) -> Tape:
    """Compile a SymEngine expression; ``variables`` gives the row order of ``X``.

    Raises UnsupportedExpression for a node type without an instruction, a
    non-finite symbolic constant (``oo``, ``zoo``, ``nan``), a free symbol not in
    ``variables``, or a constant subexpression of more than ``MAX_TREE_NODES`` nodes
    (in a shared compilation)."""
    index, names = _variable_index(variables)
    if not isinstance(expr, se.Basic):
        raise TypeError(f"expected a SymEngine expression, got {type(expr).__name__}")
    try:
        compiler = _Compiler(index, _codes(names))
        code = compiler.emit(expr)
        ops, args, depth = code.ops, code.args, code.depth
    except _TreeTooLarge:
        compiler = _SharingCompiler(index, expr)
        ops, args, depth = compiler.compile(expr)
    return Tape(
        np.array(ops, dtype=np.int32),
        np.array(args, dtype=np.float64),
        depth,
        compiler.n_variables,
        names,
    )


def _variable_index(variables: Sequence[str]) -> tuple[dict[str, int], tuple[str, ...]]:
    """Name -> row of ``X``, and the names; cached for a tuple of str (``Domain.names``)."""
    if type(variables) is tuple:
        index, names = _names_index(variables)
        if names == variables:  # the cache key compared equal: same strings
            return index, names
    index = {str(name): i for i, name in enumerate(variables)}
    if len(index) != len(variables):
        raise ValueError(f"duplicate names in variables {list(variables)!r}")
    return index, tuple(index)


@memoized(256)
def _names_index(variables: tuple[str, ...]) -> tuple[dict[str, int], tuple[str, ...]]:
    """``_variable_index`` of a tuple (not read back unless its names are strings)."""
    return _variable_index(list(variables))


def constant_value(expr: se.Basic) -> float:
    """Float64 value of an expression without free symbols, as a tape pushes it (NaN
    when not real; raises UnsupportedExpression for ``oo``, ``zoo``, ``nan``)."""
    return _constant_value(expr)


def _constant_value(expr: se.Basic) -> float:
    """Float64 value of an expression without free symbols (NaN when not real)."""
    value = _KIND_VALUES.get(type(expr))
    if value is not None:
        return value
    if expr.is_Rational:
        return _rational_value(expr)
    return _evaluated(expr, str(expr))


@memoized(8192)
def _evaluated(expr: se.Basic, text: str) -> float:
    """``_constant_value`` of a non-rational constant (cached: ``pi``, ``sqrt(2)`` or
    ``(1/4)*4**(3/4)`` recur).  ``text`` is ``str(expr)``: it keeps apart expressions
    SymEngine deems equal but which differ in a signed zero, like ``atan2(0.0, -1)``
    and ``atan2(-0.0, -1)``."""
    try:
        value = complex(expr.n(_CONSTANT_BITS))
    except RuntimeError:  # no multi-precision evaluation (atan2): plain double
        try:
            return float(expr)
        except RuntimeError as error:  # oo, zoo, nan: SymEngine cannot evaluate them
            raise UnsupportedExpression(
                f"cannot evaluate constant {type(expr).__name__} {expr}"
            ) from error
    return value.real if value.imag == 0.0 else float("nan")


@memoized(8192)
def _rational_value(number: se.Basic) -> float:
    """Float64 value of an exact Integer or Rational (cached: exact numbers recur)."""
    return _ratio(*number.get_num_den())


def _rational_parts(number: se.Basic) -> tuple[float, float]:
    """Float64 numerator and denominator of an exact Integer or Rational."""
    if type(number) in _INTEGER_KINDS:
        return _constant_value(number), 1.0
    return _fraction_parts(number)


@memoized(8192)
def _fraction_parts(number: se.Basic) -> tuple[float, float]:
    """``_rational_parts`` of a Rational (cached: coefficients recur)."""
    num, den = number.get_num_den()
    return _ratio(num), _ratio(den)


def _ratio(num: int, den: int = 1) -> float:
    """Correctly rounded ``num / den`` of Python integers; ±inf when out of range."""
    try:
        return int(num) / int(den)
    except OverflowError:
        return float("inf") if (num > 0) == (den > 0) else float("-inf")


def _small_int(value: float) -> int | None:
    return int(value) if value.is_integer() and abs(value) <= MAX_POWI else None


def _is_negative(number: se.Basic) -> bool:
    """``_constant_value(number) < 0`` for a number, without evaluating an Integer
    (exact sign) nor a non-negative Rational (a negative one may round to -0.0)."""
    kind = type(number)
    if kind in _INTEGER_KINDS:
        return number.is_negative
    if kind in _RATIONAL_KINDS and not number.is_negative:
        return False
    return _constant_value(number) < 0


def _is_third(exponent: se.Basic, value: float) -> bool:
    """Whether the exponent (of float64 value ``value``) is exactly ``±1/3``."""
    return abs(value) == _THIRD_VALUE and (exponent == _THIRD or exponent == -_THIRD)


class _Codes(dict):
    """Subexpression -> (its code, its tree nodes, the rows of ``X`` it reads): the codes
    emitted so far over one tuple of variables (`_codes`), bounded: past
    ``MAX_REMEMBERED`` instructions in all, it starts again empty."""

    __slots__ = ("instructions",)

    def __init__(self):
        super().__init__()
        self.instructions = 0

    def put(self, expr: se.Basic, code: Code, nodes: int, n_variables: int) -> None:
        self.instructions += len(code.ops)
        if self.instructions > MAX_REMEMBERED:
            self.clear()
            self.instructions = len(code.ops)
        self[expr] = (code.copy(), nodes, n_variables)


MAX_REMEMBERED = 1 << 17
"""Instructions kept by the code memo of one tuple of variables (`_codes`): a few MB."""


@memoized(8)
def _codes(names: tuple[str, ...]) -> _Codes:
    """The code memo of ``compile_tape`` over ``names``: a batch's laws, closed forms and
    probe answers share most of their subexpressions (a perturbed law ``1.05*L`` is
    ``L``'s code and one instruction), compiled once."""
    return _Codes()


class _TreeTooLarge(Exception):
    """Raised by ``_Compiler`` past ``MAX_TREE_NODES`` nodes: compile shared instead."""


class _Compiler:
    """Emits code bottom-up; a node whose operands all emitted constants is folded
    (evaluated by SymEngine) into one constant, so no free-symbol scans are needed.
    Nodes are dispatched on their exact class (``_EMIT``); other classes take the
    general path (``_other``).  ``n_variables`` is the largest variable index
    emitted + 1 (every emitted variable stays in the tape: only constants fold).
    ``budget``: nodes left to emit before ``_TreeTooLarge`` (``emit`` calls; the terms
    of a sum and the factors of a product are emitted without one, so a tree of up to
    about three times ``MAX_TREE_NODES`` nodes compiles as a tree)."""

    __slots__ = ("index", "n_variables", "budget", "emitted", "signed_zero")

    def __init__(self, index: dict[str, int], emitted: _Codes | None = None):
        self.index = index
        self.n_variables = 0
        self.budget = MAX_TREE_NODES
        self.emitted: _Codes | None = _Codes() if emitted is None else emitted
        self.signed_zero = False  # a float zero met: SymEngine deems 0.0 and -0.0 equal

    def emit(self, expr: se.Basic) -> Code:
        self.budget -= 1
        if self.budget < 0:
            raise _TreeTooLarge
        method = _EMIT.get(type(expr))
        if method is None:
            return self._other(expr)
        if self.emitted is None or method in _LEAVES:
            return method(self, expr)
        return self._remembered(expr, method)

    def _remembered(self, expr: se.Basic, method, *args) -> Code:
        """``method(expr, *args)``, once per distinct subexpression (``_Codes``): one met
        before, in this tree (a solved law shares its parts many times over) or in an
        earlier tape over the same variables, has its code copied, the same instructions
        at a list copy's cost (and its nodes still count in the budget)."""
        known = self.emitted.get(expr)
        if known is not None:
            code, nodes, n_variables = known
            self.budget -= nodes
            if self.budget < 0:
                raise _TreeTooLarge
            if n_variables > self.n_variables:
                self.n_variables = n_variables
            return code.copy()
        budget, outer, zero = self.budget, self.n_variables, self.signed_zero
        self.n_variables, self.signed_zero = 0, False  # the rows this subexpression reads; its zeros
        code = method(self, expr, *args)
        inner = self.n_variables
        self.n_variables = max(outer, inner)
        if self.signed_zero:  # ``atan2(-0.0, x)`` equals ``atan2(0.0, x)`` as a key: never shared
            return code
        self.signed_zero = zero
        self.emitted.put(expr, code, budget - self.budget, inner)
        return code

    def _symbol(self, expr: se.Basic) -> Code:
        name = str(expr)
        index = self.index.get(name)
        if index is None:
            raise UnsupportedExpression(
                f"free symbol {name!r} is not among the variables {sorted(self.index)}"
            )
        if index >= self.n_variables:
            self.n_variables = index + 1
        return Code([op.PUSH_VAR], [float(index)], 1, None, index)

    def _constant(self, expr: se.Basic) -> Code:
        return push_const(_constant_value(expr))

    def _real(self, expr: se.Basic) -> Code:
        code = push_const(_constant_value(expr))
        if code.constant == 0.0:
            self.signed_zero = True
        return code

    def _folded(self, expr: se.Basic, code: Code | None) -> Code:
        """``code``, or the folded constant when no operand depends on a variable."""
        return push_const(_constant_value(expr)) if code is None else code

    def _other(self, expr: se.Basic) -> Code:
        if expr.is_Symbol:
            return self._symbol(expr)
        if expr.is_Number or not expr.args:
            return self._constant(expr)
        name = type(expr).__name__
        if name == "FunctionSymbol":
            name = f"undefined function {expr.get_name()}"
        raise UnsupportedExpression(f"unsupported expression node {name}: {expr}")

    def _unary(self, expr: se.Basic) -> Code:
        code = self.emit(expr.args[0])
        if code.constant is not None:
            return push_const(_constant_value(expr))
        for instruction in _UNARY_CODE[type(expr)]:
            code.then(*instruction)
        return code

    def _atan2(self, expr: se.Basic) -> Code:
        y, x = expr.args
        left, right = self.emit(y), self.emit(x)
        if left.constant is not None and right.constant is not None:
            return push_const(_constant_value(expr))
        return binary(op.ATAN2, left, right)

    def _add(self, expr: se.Basic) -> Code:
        constants, plus, minus = [], [], []
        for term in expr.args:
            if type(term) is se.Mul:
                args = term.args
                negative = _is_negative(args[0]) if args[0].is_Number else False
                if negative:
                    code = self.emit(-term)
                elif self.emitted is None:
                    code = self._mul(term, args)
                else:
                    code = self._remembered(term, _Compiler._mul, args)
            else:
                negative = False
                code = self.emit(term)
            if code.constant is not None:
                constants.append(term)
            else:
                (minus if negative else plus).append(code)
        if not plus and not minus:
            return push_const(_constant_value(expr))
        if constants:  # a lone constant term is its own sum
            constant = _constant_value(constants[0] if len(constants) == 1 else se.Add(*constants))
        else:
            constant = 0.0
        if not plus:  # -a - b + c  ->  c - (a + b)
            total = chain(op.ADD, minus)
            return total.then(op.RSUB_C, constant) if constants else total.then(op.NEG)
        result = chain(op.ADD, plus)
        if len(minus) > 1:
            minus = sorted(minus, key=DEPTH, reverse=True)
        for part in minus:
            result = binary(op.SUB, result, part)
        return result.then(op.ADD_C, constant) if constants else result

    def _mul(self, expr: se.Basic, args: tuple[se.Basic, ...] | None = None) -> Code:
        """``args``: ``expr.args`` when the caller already has them."""
        constants, numerator, denominator = [], [], []
        for factor in expr.args if args is None else args:
            if type(factor) is se.Pow:
                pow_args = factor.args
                base, exponent = pow_args
                if exponent.is_Number and _is_negative(exponent):
                    if type(base) is _EXP1:  # exp(-3): a constant
                        constants.append(factor)
                        continue
                    code = self.emit(base)
                    if code.constant is not None:
                        constants.append(factor)
                    else:  # base ** -exponent: negation is exact in float64 too
                        value = _constant_value(exponent)
                        denominator.append(self._power(code, -value, _is_third(exponent, value)))
                    continue
                code = self._pow(factor, pow_args) if self.emitted is None else \
                    self._remembered(factor, _Compiler._pow, pow_args)
            else:
                code = self.emit(factor)
            if code.constant is not None:
                constants.append(factor)
            else:
                numerator.append(code)
        if not numerator and not denominator:
            return push_const(_constant_value(expr))
        if not constants:
            p = q = 1.0
        else:
            coefficient = constants[0] if len(constants) == 1 else se.Mul(*constants)
            if coefficient.is_Rational:
                p, q = _rational_parts(coefficient)
            else:
                p, q = _constant_value(coefficient), 1.0
        negate = p == -1.0 and numerator
        if numerator:
            top = chain(op.MUL, numerator)
            if p != 1.0 and p != -1.0:
                top.then(op.MUL_C, p)
        else:
            top = push_const(p)
        if denominator:
            bottom = chain(op.MUL, denominator)
            if q != 1.0:
                bottom.then(op.MUL_C, q)
            result = binary(op.DIV, top, bottom)
        else:
            result = top.then(op.DIV_C, q) if q != 1.0 else top
        return result.then(op.NEG) if negate else result

    def _pow(self, expr: se.Basic, args: tuple[se.Basic, ...] | None = None) -> Code:
        """``args``: ``expr.args`` when the caller already has them."""
        base, exponent = expr.args if args is None else args
        if type(base) is _EXP1:
            code = self.emit(exponent)
            return self._folded(expr, None if code.constant is not None else code.then(op.EXP))
        code = self.emit(base)
        if not exponent.is_Number:
            power = self.emit(exponent)
            if power.constant is None:
                return binary(op.POW, code, power)
        if code.constant is not None:
            return self._folded(expr, None)
        value = _constant_value(exponent)
        return self._power(code, value, _is_third(exponent, value))

    @staticmethod
    def _power(code: Code, value: float, third: bool) -> Code:
        """``code ** exponent`` for an exponent without free symbols, of float64 value
        ``value``; ``third``: the exponent is exactly ``±1/3``."""
        if third:
            code.then(op.CBRT)
            return code.then(op.RDIV_C, 1.0) if value < 0 else code
        if value == 0.5:
            return code.then(op.SQRT)
        if value == -0.5:
            return code.then(op.SQRT).then(op.RDIV_C, 1.0)
        n = _small_int(value)
        if n == 1:
            return code
        if n == -1:
            return code.then(op.RDIV_C, 1.0)
        if n is not None:
            return code.then(op.POWI, float(n))
        return code.then(op.POW_C, value)


_REFERENCE = -1
"""Pseudo-opcode of a shared compilation: "the shared subexpression ``arg`` here"."""


class _SharingCompiler(_Compiler):
    """Compiles a DAG over its distinct subexpressions (see module doc).

    Each use of a subexpression used more than once (that is not a constant or a lone
    variable) is emitted as a ``_REFERENCE`` to its code, with the depth of that code,
    so operands are ordered as in the tree; its code is emitted once.  ``compile`` then
    splices the code in at the first reference in tape order, followed by a STORE, and
    turns the later references into LOADs."""

    __slots__ = ("uses", "shared", "bodies", "constants")

    def __init__(self, index: dict[str, int], expr: se.Basic):
        super().__init__(index)
        self.budget = float("inf")
        self.emitted = None  # repeats are shared by reference here
        self.uses = _uses(expr)
        self.shared: dict[se.Basic, tuple[int, int] | None] = {}  # -> (body, depth), None: not shareable
        self.bodies: list[tuple[list[int], list[float]]] = []
        self.constants: dict[se.Basic, float] = {}

    def emit(self, expr: se.Basic) -> Code:
        if self.uses.get(expr, 0) < 2:
            return super().emit(expr)
        value = self.constants.get(expr)
        if value is not None:
            return push_const(value)
        known = self.shared.get(expr, False)
        if known is False:
            code = super().emit(expr)
            if code.constant is not None:
                self.constants[expr] = code.constant
                return code
            if code.variable is not None:
                self.shared[expr] = None
                return code
            known = self.shared[expr] = (len(self.bodies), code.depth)
            self.bodies.append((code.ops, code.args))
        elif known is None:
            return super().emit(expr)
        body, depth = known
        return Code([_REFERENCE], [float(body)], depth)

    def compile(self, expr: se.Basic) -> tuple[list[int], list[float], int]:
        """Instructions and depth of ``expr`` (kept rows included in the depth)."""
        root = self.emit(expr)
        ops, args, slots = [], [], {}
        frames = [(root.ops, root.args, 0)]
        while frames:
            body_ops, body_args, k = frames.pop()
            while k < len(body_ops):
                code, arg = body_ops[k], body_args[k]
                k += 1
                if code != _REFERENCE:
                    ops.append(code)
                    args.append(arg)
                    continue
                slot = slots.get(arg)
                if slot is not None:
                    ops.append(op.LOAD)
                    args.append(float(slot))
                    continue
                slots[arg] = len(slots)
                frames.append((body_ops, body_args, k))  # resumed after the body and its STORE
                frames.append(([op.STORE], [float(slots[arg])], 0))
                frames.append((*self.bodies[int(arg)], 0))
                break
        return ops, args, root.depth + len(slots)


def _uses(expr: se.Basic) -> dict[se.Basic, int]:
    """How many times each distinct compound subexpression of ``expr`` is an operand
    (``expr`` itself once); raises UnsupportedExpression for a constant subexpression
    of more than ``MAX_TREE_NODES`` nodes (its folding would walk the whole tree)."""
    uses: dict[se.Basic, int] = {expr: 1}
    size: dict[se.Basic, tuple[int, bool]] = {}  # -> (tree nodes, has a free symbol)
    stack = [(expr, False)]
    while stack:
        node, done = stack.pop()
        args = node.args
        if done:
            nodes, free = 1, False
            for a in args:
                n, f = size.get(a) or (1, a.is_Symbol)
                nodes, free = nodes + n, free or f
            if not free and nodes > MAX_TREE_NODES:
                raise UnsupportedExpression(f"a constant subexpression of {nodes} nodes is too large to fold")
            size[node] = (nodes, free)
            continue
        stack.append((node, True))
        for a in args:
            if a.args:
                seen = uses.get(a, 0)
                uses[a] = seen + 1
                if not seen:
                    stack.append((a, False))
    return uses


_EXP1 = type(se.E)
_INTEGER_KINDS = frozenset(type(se.Integer(n)) for n in (2, 1, 0, -1))
_RATIONAL_KINDS = frozenset(type(number) for number in (se.Rational(1, 3), se.Rational(1, 2)))
_KIND_VALUES = {
    type(number): _rational_value(number) if number.is_Rational else _evaluated(number, str(number))
    for number in (se.Integer(0), se.Integer(1), se.Integer(-1), se.Rational(1, 2), se.pi, se.E)
}
"""Float64 value of each SymEngine class that has a single instance (``One``, ``Pi`` ...)."""
_UNARY_CODE = {
    kind: tuple((c, 1.0 if c == op.RDIV_C else 0.0) for c in codes) for kind, codes in _UNARY.items()
}
_EMIT = {
    se.Symbol: _Compiler._symbol,
    se.Add: _Compiler._add,
    se.Mul: _Compiler._mul,
    se.Pow: _Compiler._pow,
    se.atan2: _Compiler._atan2,
    **{kind: _Compiler._unary for kind in _UNARY},
    **{type(number): _Compiler._constant for number in (
        se.Integer(2), se.Integer(1), se.Integer(0), se.Integer(-1), se.Rational(1, 2), se.Rational(1, 3),
        se.pi, se.E,
    )},
    type(se.RealDouble(1.5)): _Compiler._real,
}
"""Exact node class -> emitter (numbers and constants by their SymEngine classes)."""
_LEAVES = frozenset({_Compiler._symbol, _Compiler._constant, _Compiler._real})
"""Emitters of leaves: cheaper to emit again than to look up."""
