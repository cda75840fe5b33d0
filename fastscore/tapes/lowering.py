"""Expression lowering: one SymEngine expression tree -> the code of a postfix tape
(``fastscore.tapes.instructions``), emitted bottom-up by ``_Compiler``.  It:

- folds every node whose operands are all constants into one constant
  (``fastscore.tapes.constants``);
- turns SymEngine's ``Add(a, Mul(-1, b))`` into ``a - b`` and ``Mul(a, Pow(b, -1))`` into
  ``a / b``, keeps rational coefficients exact as ``p * ... / q``;
- emits ``x**n`` for integer ``|n| <= 32`` as POWI (repeated squaring), ``x**(1/2)`` as
  SQRT, ``x**(1/3)`` as CBRT (NaN for a negative base: SymEngine's principal root is
  complex there), ``exp(u)`` (``E**u``) as EXP, anything else as POW;
- fuses a constant or variable operand into the binary instruction using it and
  orders commutative operands deepest first, keeping tapes short and stacks shallow
  (``fastscore.tapes.instructions``);
- remembers the code of each distinct subexpression over one tuple of variables
  (``_codes``), so a repeat, in this tree or in a later tape, costs a list copy;
- gives up past ``MAX_TREE_NODES`` nodes (``_TreeTooLarge``): ``fastscore.tapes.compile``
  then compiles the tree over its distinct subexpressions.
"""

from __future__ import annotations

import symengine as se

from fastscore.kernels import opcodes as op
from fastscore.support.caches import memoized
from fastscore.tapes.constants import UnsupportedExpression, _constant_value, _is_negative, _is_third, _rational_parts
from fastscore.tapes.instructions import DEPTH, Code, binary, chain, push_const

__all__ = ["MAX_POWI", "MAX_TREE_NODES"]

MAX_POWI = 32
"""Largest ``|n|`` emitted as POWI; larger integer exponents use POW (libm ``pow``)."""

MAX_TREE_NODES = 5_000
"""Nodes a tree is compiled as a tree before its distinct subexpressions are shared;
also the largest constant subexpression folded in a shared compilation."""

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


def _small_int(value: float) -> int | None:
    return int(value) if value.is_integer() and abs(value) <= MAX_POWI else None


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


_EXP1 = type(se.E)
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
