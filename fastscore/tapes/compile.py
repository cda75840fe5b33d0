"""The tape compiler: SymEngine expressions -> postfix tapes (``fastscore.kernels.tape``).

A tape is evaluated by one shared Numba kernel (``kernels.evaluate``); nothing is
compiled per formula.  The compiler is plain Python, outside the kernels, so editing
it does not invalidate Numba's cache of them.  It:

- folds every subexpression without free symbols to one float64 constant
  (``fastscore.tapes.constants``);
- lowers the tree to instructions, operands fused and ordered, the code of repeated
  subexpressions remembered (``fastscore.tapes.lowering``);
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

from fastscore.kernels import opcodes as op
from fastscore.kernels.tape import Tape
from fastscore.support.caches import memoized
from fastscore.tapes import lowering
from fastscore.tapes.constants import UnsupportedExpression
from fastscore.tapes.instructions import Code, push_const
from fastscore.tapes.lowering import _codes, _Compiler, _TreeTooLarge

__all__ = ["UnsupportedExpression", "compile_tape"]


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
            if not free and nodes > lowering.MAX_TREE_NODES:
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

