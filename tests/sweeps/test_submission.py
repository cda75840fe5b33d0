"""``Submission``: a sweep row read once, its texts normalised in one place and decoded
once (equation texts, probe answers, probe-row columns)."""
import json

import pytest

from fastscore.sweeps.submission import ProbeAnswers, Submission, probe_row_columns, submission_text
from fastscore.text.tokens import Limits, ParseError


def test_submission_text_normalises_every_cell_alike():
    assert submission_text(None) is None
    assert submission_text("   \n ") is None
    assert submission_text("  y = 2*x \n") == "y = 2*x"
    assert submission_text({"z": "x", "a": "y"}) == '{"a": "y", "z": "x"}'  # a mapping: its sorted JSON
    assert submission_text({}) == "{}"
    assert submission_text(3) == "3"
    assert submission_text(["a = 1", "b = 2"]) == "['a = 1', 'b = 2']"  # as str(): the readers join lists


def test_from_row_reads_the_cell_texts_and_carries_the_rest_in_order():
    row = {"config": "c", "run": 2, "task": "t", "wall_time": 1.5, "phenomenal": " y = x ", "mechanism": "",
           "probes": {"h": "x"}, "probe_replies": None, "probe_columns": '{"h": {"k": 1}}',
           "submission": "ignored", "tokens": 7, "read_error": None}
    s = Submission.from_row(row)
    assert (s.config, s.run, s.task) == ("c", 2, "t")
    assert (s.law, s.mechanism, s.probes, s.replies) == ("y = x", None, '{"h": "x"}', None)
    assert s.probe_columns == '{"h": {"k": 1}}'
    assert list(s.carried.items()) == [("wall_time", 1.5), ("tokens", 7), ("read_error", None)]
    assert s.law_key == ("y = x", None)
    assert s.answers_key == ('{"h": "x"}', None, None)  # a phenomenal law: the answers alone
    with pytest.raises(KeyError):
        Submission.from_row({"config": "c", "task": "t"})


def test_a_mechanisms_answers_key_holds_its_law_key():
    s = Submission.from_row({"config": "c", "run": 0, "task": "t", "mechanism": "h = x; y = h", "probes": "h = x"})
    assert s.law_key == (None, "h = x; y = h")
    assert s.answers_key == ("h = x", None, (None, "h = x; y = h"))
    assert s.equations() == ("h = x", "y = h")


def test_equations_drop_comments_and_raise_past_the_limits_every_time():
    s = Submission.from_row({"config": "c", "run": 0, "task": "t", "mechanism": "h = x # helper\ny = h; z = 1"})
    assert s.equations() == ("h = x", "y = h", "z = 1")
    assert Submission.from_row({"config": "c", "run": 0, "task": "t", "phenomenal": "y = x"}).equations() == ()
    for _ in range(2):  # memoised, yet an error is raised each time
        with pytest.raises(ParseError, match="3 equations, limit 2"):
            s.equations(Limits(max_equations=2))


def test_answers_decode_written_answers_and_replies():
    row = {"config": "c", "run": 0, "task": "t", "probes": "h = x**2; g = 2*x",
           "probe_replies": json.dumps({"k": "k = x", "m": None})}
    answers = Submission.from_row(row).answers()
    assert answers == ProbeAnswers({"h": "x**2", "g": "2*x"}, {}, None, {"k": "k = x", "m": None}, None)
    unusable = Submission.from_row({**row, "probes": {"h": "x", "g": ""}, "probe_replies": None}).answers()
    assert (unusable.written, unusable.unusable, unusable.error) == ({"h": "x"}, {"g": "probe 'g': empty answer"},
                                                                     None)
    broken = Submission.from_row({**row, "probes": "{not json", "probe_replies": "[1, 2]"}).answers()
    assert (broken.written, broken.unusable, broken.replies) == ({}, {}, None)
    assert broken.error.startswith("malformed probe answers JSON")
    assert broken.replies_error == "probe replies are not a JSON object {probe: reply}"
    nothing = Submission.from_row({"config": "c", "run": 0, "task": "t"}).answers()
    assert nothing == ProbeAnswers({}, {}, None, None, None)


def test_probe_row_columns():
    assert probe_row_columns(None) == {}
    assert probe_row_columns("") == {}
    assert probe_row_columns("{oops") == {}
    assert probe_row_columns('["h"]') == {}
    assert probe_row_columns('{"h": {"harness_probe_ok": true}, "g": 3, "1": {}}') == \
        {"h": {"harness_probe_ok": True}, "1": {}}
