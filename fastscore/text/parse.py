"""The whitelisted parser: untrusted text -> SymEngine expressions.

Submissions are written by programs we do not trust, so no text ever reaches
``eval``, ``exec``, ``sympify`` or ``parse_expr``.  A hand-written tokenizer and a
recursive-descent parser build SymEngine objects directly from a fixed grammar::

    sum     := product (('+' | '-') product)*
    product := unary (('*' | '/') unary)*
    unary   := ('+' | '-') unary | atom (('**' | '^') unary)?
                                                 # power is right-associative; -x**2 = -(x**2)
    atom    := NUMBER | NAME | NAME '(' sum (',' sum)* ')' | '(' sum ')'

* Numbers: ``12``, ``1.5``, ``.5``, ``1e-3``, ``6.022E23``.  Integers become
  ``se.Integer``; decimal and scientific literals become the *exact* rational of
  their decimal text (``0.1`` is 1/10, ``x**0.5`` is ``sqrt(x)``).
* Names: ASCII letters, digits and ``_`` plus Unicode letters (``π``, ``ρ``), not
  starting with a digit.  A declared name always means the declared quantity, even
  ``I``, ``E``, ``S``, ``N``, ``gamma`` or ``pi``.  Undeclared ``pi``/``π`` mean
  ``se.pi``; any other undeclared name is an error unless ``allow_new_names``.
* Calls: only the functions of ``FUNCTIONS`` (``fastscore.text.functions``).
* Nothing else: no implicit multiplication, attributes, subscripts, strings,
  keywords or commas outside calls.

Every violation, including each limit of ``Limits``, raises ``ParseError`` whose
text is one human-readable line (the messages and the checks that build them:
``fastscore.text.parse_checks``).  Results are real and finite: division by zero,
``log(0)``, ``sqrt(-1)`` and other complex or infinite constants are rejected, and
so is a constant subexpression that overflows float64 (``exp(1000)``, ``1e400``,
``exp(700)*exp(700)``).  Each literal, and each product, sum, power and call with
constant operands, is checked where it is built, so no non-finite value (``zoo``,
``nan``, ``inf``) can reach the result and no walk over it is needed (the fuzzing
that checks this: ``bench/results/notes.md``).  SymEngine also merges constants into
a product or sum with free symbols (``x*exp(700)*exp(700)`` is ``x*exp(1400)``):
the constant parts of such a result are checked when they might overflow, that is
when the constant calls and powers built so far, raised to the result's exponent
bound, could reach 1e308 (the sum of their ``|log10|`` times the bound), or when an
exact number may exceed float64 (its digits bound).

Speed (parsing is on the scoring hot path): tokens are plain texts from one regex
pass, columns are recomputed only for an error message, and sums, products and
atoms are parsed with few calls.  Sums and products stay pairwise: one n-ary
``se.Add``/``se.Mul`` costs more than the pairwise steps of the short chains that
submissions have (half of the products have two factors).
"""

from __future__ import annotations

from collections.abc import Collection

import symengine as se

from fastscore.support.caches import memoized
from fastscore.text.functions import CONSTANTS, FUNCTION_TABLE
from fastscore.text.literals import (
    FLOAT_DIGITS,
    MAX_RESULT_DIGITS,
    exceeds,
    finite_real,
    fraction,
    literal,
    log_magnitude,
    power_digits,
)
from fastscore.text.parse_checks import _Checks, _make_room, short
from fastscore.text.tokens import DEFAULT_LIMITS, DIGITS, END, Limits, ParseError, columns, is_name, tokenize

__all__ = [
    "parse_equation",
    "parse_expression",
    "symbol",
]


@memoized(65536)
def symbol(name: str) -> se.Symbol:
    """The one way a name becomes a symbol (``se.Symbol(name)``, cached)."""
    return se.Symbol(name)


_ONE = se.Integer(1)


# --------------------------------------------------------------------------- parser

# A parsed value is a tuple (expr, const, bound, digits):
# - const: the value is known to have no free symbols (built from constants only, or
#   folded to a number, as x - x does), so it is checked to be finite and real;
# - bound: an upper bound on |numeric exponent| of any power the value can yield under
#   SymEngine's automatic folding (leaves count 1, products add, powers multiply);
# - digits: an upper bound on the decimal digits of any exact number in the value
#   (products and sums add, powers multiply).
# The bounds are cheap; the exact tree walks run only when a bound exceeds its limit.
# Positions are token indexes; their columns are computed only for error messages.

_NOT_AN_ATOM = frozenset((")", ",", "*", "/", "**", "^"))  # tokens that cannot start an operand
_CALL_OR_POWER = frozenset(("(", "**", "^"))  # tokens that make a name more than a plain operand
_POWER = frozenset(("**", "^"))


def _declared_values(names: Collection[str]) -> dict[str, tuple[se.Symbol, bool, int, int]]:
    """The parsed value of each declared name (other entries can never match a name token)."""
    return {name: (symbol(name), False, 1, 0) for name in names if isinstance(name, str) and is_name(name)}


_cached_declared_values = memoized(1024)(_declared_values)

GROUP_MEMO_SIZE = 1024
"""Parenthesised sums remembered per set of names and limits (see ``_group_memo``)."""
GROUP_MAX_TOKENS = 64
"""Longer parenthesised sums are not remembered (nor looked up)."""


@memoized(64)
def _group_memo(names: Collection[str], allow_new: bool, limits: Limits) -> dict[tuple[str, ...], tuple]:
    """Parsed parenthesised sums by their tokens, for one set of declared names and
    limits: submissions to one problem share most of their parenthesised parts (half
    of the tokens of the benchmark's submissions lie in a part seen before)."""
    return {}


def _closing_parentheses(tokens: list[str]) -> dict[int, int]:
    """Index of each '(' -> index of its ')' (unmatched ones left out)."""
    closing, opened = {}, []
    for i, token in enumerate(tokens):
        if token == "(":
            opened.append(i)
        elif token == ")" and opened:
            closing[opened.pop()] = i
    return closing


class _Parser(_Checks):
    """The grammar (module doc) over the tokens of one text; its checks and error messages
    are ``_Checks``' (``fastscore.text.parse_checks``)."""

    __slots__ = ("declared", "allow_new", "limits", "memo", "text", "tokens", "offset", "pos", "room", "closing",
                 "magnitude")

    def __init__(self, names: Collection[str], allow_new: bool, limits: Limits):
        if isinstance(names, str):
            raise TypeError("names must be a collection of names, not a string")
        try:  # the same names (a problem's knowns) come again and again
            self.declared = _cached_declared_values(names)
            self.memo = _group_memo(names, allow_new, limits)
        except TypeError:  # unhashable
            self.declared = _declared_values(names)
            self.memo = {}
        self.allow_new = allow_new
        self.limits = limits

    def run(self, text: str, tokens: list[str], offset: int = 0) -> se.Basic:
        """Parse one complete expression from ``tokens`` (ending with END), the tokens of
        ``text`` from index ``offset`` on."""
        self.text, self.tokens, self.offset, self.pos = text, tokens, offset, 0
        self.room = self.limits.max_depth  # nesting levels left
        _make_room(self.room)
        self.closing = None  # see _recall
        self.magnitude = 0.0  # sum of |log10| of the constant calls and powers built (see module doc)
        try:
            expr, _, bound, _ = self._sum()
            if tokens[self.pos] != END:
                raise self._unexpected(self.pos)
            if bound > self.limits.max_exponent:
                self._audit_exponents(expr)
            return expr
        except ParseError:
            raise
        except RecursionError:
            raise ParseError("expression nested too deeply to parse") from None
        except (RuntimeError, ArithmeticError, ValueError, TypeError) as error:
            raise ParseError(f"cannot build expression: {error}") from None

    # -- the memo of parenthesised sums

    def _recall(self, opening: int):
        """The parsed sum between the '(' at ``opening`` and its ')' when the same tokens
        were parsed before (``self.pos`` then moves past the ')'), else None."""
        closing = self.closing
        if closing is None:
            closing = self.closing = _closing_parentheses(self.tokens)
        close = closing.get(opening)
        if close is None or close - opening > min(self.room, GROUP_MAX_TOKENS):  # a nesting level takes a token
            return None
        parsed = self.memo.get(tuple(self.tokens[opening + 1:close]))
        if parsed is not None:
            self.pos = close + 1
        return parsed

    def _remember(self, opening: int, parsed) -> None:
        """Keep ``parsed``, the sum between the '(' at ``opening`` and the ')' at ``self.pos``."""
        if self.pos - opening > GROUP_MAX_TOKENS:
            return
        memo = self.memo
        if len(memo) >= GROUP_MEMO_SIZE:
            memo.clear()
        memo[tuple(self.tokens[opening + 1:self.pos])] = parsed

    # -- grammar

    def _sum(self):  # sum and product levels in one function, to save a call per term
        tokens, declared = self.tokens, self.declared
        sign_at = -1  # the '+' or '-' before the current term (none before the first)
        while True:
            at = self.pos
            term = declared.get(tokens[at])
            if term is not None and tokens[at + 1] not in _CALL_OR_POWER:  # a declared name: no call needed
                self.pos = at = at + 1
            else:
                term = self._unary()
                at = self.pos
            token = tokens[at]
            if token == "*" or token == "/":  # the term is a product
                expr, const, bound, digits = term
                while True:
                    operand = declared.get(tokens[at + 1])
                    if operand is not None and tokens[at + 2] not in _CALL_OR_POWER:
                        self.pos = at + 2
                        rhs, rhs_const, rhs_bound, rhs_digits = operand
                    else:
                        self.pos = at + 1
                        rhs, rhs_const, rhs_bound, rhs_digits = self._unary()
                    if token == "*":
                        expr = expr * rhs
                    else:
                        if rhs.is_Number and rhs.is_zero:
                            column = self._column(at)
                            raise ParseError(f"division by zero at column {column}", column)
                        expr = expr / rhs
                    const = (const and rhs_const) or expr.is_Number
                    bound = bound + rhs_bound
                    digits += rhs_digits
                    if digits > MAX_RESULT_DIGITS:
                        digits = self._measured_digits(expr, at)
                    if const or self.magnitude or digits > FLOAT_DIGITS:
                        self._check_merged(expr, const, bound, digits, at)
                    at = self.pos
                    token = tokens[at]
                    if token != "*" and token != "/":
                        break
                term = expr, const, bound, digits
            if sign_at < 0:
                if token != "+" and token != "-":  # the common case: a single term
                    return term
                total, total_const, total_bound, total_digits = term
            else:
                rhs, rhs_const, rhs_bound, rhs_digits = term
                total = total + rhs if tokens[sign_at] == "+" else total - rhs
                total_const = (total_const and rhs_const) or total.is_Number
                if rhs_bound > total_bound:
                    total_bound = rhs_bound
                total_digits += rhs_digits
                if total_digits > MAX_RESULT_DIGITS:
                    total_digits = self._measured_digits(total, sign_at)
                if total_const or self.magnitude or total_digits > FLOAT_DIGITS:
                    self._check_merged(total, total_const, total_bound, total_digits, sign_at)
                if token != "+" and token != "-":
                    return total, total_const, total_bound, total_digits
            sign_at = at
            self.pos = at + 1

    def _unary(self):  # unary, atom and power levels in one function, to save calls per atom
        tokens = self.tokens
        at = self.pos
        token = tokens[at]
        base = self.declared.get(token)
        if base is not None and tokens[at + 1] != "(":  # the common atoms first: a declared name
            self.pos = at + 1
        elif token[:1] in DIGITS:  # a number
            self.pos = at + 1
            try:
                base = literal(token) if len(token) <= 32 else literal.__wrapped__(token)
            except ValueError as error:
                raise self._bad_number(token, at, error) from None
        elif token == "+" or token == "-":
            self.pos = at + 1
            self.room -= 1
            if self.room < 0:
                raise self._too_deep(at)
            expr, const, bound, digits = self._unary()
            self.room += 1
            return (-expr if token == "-" else expr), const, bound, digits
        elif token == "(":
            self.room -= 1
            if self.room < 0:
                raise self._too_deep(at)
            base = self._recall(at)
            if base is None:
                self.pos = at + 1
                base = self._sum()
                if tokens[self.pos] != ")":
                    raise self._unclosed(at)
                self._remember(at, base)
                self.pos += 1
            self.room += 1
        else:
            base = self._atom(at)
        at = self.pos
        token = tokens[at]
        if token != "**" and token != "^":
            return base
        self.room -= 1
        if self.room < 0:
            raise self._too_deep(at)
        token = tokens[at + 1]
        if token[:1] in DIGITS and tokens[at + 2] not in _POWER:  # a number: no call needed
            self.pos = at + 2
            try:
                exponent = literal(token) if len(token) <= 32 else literal.__wrapped__(token)
            except ValueError as error:
                raise self._bad_number(token, at + 1, error) from None
        else:
            self.pos = at + 1
            exponent = self._unary()
        self.room += 1
        return self._pow(base, exponent, at)

    def _atom(self, at: int):
        """An operand other than a declared name, a number or a parenthesised sum."""
        token = self.tokens[at]
        if token in _NOT_AN_ATOM:
            column = self._column(at)
            raise ParseError(f"expected a number, name or '(' at column {column}, found '{token}'", column)
        if token == END or token == "==" or token == "=":
            raise self._unexpected(at)
        if self.tokens[at + 1] == "(":
            return self._call(at)
        self.pos = at + 1
        return self._name(token, at)

    def _name(self, name: str, at: int):
        """The value of an undeclared name (a declared one is its symbol)."""
        constant = CONSTANTS.get(name)
        if constant is not None:
            return constant, True, 1, 0
        if name in FUNCTION_TABLE:
            column = self._column(at)
            raise ParseError(f"function '{name}' used without arguments at column {column}", column)
        if self.allow_new:
            return symbol(name), False, 1, 0
        column = self._column(at)
        raise ParseError(f"unknown name '{name}' at column {column}", column)

    def _call(self, at: int):
        name = self.tokens[at]
        entry = FUNCTION_TABLE.get(name)
        if entry is None:
            column = self._column(at)
            if name in self.declared:
                raise ParseError(f"'{name}' is a variable, not a function (column {column}); missing '*'?", column)
            raise ParseError(f"unknown function '{name}' at column {column}", column)
        function, arities = entry
        opening = at + 1
        self.room -= 1
        if self.room < 0:
            raise self._too_deep(opening)
        recalled = self._recall(opening)
        if recalled is not None:  # a single argument parsed before
            args = [recalled]
        else:
            self.pos = opening + 1
            args = []
            if self.tokens[self.pos] != ")":
                args.append(self._sum())
                while self.tokens[self.pos] == ",":
                    self.pos += 1
                    args.append(self._sum())
            if self.tokens[self.pos] != ")":
                raise self._unclosed(opening)
            if len(args) == 1:
                self._remember(opening, args[0])
            self.pos += 1
        self.room += 1
        if len(args) not in arities:
            expected = " or ".join(str(n) for n in arities)
            column = self._column(at)
            raise ParseError(f"{name}() takes {expected} argument(s), got {len(args)} (column {column})", column)
        exprs, consts, bounds, digits = zip(*args)
        if name == "log" and len(args) == 2:  # log(x)/log(base): check each constant part
            (x, x_const, _, _), (base, base_const, _, _) = args
            if base_const and not (finite_real(base) and float(base.n(53, real=True)) > 0 and base != _ONE):
                column = self._column(at)
                raise ParseError(f"log base {short(base)} at column {column} must be positive and not 1", column)
            if x_const and not finite_real(se.log(x)):
                raise self._not_real(f"log({short(x, 20)})", at)
        result = function(*exprs)
        const = all(consts) or result.is_Number
        if const:
            if not finite_real(result):
                raise self._not_real(f"{name}({', '.join(short(e, 20) for e in exprs)})", at)
            if not result.is_Rational:
                self.magnitude += log_magnitude(result)
        return result, const, max(bounds), max(digits)

    def _pow(self, base, exponent, at: int):
        b, b_const, b_bound, b_digits = base
        e, e_const, e_bound, e_digits = exponent
        limit = self.limits.max_exponent
        digits = b_digits if b_digits > e_digits else e_digits
        if e.is_Rational:
            p, q = fraction(e)
            if (abs(p) > limit) if q == 1 else exceeds(p, q, limit):
                column = self._column(at)
                raise ParseError(f"exponent {short(e, 20)} at column {column} exceeds limit {limit:g}", column)
            magnitude = abs(p) / q
            if b.is_Rational or b.is_Mul or b.is_Pow:
                new_digits = power_digits(b, magnitude)
                if new_digits > MAX_RESULT_DIGITS:
                    column = self._column(at)
                    raise ParseError(
                        f"power at column {column} would have about {new_digits:.0f} digits, limit {MAX_RESULT_DIGITS}",
                        column,
                    )
                if new_digits > digits:
                    digits = new_digits
            bound = (b_bound if b_bound > 1 else 1) * (magnitude if magnitude > 1 else 1)
        else:
            if e_const:
                if not finite_real(e):
                    raise self._not_real(f"exponent {short(e, 20)}", at)
                if abs(float(e.n(53, real=True))) > limit:
                    column = self._column(at)
                    raise ParseError(f"exponent {short(e, 20)} at column {column} exceeds limit {limit:g}", column)
            bound = b_bound if b_bound > e_bound else e_bound
        result = b**e
        const = (b_const and e_const) or result.is_Number
        if const:
            if not finite_real(result):
                raise self._not_real(f"({short(b, 20)})**({short(e, 20)})", at)
            if not result.is_Rational:
                self.magnitude += log_magnitude(result)
        elif b.is_Mul:  # a power of a product: the power of its constant factors
            self._check_merged(result, False, bound, digits, at)
        return result, const, bound, digits


# --------------------------------------------------------------------------- public API


def parse_expression(
    text: str,
    *,
    names: Collection[str] = (),
    allow_new_names: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> se.Basic:
    """Parse one expression (no '='); ``names`` are the declared quantities."""
    tokens = tokenize(text, limits)
    return _Parser(names, allow_new_names, limits).run(text, tokens)


def parse_equation(
    text: str,
    *,
    names: Collection[str] = (),
    allow_new_names: bool = False,
    limits: Limits = DEFAULT_LIMITS,
) -> tuple[se.Basic, se.Basic]:
    """Parse ``lhs = rhs`` (exactly one '='); returns ``(lhs, rhs)``."""
    tokens = tokenize(text, limits, equation=True)
    if "==" in tokens:
        column = columns(text)[tokens.index("==")]
        raise ParseError(f"'==' is not allowed (column {column}); an equation uses a single '='", column)
    if "=" not in tokens:
        raise ParseError("expected an equation 'lhs = rhs', found no '='")
    split = tokens.index("=")
    if tokens.count("=") > 1:
        column = columns(text)[tokens.index("=", split + 1)]
        raise ParseError(f"more than one '=' in an equation (second at column {column})", column)
    if split == 0 or split == len(tokens) - 2:
        column = columns(text)[split]
        side = "left-hand side before" if split == 0 else "right-hand side after"
        raise ParseError(f"missing {side} '=' at column {column}", column)
    parser = _Parser(names, allow_new_names, limits)
    lhs = parser.run(text, tokens[:split] + [END])
    rhs = parser.run(text, tokens[split + 1 :], split + 1)
    return lhs, rhs
