"""The tape compiler's instruction lists: the code of one subexpression (``Code``),
extended in place; a constant or variable operand fused into the binary instruction
using it (``binary``); commutative operands folded deepest first (``chain``), which
keeps tapes short and stacks shallow.  Opcodes and floats only, no SymEngine: the
compiler (``fastscore.tapes.compile``) walks the expressions.
"""

from __future__ import annotations

from operator import attrgetter

from fastscore.kernels import opcodes as op

__all__ = ["DEPTH", "Code", "binary", "chain", "push_const"]

_FUSED = {
    # op: (with constant right, with constant left, with variable right, with variable left)
    op.ADD: (op.ADD_C, op.ADD_C, op.ADD_V, op.ADD_V),
    op.SUB: (op.ADD_C, op.RSUB_C, op.SUB_V, op.RSUB_V),
    op.MUL: (op.MUL_C, op.MUL_C, op.MUL_V, op.MUL_V),
    op.DIV: (op.DIV_C, op.RDIV_C, op.DIV_V, op.RDIV_V),
}


class Code:
    """Instructions of one subexpression as parallel ``ops``/``args`` lists;
    ``constant``/``variable`` are set for a lone PUSH_CONST/PUSH_VAR (the operand a
    binary instruction can fuse).  A code is consumed by the node using it: ``then``
    and ``binary`` extend it in place (no copy per tree level)."""

    __slots__ = ("ops", "args", "depth", "constant", "variable")

    def __init__(self, ops: list[int], args: list[float], depth: int,
                 constant: float | None = None, variable: int | None = None):
        self.ops = ops
        self.args = args
        self.depth = depth
        self.constant = constant
        self.variable = variable

    def copy(self) -> Code:
        """A code with the same instructions, to be consumed apart from this one."""
        return Code(self.ops.copy(), self.args.copy(), self.depth, self.constant, self.variable)

    def then(self, code: int, arg: float = 0.0) -> Code:
        """Append one in-place (depth-neutral) instruction."""
        self.ops.append(code)
        self.args.append(arg)
        self.constant = self.variable = None
        return self


def push_const(value: float) -> Code:
    """The code that pushes the constant ``value``."""
    value = float(value)
    return Code([op.PUSH_CONST], [value], 1, constant=value)


def binary(code: int, left: Code, right: Code) -> Code:
    """``left code right``, fusing a constant or variable operand when possible."""
    fused = _FUSED.get(code)
    if fused is not None:
        c_right, c_left, v_right, v_left = fused
        if (c := right.constant) is not None:
            return left.then(c_right, -c if code == op.SUB else c)
        if (c := left.constant) is not None:
            return right.then(c_left, c)
        if (v := right.variable) is not None:
            return left.then(v_right, v)
        if (v := left.variable) is not None:
            return right.then(v_left, v)
    elif code == op.POW and (c := right.constant) is not None:
        return left.then(op.POW_C, c)
    if (code == op.ADD or code == op.MUL) and right.depth > left.depth:
        left, right = right, left
    left.ops += right.ops
    left.args += right.args
    left.depth = max(left.depth, right.depth + 1)
    return left.then(code)


DEPTH = attrgetter("depth")
"""Sort key: a code's depth."""


def chain(code: int, parts: list[Code]) -> Code:
    """Left fold of a commutative op, deepest operands first (stable for equal depths)."""
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        if parts[1].depth > parts[0].depth:
            parts = parts[::-1]
    else:
        parts = sorted(parts, key=DEPTH, reverse=True)  # reverse=True keeps ties in order
    result = parts[0]
    for part in parts[1:]:
        result = binary(code, result, part)
    return result
