"""Opcode numbering of postfix tapes, shared by the compiler (``fastscore.tapes.compile``) and the kernels.

Each instruction is an opcode plus one float64 argument (unused ones are 0).  The
stack holds rows of points; "top" is the last pushed row, "below" the one under it.

| opcode | argument | effect |
|---|---|---|
| PUSH_VAR | variable row index | push a copy of ``X[i]`` |
| PUSH_CONST | value | push a row filled with the value |
| ADD SUB MUL DIV POW ATAN2 | — | pop top, replace below with ``below op top`` (``ATAN2``: atan2(below, top)) |
| ADD_V SUB_V MUL_V DIV_V | variable row index | ``top op X[i]`` in place |
| RSUB_V RDIV_V | variable row index | ``X[i] op top`` in place |
| ADD_C MUL_C DIV_C POW_C | constant c | ``top op c`` in place |
| RSUB_C RDIV_C | constant c | ``c op top`` in place |
| POWI | integer n | ``top ** n`` by repeated squaring (n < 0: reciprocal) |
| NEG SQRT CBRT EXP LOG ... SIGN | — | unary function of top in place |
| STORE | slot s | copy top into kept row ``s`` (the stack is unchanged) |
| LOAD | slot s | push a copy of kept row ``s`` |

Kept rows hold a subexpression a tape uses more than once (see ``tape``): slot ``s``
is the row ``depth - s`` of the tape's working rows, past every stack row.
``CBRT`` is the principal real cube root: NaN for a negative base, as SymEngine's
``x**(1/3)`` is complex there.  Values are plain ints so Numba folds them as
compile-time constants; the groups are contiguous ranges in the order of the table
(the kernel dispatches on ranges), so append new opcodes within their group's range.
"""

PUSH_VAR = 0
PUSH_CONST = 1
ADD = 2
SUB = 3
MUL = 4
DIV = 5
POW = 6
ATAN2 = 7
ADD_V = 8
SUB_V = 9
MUL_V = 10
DIV_V = 11
RSUB_V = 12
RDIV_V = 13
ADD_C = 14
MUL_C = 15
DIV_C = 16
POW_C = 17
RSUB_C = 18
RDIV_C = 19
POWI = 20
NEG = 21
SQRT = 22
CBRT = 23
EXP = 24
LOG = 25
SIN = 26
COS = 27
TAN = 28
ASIN = 29
ACOS = 30
ATAN = 31
SINH = 32
COSH = 33
TANH = 34
ASINH = 35
ACOSH = 36
ATANH = 37
ABS = 38
SIGN = 39
STORE = 40
LOAD = 41

NAMES: dict[int, str] = {
    value: name for name, value in globals().items() if name.isupper() and isinstance(value, int)
}
"""Opcode value -> mnemonic, for printing tapes."""

BINARY = frozenset({ADD, SUB, MUL, DIV, POW, ATAN2})
"""Opcodes that pop two rows and push one."""

NO_ARGUMENT = BINARY | frozenset(range(NEG, SIGN + 1))
"""Opcodes that ignore their argument."""

WITH_VARIABLE = frozenset({PUSH_VAR, ADD_V, SUB_V, MUL_V, DIV_V, RSUB_V, RDIV_V})
"""Opcodes whose argument is a variable row index."""

WITH_SLOT = frozenset({STORE, LOAD})
"""Opcodes whose argument is a kept-row slot."""
