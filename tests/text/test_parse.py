"""The whitelisted parser: grammar, exact numbers, names, limits, hostile text."""

import math
import subprocess
import sys

import pytest
import symengine as se

import fastscore.text.parse as parse_module
from fastscore.solve.closed_forms import names_of
from fastscore.text.answers import parse_probe_answers, split_equations
from fastscore.text.functions import FUNCTIONS
from fastscore.text.parse import parse_equation, parse_expression, symbol
from fastscore.text.tokens import DEFAULT_LIMITS, Limits, ParseError

x, y, z = symbol("x"), symbol("y"), symbol("z")
XYZ = ("x", "y", "z")


def parse(text, **options):
    options.setdefault("names", XYZ)
    return parse_expression(text, **options)


def value_at(expr, **point):
    """Float value of expr with the given symbol values."""
    return float(expr.subs({symbol(k): se.Rational(*v.as_integer_ratio()) for k, v in point.items()}))


# --------------------------------------------------------------------------- grammar


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2^3^2", 512),  # right-associative: 2**(3**2)
        ("2**3**2", 512),
        ("(2^3)^2", 64),
        ("-2**2", -4),  # power binds tighter than unary minus
        ("-2^2", -4),
        ("(-2)**2", 4),
        ("2**-1", se.Rational(1, 2)),
        ("2**-2**2", se.Rational(1, 16)),  # 2**(-(2**2))
        ("2*3+4", 10),
        ("2+3*4", 14),
        ("10-4-3", 3),  # left-associative
        ("12/3/2", 2),
        ("2*3/4", se.Rational(3, 2)),
        ("--3", 3),
        ("+-+3", -3),
        ("1 - -1", 2),
        ("2 * (3 + 4)", 14),
        ("7/2", se.Rational(7, 2)),
    ],
)
def test_precedence_and_associativity(text, expected):
    assert parse(text) == expected


def test_unary_minus_applies_after_power_with_symbols():
    assert parse("-x**2") == -(x**2)
    assert parse("x**-2") == x ** (-2)
    assert parse("x**-y**2") == x ** (-(y**2))
    assert value_at(parse("-x^2 + y"), x=3.0, y=1.0) == -8.0


def test_whitespace_tabs_and_newlines_inside_an_expression():
    assert parse(" \tx\n *\n\t(y + 1) ") == x * (y + 1)


def test_formula_structure_matches_hand_built_expression():
    names = ("m", "c", "v", "eps", "r", "q")
    m, c, v, eps, r, q = (symbol(n) for n in names)
    got = parse_expression("m*c**2*(1/sqrt(1-v**2/c**2)-1) + 4*pi*eps*r**2/(q*q)", names=names)
    want = m * c**2 * (1 / se.sqrt(1 - v**2 / c**2) - 1) + 4 * se.pi * eps * r**2 / (q * q)
    assert got == want
    assert names_of(got) == set(names)


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(
    "text, expected",
    [
        ("12", se.Integer(12)),
        ("1.5", se.Rational(3, 2)),
        (".5", se.Rational(1, 2)),
        ("5.", se.Integer(5)),
        ("1e-3", se.Rational(1, 1000)),
        ("6.022E23", se.Integer(602200000000000000000000)),
        ("2.0", se.Integer(2)),
        ("0.000", se.Integer(0)),
        ("007", se.Integer(7)),
        ("1.25e+2", se.Integer(125)),
        ("3.141592653589793", se.Rational(3141592653589793, 10**15)),
    ],
)
def test_numbers_are_exact(text, expected):
    got = parse(text)
    assert got == expected
    assert got.is_Rational


def test_decimal_sum_is_exact():
    assert parse("0.1+0.2") == se.Rational(3, 10)
    assert parse("0.1+0.2-0.3").is_zero


def test_decimal_power_is_a_root_and_pi_literal_is_not_pi():
    assert parse("x**0.5 - sqrt(x)").is_zero
    assert parse("x**0.25") == x ** se.Rational(1, 4)
    assert parse("3.141592653589793") != se.pi


@pytest.mark.parametrize("text", ["1" * 61, "1." + "1" * 60, "1e401", "1e-401", "0.1e-400", "1e99999999999999"])
def test_absurd_literals_are_rejected(text):
    with pytest.raises(ParseError, match="significant digits|decimal exponent"):
        parse(text)


def test_literals_at_the_limits_are_accepted():
    assert parse("1" * 60) == se.Integer(int("1" * 60))
    assert parse("1.7976931348623157e308") == se.Integer(17976931348623157 * 10**292)  # the largest float64
    assert parse("1e-400") == se.Rational(1, 10**400)  # rounds to 0.0: finite


@pytest.mark.parametrize("text", ["1e400", "1e309", "1.8e308", "17976931348623159" + "0" * 292])
def test_literals_beyond_float64_are_rejected(text):
    with pytest.raises(ParseError, match=r"^number '.*' at column 1: beyond the float64 range \(about 1.8e308\)$"):
        parse(text)


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["I", "E", "S", "N", "Q", "C", "gamma", "beta", "pi", "lambda", "e", "π"])
def test_declared_names_are_plain_symbols(name):
    got = parse_expression(f"2*{name}", names=[name])
    assert got == 2 * se.Symbol(name)
    assert names_of(got) == {name}


def test_declared_names_keep_their_meaning_in_arithmetic():
    # I*I would be -1 and E would be Euler's number if they were SymEngine's constants
    got = parse_expression("I*I + E", names=["I", "E"])
    assert got == se.Symbol("I") ** 2 + se.Symbol("E")


@pytest.mark.parametrize("text", ["pi", "π"])
def test_undeclared_pi_is_the_constant(text):
    assert parse(text) == se.pi
    assert parse(f"2*{text}") == 2 * se.pi
    assert math.isclose(float(parse(f"{text}/4")), math.pi / 4)


def test_unicode_letter_names():
    got = parse_expression("ρ*θ_1 + Δx", names=["ρ", "θ_1", "Δx"])
    assert names_of(got) == {"ρ", "θ_1", "Δx"}


def test_unknown_name_is_rejected_with_its_column():
    with pytest.raises(ParseError, match=r"^unknown name 'foo' at column 7$"):
        parse("x + y*foo")


def test_new_names_are_accepted_on_request():
    got = parse("x + foo", allow_new_names=True)
    assert got == x + symbol("foo")
    assert names_of(got) == {"x", "foo"}


def test_function_name_is_not_a_variable_unless_declared():
    with pytest.raises(ParseError, match="'sin' used without arguments"):
        parse("sin + 1", allow_new_names=True)
    assert parse_expression("sin + 1", names=["sin"]) == se.Symbol("sin") + 1
    # followed by '(' the whitelisted function wins
    assert parse_expression("sin(0) + sin", names=["sin"]) == se.Symbol("sin")


def test_unknown_function_and_variable_used_as_function():
    with pytest.raises(ParseError, match="unknown function 'foo' at column 1"):
        parse("foo(x)", allow_new_names=True)
    with pytest.raises(ParseError, match="'x' is a variable, not a function"):
        parse("x(y)")


def test_names_may_be_any_collection():
    assert parse_expression("a+b", names={"a": 1, "b": 2}) == symbol("a") + symbol("b")
    assert parse_expression("a+b", names=iter(["a", "b"])) == symbol("a") + symbol("b")


def test_symbol_and_names_of():
    assert symbol("k_B") == se.Symbol("k_B")
    assert names_of(parse("x*y + 2*pi")) == {"x", "y"}
    assert names_of(parse("3")) == set()


# --------------------------------------------------------------------------- functions


def test_function_whitelist_is_documented_and_complete():
    expected = {
        "sqrt", "cbrt", "exp", "log", "ln", "log10", "log2", "sin", "cos", "tan", "asin", "arcsin",
        "acos", "arccos", "atan", "arctan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh",
        "atanh", "abs", "Abs", "sign", "square", "cube", "inv", "neg", "relu", "log1p",
    }  # fmt: skip
    assert set(FUNCTIONS) == expected
    with pytest.raises(TypeError):
        FUNCTIONS["eval"] = eval  # read-only


@pytest.mark.parametrize(
    "text, expected",
    [
        ("sqrt(x)", math.sqrt(0.7)),
        ("cbrt(x)", 0.7 ** (1 / 3)),
        ("exp(x)", math.exp(0.7)),
        ("log(x)", math.log(0.7)),
        ("ln(x)", math.log(0.7)),
        ("log(x, 3)", math.log(0.7, 3)),
        ("log10(x)", math.log10(0.7)),
        ("log2(x)", math.log2(0.7)),
        ("sin(x)", math.sin(0.7)),
        ("cos(x)", math.cos(0.7)),
        ("tan(x)", math.tan(0.7)),
        ("asin(x)", math.asin(0.7)),
        ("arcsin(x)", math.asin(0.7)),
        ("acos(x)", math.acos(0.7)),
        ("arccos(x)", math.acos(0.7)),
        ("atan(x)", math.atan(0.7)),
        ("arctan(x)", math.atan(0.7)),
        ("atan2(x, -1)", math.atan2(0.7, -1)),
        ("sinh(x)", math.sinh(0.7)),
        ("cosh(x)", math.cosh(0.7)),
        ("tanh(x)", math.tanh(0.7)),
        ("asinh(x)", math.asinh(0.7)),
        ("acosh(x + 1)", math.acosh(1.7)),
        ("atanh(x)", math.atanh(0.7)),
        ("abs(-x)", 0.7),
        ("Abs(x - 1)", 0.3),
        ("sign(x - 1)", -1.0),
        ("square(x)", 0.49),
        ("cube(x)", 0.343),
        ("inv(x)", 1 / 0.7),
        ("neg(x)", -0.7),
        ("relu(x)", 0.7),
        ("relu(x - 1)", 0.0),
        ("log1p(x)", math.log1p(0.7)),
    ],
)
def test_functions_evaluate_to_known_values(text, expected):
    assert math.isclose(value_at(parse(text), x=0.7), expected, rel_tol=1e-12)


def test_pysr_operators_mean_exactly_their_formulas():
    assert parse("square(x)") == parse("x**2") and parse("cube(x)") == parse("x**3")
    assert parse("inv(x)") == parse("1/x") and parse("neg(x)") == parse("-x")
    assert parse("relu(x)") == parse("(x + abs(x))/2") and parse("log1p(x)") == parse("log(1 + x)")
    assert [parse(f"sign({v})") for v in ("-2", "0", "3")] == [-1, 0, 1]


def test_constant_functions_fold_exactly():
    assert parse("sqrt(4)") == 2
    assert parse("cbrt(27)") == 3
    assert parse("log(8, 2)") == se.log(8) / se.log(2)
    assert parse("atan2(1, 1)") == se.pi / 4


@pytest.mark.parametrize(
    "text, message",
    [
        ("sin(x, y)", r"sin\(\) takes 1 argument\(s\), got 2"),
        ("atan2(x)", r"atan2\(\) takes 2 argument\(s\), got 1"),
        ("log(x, y, z)", r"log\(\) takes 1 or 2 argument\(s\), got 3"),
        ("sqrt()", r"sqrt\(\) takes 1 argument\(s\), got 0"),
    ],
)
def test_function_arity(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


# --------------------------------------------------------------------------- real and finite


@pytest.mark.parametrize(
    "text, message",
    [
        ("1/0", "division by zero at column 2"),
        ("0/0", "division by zero"),
        ("x/(y - y)", "division by zero at column 2"),
        ("(-1)**0.5", "not a finite real number"),
        ("(x - 1 - x)**0.5", "not a finite real number"),
        ("sqrt(-1)", "not a finite real number"),
        ("0**-1", "not a finite real number"),
        ("log(0)", "not a finite real number"),
        ("log(-2)", "not a finite real number"),
        ("asin(2)", "not a finite real number"),
        ("asin(x - x + 2)", "not a finite real number"),
        ("atanh(sin(x)**(x - x))", r"atanh\(1\) at column 1 is not a finite real number"),
        ("log(-x**(y - y))", r"log\(-1\) at column 1 is not a finite real number"),
        ("acosh(0)", "not a finite real number"),
        ("atanh(1)", "not a finite real number"),
        ("tan(pi/2)", "not a finite real number"),
        ("(-8)**(1/3)", "not a finite real number"),  # principal root is complex
        ("exp(exp(1000))", "not a finite real number"),
        ("log(x, 1)", "log base 1 .* must be positive and not 1"),
        ("log(x, 0)", "log base 0 .* must be positive and not 1"),
        ("log(x, -2)", "log base -2 .* must be positive and not 1"),
        ("log(-1, x)", r"log\(-1\) at column 1 is not a finite real number"),
        ("log(0, x + 1)", r"log\(0\) at column 1 is not a finite real number"),
    ],
)
def test_non_real_or_infinite_results_are_rejected(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


def test_constants_must_be_finite_in_float64():
    assert parse("exp(700)*x") == se.exp(700) * x
    assert parse("(1 - pi)**2") == (1 - se.pi) ** 2
    assert parse("1e300*x*1e-300") == x
    with pytest.raises(ParseError, match=r"^exp\(1000\) at column 1 is not a finite real number \(in float64\)$"):
        parse("exp(1000)*x")


@pytest.mark.parametrize(("text", "message"), [
    ("exp(700)*exp(700)", r"^constant exp\(1400\) at column 9 is not a finite real number \(in float64\)$"),
    ("1e300*1e300", "^constant 1000000.* at column 6 is not a finite real number"),
    ("1e308 + 1e308", "^constant 2000000.* at column 7 is not a finite real number"),
    ("10**400/10**399", r"^\(10\)\*\*\(400\) at column 3 is not a finite real number"),
    # constants SymEngine merges into a product or sum with free symbols
    ("x*exp(700)*exp(700)", r"^a constant part of x\*exp\(1400\) at column 11 is not a finite real number"),
    ("(x*exp(700))*(y*exp(700))", r"^a constant part of x\*y\*exp\(1400\) at column 13"),
    ("x/exp(-700)/exp(-700)", r"^a constant part of x\*exp\(1400\)"),
    ("(x*exp(400))**2", r"^a constant part of x\*\*2\*exp\(800\)"),
    ("x + exp(709) + exp(709) + exp(709)", r"^a constant part of x \+ 3\*exp\(709\)"),
    ("x*cosh(700)*cosh(700)", r"^a constant part of x\*cosh\(700\)\*\*2"),
    ("x*1e300*1e300", "^a constant part of 1000000.* at column 8"),
])
def test_constants_beyond_float64_are_rejected_where_built(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


def test_huge_constants_fail_fast():
    # arbitrary-precision evaluation of these would take minutes
    with pytest.raises(ParseError, match="not a finite real number"):
        parse("sin(exp(exp(exp(3))))")
    with pytest.raises(ParseError, match="^number at column 56 has about 5000 digits, limit 4000$"):
        parse("sin(" + "*".join(["(1/10)**1000"] * 150) + ")")
    with pytest.raises(ParseError, match="not a finite real number"):
        parse("sin(" + "*".join(["10**999"] * 4) + ")")


def test_exact_number_growth_is_bounded():
    # each term is allowed, but their exact sum would grow without bound
    primes = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47)
    with pytest.raises(ParseError, match="digits, limit 4000"):
        parse("+".join(f"(1/{p})**1000" for p in primes))
    # large numbers that never combine are fine
    assert names_of(parse("+".join(f"1e300*a{i}" for i in range(30)), allow_new_names=True)) == {
        f"a{i}" for i in range(30)
    }


# --------------------------------------------------------------------------- hostile text


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('rm -rf /')",
        "__import__",
        "x.__class__",
        "lambda: 1",
        "lambda x: x",
        '"abc"',
        "'abc'",
        "x[0]",
        "x if y else z",
        "x; y",
        "x, y",
        "",
        "   ",
        "\n\t",
        "x y",
        "2x",
        "2(x)",
        "(x)(y)",
        "x = y",
        "x == y",
        "x := 1",
        "x @ y",
        "x % y",
        "x // y",
        "x & y",
        "not x",
        "x and y",
        "{x}",
        "x\\y",
        "x²",
        "x\x00",
        "exec",
        "eval(x)",
        "getattr(x, 'a')",
        "x +",
        "* x",
        "(x",
        "x)",
        "()",
        "sin(x,)",
        "sin(,x)",
        "1.2.3",
        "1e",
        "#x",
        "$x",
        "x!",
    ],
)
def test_hostile_or_malformed_text_raises_parse_error(text):
    with pytest.raises(ParseError) as info:
        parse(text)
    message = str(info.value)
    assert message and "\n" not in message


@pytest.mark.parametrize("text", [None, 3, 2.5, b"x", ["x"], {"x": 1}])
def test_non_text_raises_parse_error_not_type_error(text):
    with pytest.raises(ParseError, match="expected expression text"):
        parse_expression(text)
    with pytest.raises(ParseError, match="expected expression text"):
        parse_equation(text)


@pytest.mark.parametrize(
    "text, message",
    [
        ("x.__class__", r"^unexpected character '\.' at column 2$"),
        ("x[0]", r"^unexpected character '\[' at column 2$"),
        ("x; y", r"^unexpected character ';' at column 2$"),
        ("x y", r"^missing operator before 'y' at column 3$"),
        ("x + ", r"^expression ends unexpectedly at column 5$"),
        ("(x", r"^missing '\)' for '\(' at column 1$"),
        ("x)", r"^unmatched '\)' at column 2$"),
        ("x, y", r"commas only separate function arguments"),
        ("x == y", r"'==' is not allowed"),
        ("x = y", r"'=' is not allowed in an expression"),
        ("", r"^empty expression$"),
        ("x²", r"^unexpected character '²' at column 2$"),
    ],
)
def test_error_messages_say_what_and_where(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


@pytest.mark.parametrize(
    "text, message",
    [
        # stray characters are found among the tokens: the column counts every character before
        ("x +\t\t$", r"^unexpected character '\$' at column 6$"),
        ("x +  . 5", r"^unexpected character '\.' at column 6$"),
        ("x\x00", r"^unexpected character '\\x00' at column 2$"),
        # text with non-ASCII names: any other non-ASCII character is an error, and so are ASCII strays
        ("ρ + $", r"^unexpected character '\$' at column 5$"),
        ("ρ·x", r"^unexpected character '·' at column 2$"),
        ("xρ²", r"^unexpected character '²' at column 3$"),
        # a numeric exponent keeps the literal checks
        ("x**1e999", r"^number '1e999' at column 4: decimal exponent beyond ±400$"),
        ("x^" + "9" * 61, "^number '" + "9" * 27 + r"\.\.\.' at column 3: more than 60 significant digits$"),
    ],
)
def test_error_columns_of_characters_and_exponents(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text, names=("x", "ρ"))


def test_error_columns_on_the_right_of_an_equation():
    with pytest.raises(ParseError, match=r"^unknown name 'foo' at column 9$"):
        parse_equation("y = x + foo", names=XYZ)
    with pytest.raises(ParseError, match=r"^number '1e999' at column 10: decimal exponent beyond ±400$"):
        parse_equation("ρ = x ** 1e999", names=("x", "ρ"))


def test_numeric_exponent_counts_towards_nesting():
    assert parse("x**2", limits=Limits(max_depth=1)) == x**2
    with pytest.raises(ParseError, match=r"^nesting deeper than 1 at column 3$"):
        parse("-x**2", limits=Limits(max_depth=1))
    with pytest.raises(ParseError, match=r"^nesting deeper than 0 at column 2$"):
        parse("x^2", limits=Limits(max_depth=0))


def test_names_that_no_token_can_match_are_ignored():
    assert parse_expression("x + y", names=["x", "y", "+", "", "a b", 3]) == x + y
    assert parse_expression("x*y", names={"x", "y"}) == x * y  # unhashable collections work too


def test_parse_error_carries_column():
    with pytest.raises(ParseError) as info:
        parse("x + y*foo")
    assert info.value.column == 7
    assert isinstance(info.value, ValueError)


# --------------------------------------------------------------------------- limits


def test_default_limits_are_documented_values():
    # At least as permissive as MechBench's harness: 10,000 characters and 1,000 AST
    # nodes a side (its count of Python AST nodes is never below ours), powers up to 100,
    # 1 to 100 equations, and Python's 200 nested parentheses.
    assert DEFAULT_LIMITS == Limits(max_chars=10_000, max_nodes=1000, max_depth=400, max_exponent=1000, max_equations=100)


def test_length_limit():
    text = "x+" * 5000 + "x"  # 10,001 characters
    with pytest.raises(ParseError, match="^expression is 10001 characters long, limit 10000$"):
        parse(text, limits=Limits(max_nodes=100_000))
    assert parse("x", limits=Limits(max_chars=1)) == x


def test_equation_limits_hold_per_side():
    # the harness checks each side of an equation: two full sides make one equation
    side = "+".join(["x"] * 500)  # 999 nodes, 1,999 characters
    lhs, rhs = parse_equation(f"{side} = {side}", names=["x"])
    assert lhs == rhs == 500 * x
    with pytest.raises(ParseError, match="^a side of the equation has 1001 nodes, limit 1000$"):
        parse_equation(f"{side} = {side}+x", names=["x"])
    limits = Limits(max_chars=20, max_nodes=1000)
    assert parse_equation("y = " + "x+" * 9 + "x", names=["x", "y"], limits=limits)[1] == 10 * x  # 19 characters
    with pytest.raises(ParseError, match="^a side of the equation is 21 characters long, limit 20$"):
        parse_equation("y = " + "x+" * 10 + "x", names=["x", "y"], limits=limits)


def test_nesting_as_deep_as_pythons_parser_allows():
    # Python (and so the harness) reads 200 nested parentheses; each also counts a sign
    text = "1/(1+" * 199 + "x" + ")" * 199
    assert parse(text).has(x)
    assert parse("-(" * 199 + "x" + ")" * 199) == -x  # 398 levels
    with pytest.raises(ParseError, match="nesting deeper than 400"):
        parse("-(" * 201 + "x" + ")" * 201)


def test_node_limit():
    assert parse("+".join(["x"] * 500)) == 500 * x  # 999 nodes
    with pytest.raises(ParseError, match="1001 nodes, limit 1000"):
        parse("+".join(["x"] * 501))
    with pytest.raises(ParseError, match="nodes, limit 5"):
        parse("sin(x)+x*y", limits=Limits(max_nodes=5))


@pytest.mark.parametrize(
    "text",
    [
        "(" * 10000 + "x" + ")" * 10000,
        "-" * 10000 + "x",
        "x**" * 10000 + "x",
        "sqrt(" * 10000 + "x" + ")" * 10000,
        "(" * 10000,
    ],
)
def test_deep_nesting_fails_fast(text):
    limits = Limits(max_chars=100_000, max_nodes=100_000)
    with pytest.raises(ParseError, match="nesting deeper than 400 at column"):
        parse(text, limits=limits)


def test_depth_limit_boundary():
    assert parse("(" * 400 + "x" + ")" * 400) == x
    assert parse("sqrt(" * 399 + "x" + ")" * 399).has(x)  # a call level is four parser frames
    with pytest.raises(ParseError, match="nesting deeper than 400 at column 401"):
        parse("(" * 401 + "x" + ")" * 401)
    with pytest.raises(ParseError, match="nesting deeper than 3"):
        parse("sin(cos(-(x)))", limits=Limits(max_depth=3))


# --------------------------------------------------------------------------- remembered groups


@pytest.fixture
def sum_calls(monkeypatch):
    """Counts the sums parsed (a remembered parenthesised sum is not parsed again)."""
    calls = []
    real = parse_module._Parser._sum
    monkeypatch.setattr(parse_module._Parser, "_sum", lambda self: calls.append(self.pos) or real(self))
    parse_module._group_memo.cache_clear()
    return calls


def test_a_remembered_group_gives_what_a_fresh_parse_gives(sum_calls):
    texts = ["(x + y)*z", "sin(x + y)/(x + y)**2", "-(x + y)", "(x + y)**(x + y)", "exp((x + y)) - (2*x)",
             "(2*x)/(2*x + 1)", "atan2(x + y, 2*x)", "log(x + y, 2) + (x + y)"]
    fresh = []
    for text in texts:
        parse_module._group_memo.cache_clear()
        fresh.append(parse(text))
    parse_module._group_memo.cache_clear()
    sum_calls.clear()
    assert [parse(text) for text in texts] == fresh
    remembered = len(sum_calls)
    sum_calls.clear()
    assert [parse(text) for text in texts] == fresh
    assert len(sum_calls) < remembered  # the groups came from memory
    assert parse("((x + y))") == x + y


def test_depth_limit_holds_for_a_remembered_group(sum_calls):
    limits = Limits(max_depth=5)
    assert parse("(-(-(x)))", limits=limits) == x  # remembered at depth 1
    with pytest.raises(ParseError, match="nesting deeper than 5"):
        parse("-(-(-(x)))", limits=limits)  # the same group, two levels deeper


def test_remembered_groups_are_kept_apart_by_names(sum_calls):
    assert parse("(x + y)", names=("x", "y")) == x + y
    with pytest.raises(ParseError, match="unknown name 'y'"):
        parse("(x + y)", names=("x",))
    assert parse("(x + w)", allow_new_names=True) == x + symbol("w")
    with pytest.raises(ParseError, match="unknown name 'w'"):
        parse("(x + w)")
    assert parse("(x**5)") == x**5
    with pytest.raises(ParseError, match="exceeds limit 4"):
        parse("(x**5)", limits=Limits(max_exponent=4))


def test_huge_depth_limit_never_leaks_recursion_error():
    limits = Limits(max_chars=1_000_000, max_nodes=1_000_000, max_depth=1_000_000)
    with pytest.raises(ParseError):
        parse("(" * 5000 + "x" + ")" * 5000, limits=limits)


@pytest.mark.parametrize(
    "text, message",
    [
        ("x**1001", r"^exponent 1001 at column 2 exceeds limit 1000$"),
        ("x**-1001", "exponent -1001 at column 2 exceeds limit 1000"),
        ("x**1000.5", "exponent 2001/2 at column 2 exceeds limit 1000"),
        ("x**(10**10**10)", "exponent 10000000000 at column 7 exceeds limit 1000"),
        ("10**10**10", "exponent 10000000000 at column 3 exceeds limit 1000"),
        ("x**1e300", "exceeds limit 1000"),
        ("x**(400*pi)", "exceeds limit 1000"),
        ("(2**1000)**1000", "would have about 301030 digits, limit 4000"),
        ("(1e300*x)**1000", "would have about 300000 digits, limit 4000"),
        ("((x/3e100)**40)**40", "would have about 4019 digits, limit 4000"),
        ("(7*sqrt(10)**99*x)**100", "would have about 5035 digits, limit 4000"),
        ("(x**1000)**1000", "exponent 1000000 in x\\*\\*1000000 exceeds limit 1000"),
        ("(x**100*y)**11", "exponent 1100 in x\\*\\*1100 exceeds limit 1000"),
        ("x**600*x**600", "exponent 1200 in x\\*\\*1200 exceeds limit 1000"),
        ("x**600/x**-600", "exponent 1200"),
    ],
)
def test_exponent_limits(text, message):
    with pytest.raises(ParseError, match=message):
        parse(text)


def test_number_powers_below_the_digit_limit_are_exact():
    assert parse("(1/10)**1000*(1/10)**1000*(1/10)**1000*(1/10)**1000") == se.Rational(1, 10**4000)
    with pytest.raises(ParseError, match="^number at column 52 has about 4001 digits, limit 4000$"):
        parse("(1/10)**1000*(1/10)**1000*(1/10)**1000*(1/10)**1000/10")
    assert parse("(1/10**10)**399") == se.Rational(1, 10**3990)
    assert parse("(1/10)**1000") == se.Rational(1, 10**1000)
    with pytest.raises(ParseError, match="would have about 4002 digits"):
        parse("(1/100)**2001.0", limits=Limits(max_exponent=5000))


def test_exponents_at_the_limit_are_accepted():
    assert parse("x**1000") == x**1000
    assert parse("x**-1000") == x ** (-1000)
    assert parse("(x**10)**100") == x**1000
    assert parse("x**500*x**500") == x**1000
    assert parse("2**1000") == se.Integer(2**1000)
    assert parse("exp(x)**1000") == se.exp(1000 * x)
    with pytest.raises(ParseError, match="exceeds limit 2"):
        parse("x**3", limits=Limits(max_exponent=2))
    with pytest.raises(ParseError, match="exceeds limit 2"):
        parse("x*x*x", limits=Limits(max_exponent=2))


# --------------------------------------------------------------------------- equations


def test_parse_equation_returns_both_sides():
    lhs, rhs = parse_equation("y = x**2 + 1", names=XYZ)
    assert (lhs, rhs) == (y, x**2 + 1)
    lhs, rhs = parse_equation("2*P_1 = P_emit + P_2", allow_new_names=True)
    assert lhs == 2 * symbol("P_1")
    assert names_of(rhs) == {"P_emit", "P_2"}


def test_parse_expression_does_not_strip_a_leading_assignment():
    with pytest.raises(ParseError, match="'=' is not allowed in an expression"):
        parse("y = x")


@pytest.mark.parametrize(
    "text, message",
    [
        ("x == y", r"'==' is not allowed \(column 3\)"),
        ("x = y = z", r"more than one '=' .*column 7"),
        ("x + y", "found no '='"),
        ("= y", "missing left-hand side"),
        ("x =", "missing right-hand side"),
        ("x + = y", "expression ends unexpectedly at column 5"),
        ("x = y +", "expression ends unexpectedly at column 8"),
        ("x = foo", "unknown name 'foo' at column 5"),
    ],
)
def test_malformed_equations(text, message):
    with pytest.raises(ParseError, match=message):
        parse_equation(text, names=XYZ)


def test_equation_node_limit_counts_each_side():
    assert parse_equation("x + y = x + z", names=XYZ, limits=Limits(max_nodes=3))[0] == x + y
    with pytest.raises(ParseError, match="^a side of the equation has 5 nodes, limit 4$"):
        parse_equation("x + y + z = x", names=XYZ, limits=Limits(max_nodes=4))


def test_mdbench_style_formulas_parse():
    names = ["T", "a", "S", "s", "b", "R", "E", "P_in"]
    lhs, rhs = parse_equation("T = ((1 - a) * S / (4 * s * (1 - b / 2)))**(1/4)", names=names)
    assert lhs == symbol("T")
    assert rhs == ((1 - symbol("a")) * symbol("S") / (4 * symbol("s") * (1 - symbol("b") / 2))) ** se.Rational(1, 4)
    lhs, rhs = parse_equation("P_in = 3.141592653589793 * R**2 * (1 - a) * S", names=names)
    assert rhs.has(se.pi) is False
    lhs, rhs = parse_equation("E = s * T**4", names=names)
    assert lhs == se.Symbol("E") and lhs != se.E


# --------------------------------------------------------------------------- split_equations


def test_split_equations_on_newlines_and_semicolons():
    text = " a = b ;c = d\n\n e = f \r\n;; g = h; "
    assert split_equations(text) == ["a = b", "c = d", "e = f", "g = h"]
    assert split_equations("") == []
    assert split_equations(" ;\n ") == []


def test_split_equations_limits():
    with pytest.raises(ParseError, match="101 equations, limit 100"):
        split_equations("\n".join(f"a{i} = {i}" for i in range(101)))
    assert len(split_equations(";".join(["a = 1"] * 100))) == 100  # the harness takes 1 to 100
    with pytest.raises(ParseError, match="3 equations, limit 2"):
        split_equations("a=1;b=2;c=3", limits=Limits(max_equations=2))
    with pytest.raises(ParseError, match="characters long"):
        split_equations("a" * (10_000 * 100 + 1))
    with pytest.raises(ParseError, match="expected mechanism text, got NoneType"):
        split_equations(None)


# --------------------------------------------------------------------------- probe answers


def test_probe_answers_json_and_lines_give_the_same_result():
    expected = {"z": "x**2 + 1", "w": "sqrt(x)/2"}
    assert parse_probe_answers('{"z": "x**2 + 1", "w": " sqrt(x)/2 "}') == expected
    assert parse_probe_answers("z = x**2 + 1\nw = sqrt(x)/2\n") == expected
    assert parse_probe_answers("z = x**2 + 1; w = sqrt(x)/2") == expected
    assert parse_probe_answers({"z": "x**2 + 1", "w": "sqrt(x)/2"}) == expected


def test_probe_answers_empty_forms():
    assert parse_probe_answers(None) == {}
    assert parse_probe_answers("") == {}
    assert parse_probe_answers("  \n ") == {}
    assert parse_probe_answers("{}") == {}


def test_probe_answers_json_numbers_become_text():
    answers = parse_probe_answers('{"z": 0.5, "k": 3}')
    assert answers == {"z": "0.5", "k": "3"}
    assert parse_expression(answers["z"]) == se.Rational(1, 2)


def test_probe_answer_texts_are_not_parsed_here():
    # the expression is returned raw; parsing it is the caller's job
    assert parse_probe_answers("z = foo(") == {"z": "foo("}


@pytest.mark.parametrize(
    "value, message",
    [
        ('{"z": "x"', "malformed probe answers JSON"),
        ("[1, 2]", "not of the form 'name = expression'"),
        ('{"z": ["x"]}', "answer must be an expression text, got list"),
        ('{"z": true}', "answer must be an expression text, got bool"),
        ('{"z": NaN}', "answer must be an expression text, got float"),
        ('{"z": null}', "answer must be an expression text, got NoneType"),
        ('{"z": ""}', "probe 'z': empty answer"),
        ('{"2z": "x"}', "probe name '2z' is not a valid name"),
        ('{"z.a": "x"}', "is not a valid name"),
        ("z x + 1", "not of the form 'name = expression'"),
        ("z == x", "'==' is not allowed"),
        ("z =", "probe 'z': empty answer"),
        ("= x", "probe name '' is not a valid name"),
        ("z(x) = x", "is not a valid name"),
        ("z = x\nz = y", "probe 'z' is answered more than once"),
        ({"z": 1j}, "answer must be an expression text"),
        ({3: "x"}, "probe name 3 is not a valid name"),
        (42, "must be text or a mapping, got int"),
        ("{" * 100_000, "malformed probe answers JSON|characters long"),
    ],
)
def test_malformed_probe_answers(value, message):
    with pytest.raises(ParseError, match=message):
        parse_probe_answers(value)


def test_unusable_answers_can_be_set_aside_one_by_one():
    errors: dict[str, str] = {}
    value = '{"z": "", "w": "x + 1", "v": null}'
    assert parse_probe_answers(value, errors=errors) == {"w": "x + 1"}
    assert errors == {"z": "probe 'z': empty answer", "v": "probe 'v': answer must be an expression text, got NoneType"}
    # a malformed whole, an invalid name or a repeat still fails the whole set
    for whole in ('{"z": "x"', '{"2z": "x"}', "z =\nz = y"):
        with pytest.raises(ParseError):
            parse_probe_answers(whole, errors={})


def test_probe_answers_limit():
    text = "\n".join(f"z{i} = {i}" for i in range(101))
    with pytest.raises(ParseError, match="101 equations, limit 100"):
        parse_probe_answers(text)
    mapping = {f"z{i}": "1" for i in range(3)}
    with pytest.raises(ParseError, match="3 probe answers, limit 2"):
        parse_probe_answers(mapping, limits=Limits(max_equations=2))


def test_parsing_never_imports_sympy():
    # SymPy is slow and must stay off the hot path: parse a variety of inputs in a
    # fresh interpreter and check SymPy was never imported.
    script = """
import sys
from fastscore.text.parse import parse_equation, parse_expression
from fastscore.text.tokens import ParseError
texts = ["log(x, 3) + log10(x) + log2(x)", "sqrt(2)*exp(1000)*x**0.5", "asin(2)", "1/0",
         "(x**1000)**1000", "atan2(1, 1) + cbrt(-x) + abs(x)", "y = 2^3^2 - pi", "x + foo"]
for text in texts:
    try:
        parse_equation(text, names=["x", "y"]) if "=" in text else parse_expression(text, names=["x"])
    except ParseError:
        pass
print("sympy" in sys.modules)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("text", [
    "x/(x - x)", "log(x - x)", "(y - y)**(-1)", "atan2(0, 0)", "x + tan(pi/2)", "0**(-1)*x",
    "x*(1/(2 - 2))", "sqrt(x)*acos(3)", "exp(x)/(exp(x) - exp(x))", "(x - x)**(1 - 2)", "x*log(0*y)",
    "(0*x)**(-2) + y", "atanh(1)*x", "x**(1/(1 - 1))",
])
def test_non_finite_constants_are_rejected_where_built(text):
    """No result holds ``zoo`` or ``nan``: each is rejected at the operation making it."""
    with pytest.raises(ParseError):
        parse(text)
