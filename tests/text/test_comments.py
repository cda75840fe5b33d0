"""MechBench's ``#`` comments: the one stripper (``comment_free_lines``, ``strip_comments``)
and the four readers that use it, each keeping its own handling around it."""
import numpy as np
import pytest

from fastscore.service.feedback import feedback
from fastscore.service.public import PublicTask
from fastscore.sweeps.mechbench_runs import submission_text
from fastscore.text.answers import reply_equation, split_equations
from fastscore.text.tokens import ParseError, comment_free_lines, strip_comments


@pytest.mark.parametrize("text, lines", [
    ("", []),
    ("a = 1", ["a = 1"]),
    ("a = 1 # rate\nb = 2", ["a = 1 ", "b = 2"]),
    ("# only a comment\n", [""]),
    ("a = 1 # one # two", ["a = 1 "]),  # the first '#' ends the line
    ("#a = 1", [""]),
    ("a = 1\r\nb = 2 #c\rc = 3", ["a = 1", "b = 2 ", "c = 3"]),
    ("a = 1#x\u2028b = 2", ["a = 1", "b = 2"]),  # every str.splitlines break ends a comment
    ("a = 1\n\n  \nb = 2\n", ["a = 1", "", "  ", "b = 2"]),  # not stripped, empty lines kept
    ("a = '#' + b", ["a = '"]),  # no quoting: the grammar has no strings
    ("x = 1; y = 2 # z = 3; w = 4", ["x = 1; y = 2 "]),  # ';' is no line break
])
def test_comment_free_lines(text, lines):
    assert comment_free_lines(text) == lines
    assert strip_comments(text) == "\n".join(lines)


def test_strip_comments_makes_every_line_break_a_newline():
    assert strip_comments("a = 1\r\nb = 2\x0bc = 3\u2029") == "a = 1\nb = 2\nc = 3"


def test_split_equations_strips_comments_only_from_a_text_with_one():
    assert split_equations("a = 1 # k\nb = 2; c = 3 # d = 4") == ["a = 1", "b = 2", "c = 3"]
    # without a '#' the text is split at '\n', '\r' and ';' only: U+2028 stays inside its equation
    assert split_equations("a = 1\u2028b = 2") == ["a = 1\u2028b = 2"]
    assert split_equations("a = 1\u2028b = 2 # c") == ["a = 1", "b = 2"]


def test_reply_equation_drops_comments():
    assert reply_equation("# my answer\nz = x**2  # squared\n", "z") == "z = x**2"
    assert reply_equation("z = x # ; y = 2", "z") == "z = x"
    with pytest.raises(ParseError, match="holds no equation"):
        reply_equation("# z = x", "z")
    with pytest.raises(ParseError, match="holds 2 equations"):
        reply_equation("z = x # first\nz = y", "z")


def test_submission_text_keeps_one_equation_a_line():
    text = "# header\nS = k1*E # binding\n\n  P = k2*S ; Q = P  \n#\n"
    assert submission_text(text) == "S = k1*E\nP = k2*S ; Q = P"
    assert submission_text("# nothing\n   # here") == ""


def test_feedback_strips_comments_at_every_line_break():
    x = np.linspace(1.0, 2.0, 5)
    task = PublicTask(columns=("x", "y"), target="y", sources=("x",), data=np.vstack([x, 2 * x + 1]))
    answer = feedback(task, "h = 2*x # helper\u2028y = h + 1 # target\n# end")
    assert answer["ok"] and answer["solution"] == {"h": "2*x", "y": "1 + 2*x"}
    assert answer["train"]["numerically_equivalent"]
    empty = feedback(task, "# only a comment\n")
    assert (empty["ok"], empty["error_type"], empty["error"]) == (False, "ParseError", "empty submission: no equation")
