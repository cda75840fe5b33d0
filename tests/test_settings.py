"""Settings: one field per tolerance, limit and budget, each a CLI flag of its own name,
each used by the scorer; the settings that cannot change a row do not block a resume."""
from __future__ import annotations

from dataclasses import fields

import pytest

from fastscore.cli import _parser
from fastscore.problems.formats import load_problems
from fastscore.scoring.reference import build_reference
from fastscore.scoring.task import score_task
from fastscore.settings import DEFAULT_SETTINGS, Settings, scalar_settings
from fastscore.text.tokens import Limits

TASK = "michaelis-menten-rate"
LAW = "v = k3*E_T*S/(k1 + S)"  # not the law: k1 stands where K_M = (k2 + k3)/k1 should
MECHANISM = "r_on = k1*E_free*S; r_off = k2*C; r_cat = k3*C; r_on = r_off + r_cat; E_T = E_free + C; v = r_cat"


@pytest.fixture(scope="module")
def reference(example_dir):
    return build_reference(next(p for p in load_problems(example_dir) if p.task_id == TASK))


def _score(reference, settings, **row):
    return score_task(reference, [{"config": "c", "run": 0, "task": TASK, **row}], settings=settings)[0][0]


def test_every_setting_but_the_parser_limits_is_a_score_flag_of_its_own_name():
    args = _parser().parse_args(["score", "--problems", "p", "--sweep", "s", "--out", "o"])
    names = {f.name for f in fields(Settings)} - {"limits"}
    assert {s.name for s in scalar_settings()} == names
    assert {name: getattr(args, name) for name in names} == {name: getattr(DEFAULT_SETTINGS, name) for name in names}
    args = _parser().parse_args(["score", "--problems", "p", "--sweep", "s", "--out", "o", "--n-points", "64",
                                 "--solve-budget", "0.5", "--row-timeout", "7", "--max-text-nodes", "9"])
    assert (args.n_points, args.solve_budget, args.row_timeout, args.max_text_nodes) == (64, 0.5, 7.0, 9)


@pytest.mark.parametrize("command", ["data", "prepare"])
def test_the_old_flag_names_still_work(command):
    old = _parser().parse_args([command, "--problems", "p", "--out", "o", "--seed", "5", "--samples", "30"])
    new = _parser().parse_args([command, "--problems", "p", "--out", "o", "--data-seed", "5", "--n-samples", "30"])
    assert (old.data_seed, old.n_samples) == (new.data_seed, new.n_samples) == (5, 30)
    assert _parser().parse_args(["score", "--problems", "p", "--sweep", "s", "--out", "o", "--points", "8"]).n_points == 8


def test_a_setting_out_of_range_is_one_clear_error():
    with pytest.raises(ValueError, match="setting row_timeout must be a finite number"):
        Settings(row_timeout=float("nan"))
    with pytest.raises(ValueError, match="setting limits must be"):
        Settings(limits={"max_nodes": 5})


def test_the_parser_limits_of_the_settings_bound_a_submission(reference):
    assert _score(reference, DEFAULT_SETTINGS, phenomenal=LAW)["status"] == "ok"
    row = _score(reference, Settings(limits=Limits(max_nodes=5)), phenomenal=LAW)
    assert row["status"] == "parse_error" and "limit 5" in row["error"]


def test_a_law_over_max_text_nodes_is_judged_but_not_written_out(reference):
    full = _score(reference, DEFAULT_SETTINGS, mechanism=MECHANISM)
    small = _score(reference, Settings(max_text_nodes=3), mechanism=MECHANISM)
    assert full["derived_formula"] is not None and small["derived_formula"] is None
    assert full["p_verdict"] == small["p_verdict"] == "proven"


def test_a_resume_ignores_only_the_settings_that_cannot_change_a_row():
    assert Settings(row_timeout=1.0, memo_size=5).row_dict() == DEFAULT_SETTINGS.row_dict()
    assert Settings(max_text_nodes=3).row_dict() != DEFAULT_SETTINGS.row_dict()
    assert set(DEFAULT_SETTINGS.as_dict()) - set(DEFAULT_SETTINGS.row_dict()) == {"row_timeout", "batch_rows", "ray_threshold", "memo_size"}
