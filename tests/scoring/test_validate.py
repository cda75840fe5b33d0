"""``fastscore validate``: mechanisms derive their laws; probes are internal quantities."""
from __future__ import annotations

from pathlib import Path

import pytest

from fastscore.cli import main
from fastscore.problems.formats import load_problem, load_problems
from fastscore.scoring.validate import validate_problem

EXAMPLE = Path(__file__).resolve().parents[2] / "problems" / "example"
MM = (EXAMPLE / "michaelis-menten-rate.yaml").read_text()


def _problem(tmp_path: Path, text: str):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    return load_problem(path, root=tmp_path)


def _failures(problem) -> dict[str, str]:
    return {f.check: f.detail for f in validate_problem(problem) if not f.ok}


def _warnings(problem) -> dict[str, str]:
    return {f.check: f.detail for f in validate_problem(problem) if f.warning}


def test_bundled_examples_are_valid(capsys):
    assert main(["validate", "--problems", str(EXAMPLE)]) == 0
    assert "4 of 4 problems valid" in capsys.readouterr().out


def test_a_law_the_mechanism_does_not_derive_fails(tmp_path):
    text = MM.replace("phenomenological_formula: v = k3 * E_T * S / ((k2 + k3) / k1 + S)",
                      "phenomenological_formula: v = k3 * E_T * S / (k2 / k1 + S)")
    failures = _failures(_problem(tmp_path, text))
    assert set(failures) == {"law"} and failures["law"].startswith("different")


def test_an_under_determined_mechanism_fails(tmp_path):
    text = MM.replace("- {formula: E_T = E_free + C, formula_description: Enzyme conservation}\n", "")
    failures = _failures(_problem(tmp_path, text))
    assert "under-determined" in failures["mechanism"]


def test_a_probe_formula_that_disagrees_with_the_mechanism_fails(tmp_path):
    text = MM.replace("- {name: C, description: Enzyme-substrate complex concentration, "
                      "formula: C = E_T * S / ((k2 + k3) / k1 + S)}",
                      "- {name: C, description: wrong, formula: C = E_T * S / (k2 / k1 + S)}")
    failures = _failures(_problem(tmp_path, text))
    assert len(failures) == 1 and "disagrees with the mechanism" in failures["probe:C"]


def test_a_probe_that_is_the_law_itself_is_a_warning(tmp_path):
    text = MM.replace("- {name: C, description: Enzyme-substrate complex concentration, "
                      "formula: C = E_T * S / ((k2 + k3) / k1 + S)}", "- {name: r_cat, description: same as the law}")
    problem = _problem(tmp_path, text)
    assert _failures(problem) == {}
    assert _warnings(problem) == {"probe:r_cat": "the probe is the target law itself"}


def test_a_probe_that_is_not_an_intermediate_is_rejected_when_loading(tmp_path):
    from fastscore.problems.model import ProblemError
    text = MM.replace("- {name: C, description: Enzyme-substrate complex concentration, "
                      "formula: C = E_T * S / ((k2 + k3) / k1 + S)}", "- {name: v, description: the target}")
    with pytest.raises(ProblemError, match="not an intermediate"):
        _problem(tmp_path, text)


def test_a_probe_constant_over_the_domain_is_a_warning(tmp_path):
    text = (EXAMPLE / "vacancy-diffusion-variant-1-2.yaml").read_text()
    text = text.replace("Eb = Em + Omega * p**2 / pref", "Eb = Em").replace(
        "exp(-(Em + Omega * p**2 / pref) / (kB * T))", "exp(-Em / (kB * T))")
    problem = _problem(tmp_path, text)
    assert _failures(problem) == {}
    assert _warnings(problem) == {"probe:Eb": "the probe is constant over the domain"}


def test_cli_exit_status_is_1_when_a_problem_is_invalid(tmp_path, capsys):
    (tmp_path / "bad.yaml").write_text(MM.replace("(k2 + k3) / k1 + S)\nproblem", "k2 / k1 + S)\nproblem")
                                       .replace("v = k3 * E_T * S / ((k2 + k3) / k1 + S)", "v = k3 * E_T * S"))
    assert main(["validate", "--problems", str(tmp_path)]) == 1
    assert "FAIL bad: law" in capsys.readouterr().out


def test_a_probe_that_is_a_function_of_the_law_alone_is_a_warning(tmp_path, capsys):
    # w = v**2 is fixed by the law (any input change moves w only through v)
    text = MM.replace("- {formula: v = r_cat, formula_description: The observed rate is the catalytic flux}",
                      "- {formula: v = r_cat, formula_description: The observed rate is the catalytic flux}\n"
                      "- {formula: w = v**2, formula_description: a function of the law}")
    text = text.replace("  auxiliary_inputs: []", "  - {name: w, description: squared rate, unit: x}\n"
                                                   "  auxiliary_inputs: []")
    text = text.replace("- {name: C, description: Enzyme-substrate complex concentration, "
                        "formula: C = E_T * S / ((k2 + k3) / k1 + S)}", "- {name: w, description: squared rate}")
    problem = _problem(tmp_path, text)
    assert _failures(problem) == {}
    assert _warnings(problem) == {"probe:w": "the probe is a function of the law alone (its gradient is parallel "
                                             "to the law's everywhere)"}
    assert main(["validate", "--problems", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "WARN p: probe:w: the probe is a function of the law alone" in out
    assert out.splitlines()[-1] == "1 of 1 problems valid (1 warning)"


def test_the_thermoelastic_constraint_task_validates(capsys, mechbench_tasks):
    """MechBench's 'Materials Thermoelastic Constraint - Variant 1-3': a coupled linear
    block of four balances whose elimination cancels an entry exactly (it once stopped
    the whole run with a KeyError)."""
    folder = mechbench_tasks / "material"
    problem = next(p for p in load_problems(folder) if p.task_id == "Materials Thermoelastic Constraint - Variant 1-3")
    findings = validate_problem(problem)
    assert all(f.ok for f in findings), [f for f in findings if not f.ok]
    assert {f.check for f in findings} >= {"mechanism", "law", "probe:e1", "probe:e3"}


def test_an_internal_error_is_that_tasks_fail_line_and_the_run_goes_on(tmp_path, capsys, monkeypatch):
    import fastscore.scoring.validate as validate
    (tmp_path / "a.yaml").write_text(MM)
    (tmp_path / "b.yaml").write_text(MM)
    real = validate.build_reference

    def broken(problem, **kwargs):
        if problem.task_id == "a":
            raise KeyError("e3")
        return real(problem, **kwargs)

    monkeypatch.setattr(validate, "build_reference", broken)
    assert main(["validate", "--problems", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "FAIL a: internal: internal error: KeyError: 'e3'" in out
    assert out[-1] == "1 of 2 problems valid"
