"""Problem loading: the 72 MDBench files as they are, fastscore's fields, and field-level errors."""

import pytest
import yaml

from fastscore.problems.formats import load_problem, load_problems
from fastscore.problems.model import Constant, Equation, FieldReader, Probe, ProblemError, Sampling, Variable
from tests.support.external import MDBENCH, requires_mdbench

BASE = {
    "problem_name": "Toy",
    "problem_description": "A toy mechanism.",
    "phenomenological_formula": "y = 2 * a * x",
    "variable_description": {
        "target": {"name": "y", "description": "target", "unit": "m"},
        "inputs": [
            {"name": "x", "description": "input", "unit": "m",
             "sampling": {"min": 1.0, "max": 3.0, "ood_boundary": 2.0, "distribution": "uniform"}},
            {"name": "k", "unit": "1",
             "sampling": {"min": 0.1, "max": 10.0, "ood_boundary": 1.0, "distribution": "log_uniform"}},
        ],
        "intermediates": [{"name": "h", "description": "half", "unit": "m"}],
        "auxiliary_inputs": [],
    },
    "constants": [{"name": "a", "description": "a constant", "value": 1.5, "unit": "1"}],
    "mechanism": [
        {"formula": "h = a * x", "formula_description": "first"},
        {"formula": "y = 2 * h", "formula_description": "second"},
    ],
}


def write(tmp_path, data, name="toy.yaml"):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def variant(**changes):
    """A deep copy of BASE with dotted-path changes; value None deletes the key."""
    data = yaml.safe_load(yaml.safe_dump(BASE))
    for dotted, value in changes.items():
        node, *path = data, *dotted.split("__")
        keys = [int(k) if k.isdigit() else k for k in path]
        for key in keys[:-1]:
            node = node[key]
        if value is None:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return data


# --- the 72 MDBench files ---------------------------------------------------------

@requires_mdbench
def test_all_mdbench_problems_load():
    problems = load_problems(MDBENCH)
    assert len(problems) == 72
    assert [p.task_id for p in problems] == sorted(p.stem for p in MDBENCH.glob("*.yaml"))
    assert sum(1 for p in problems if p.auxiliary_inputs) == 20
    for problem in problems:
        assert 2 <= len(problem.inputs) <= 8
        assert 2 <= len(problem.mechanism) <= 10
        assert all(v.sampling is not None for v in problem.observed)
        assert problem.family is None and problem.mutations is None and problem.probes == ()
        assert problem.n_mutations is None and not problem.is_original


@requires_mdbench
def test_mdbench_file_read_as_written():
    problem = load_problem(MDBENCH / "bound-particle-orbital-radius-variant3.yaml", root=MDBENCH)
    assert problem.task_id == "bound-particle-orbital-radius-variant3"
    assert problem.name == "Bound-Particle Orbital Radius - Variant 3"
    assert problem.law == "r = (4 * 3.141592653589793 * eps * hbar**2 * (2.0e-9)**3 / (m * q**2))**0.25"
    assert problem.target == Variable("r", "Orbital radius of the charged particle", "m")
    assert problem.inputs[0] == Variable(
        "m", "Mass of the charged particle", "kg",
        Sampling(min=3.0e-31, max=3.0e-30, ood_boundary=1.5e-30, distribution="log_uniform"))
    assert [v.name for v in problem.intermediates] == ["R", "q_enc", "F_C", "F_in", "v", "L"]
    assert problem.constants == (
        Constant("eps", 8.8541878128e-12, "Vacuum permittivity", "kg^-1 m^-3 s^4 A^2"),
        Constant("hbar", 1.054571817e-34, "Reduced Planck constant", "kg m^2 s^-1"))
    assert problem.mechanism[0] == Equation(
        "R = 2.0e-9", "The radius of the uniformly charged central sphere.")
    assert problem.mechanism[-1].text == "L = 1 * hbar"
    assert problem.data_variables == ("r", "m", "q")
    assert problem.known_names == ("m", "q", "eps", "hbar")


@requires_mdbench
def test_mdbench_numbers_written_as_yaml_strings_and_pi_constant():
    # rho's range is written 5.0e2 / 1.5e3, which YAML 1.1 reads as strings
    problem = load_problem(MDBENCH / "narrow-tube-liquid-rise-original.yaml", root=MDBENCH)
    rho = next(v for v in problem.inputs if v.name == "rho")
    assert rho.sampling == Sampling(min=500.0, max=1500.0, ood_boundary=1000.0, distribution="uniform")
    assert [c.name for c in problem.constants] == ["π"]
    assert "π" in problem.known_names


@requires_mdbench
def test_mdbench_auxiliary_inputs_are_observed():
    problems = [p for p in load_problems(MDBENCH) if p.auxiliary_inputs]
    problem = problems[0]
    assert problem.observed == problem.inputs + problem.auxiliary_inputs
    assert problem.data_variables[-len(problem.auxiliary_inputs):] == tuple(
        v.name for v in problem.auxiliary_inputs)


# --- fastscore's fields -------------------------------------------------------------

def test_fastscore_fields_and_task_id_with_folder(tmp_path):
    data = variant(family="toy", domain="physics", mutations=[2, 0],
                   probes=[{"name": "h", "description": "half", "formula": "h = a * x"}])
    path = write(tmp_path, data, "toy-family/variant-0-2.yaml")
    problem = load_problem(path, root=tmp_path)
    assert problem.task_id == "toy-family/variant-0-2"
    assert (problem.family, problem.domain, problem.mutations) == ("toy", "physics", (2, 0))
    assert problem.n_mutations == 2 and not problem.is_original
    assert problem.probes == (Probe("h", "half", "h = a * x"),)
    assert problem.source == str(path)


def test_original_and_probe_without_formula(tmp_path):
    problem = load_problem(write(tmp_path, variant(mutations=[], probes=[{"name": "h"}])), root=tmp_path)
    assert problem.is_original and problem.n_mutations == 0
    assert problem.probes == (Probe("h"),)


def test_constants_missing_and_extra_top_level_fields_ignored(tmp_path):
    data = variant(constants=None, aha="备注", phenomenological_formula="y = 2 * x")
    data["mechanism"] = [{"formula": "y = 2*x"}]
    data["variable_description"]["auxiliary_inputs"] = [
        {"name": "z", "sampling": {"min": -1, "max": 1, "ood_boundary": 0, "distribution": "uniform"}}]
    problem = load_problem(write(tmp_path, data), root=tmp_path)
    assert problem.constants == ()
    assert problem.mechanism == (Equation("y = 2*x"),)
    assert problem.auxiliary_inputs[0].sampling == Sampling(-1.0, 1.0, 0.0, "uniform")
    assert problem.data_variables == ("y", "x", "k", "z")


# --- field-level errors ---------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("changes, field, message", [
    ({"variable_description__inputs__1__sampling__min": "abc"},
     "variable_description.inputs[1].sampling.min", "expected a number, got 'abc'"),
    ({"variable_description__inputs__0__sampling__max": float("inf")},
     "variable_description.inputs[0].sampling.max", "expected a finite number"),
    ({"variable_description__inputs__0__sampling__ood_boundary": 3.0},
     "variable_description.inputs[0].sampling", "min < ood_boundary < max"),
    ({"variable_description__inputs__0__sampling__distribution": "normal"},
     "variable_description.inputs[0].sampling.distribution", "expected one of uniform, log_uniform"),
    ({"variable_description__inputs__0__sampling__distribution": "log_uniform",
      "variable_description__inputs__0__sampling__min": 0},
     "variable_description.inputs[0].sampling.min", "log_uniform needs min > 0"),
    ({"variable_description__inputs__0__sampling__ood": 1},
     "variable_description.inputs[0].sampling", "unknown field(s) ood"),
    ({"variable_description__inputs__0__sampling": None},
     "variable_description.inputs[0]", "missing required field 'sampling'"),
    ({"variable_description__inputs__1__name": "x"},
     "variable_description.inputs[1].name", "'x' is already used by variable_description.inputs[0]"),
    ({"constants__0__name": "h"},
     "constants[0].name", "'h' is already used by variable_description.intermediates[0]"),
    ({"variable_description__inputs__0__name": "two words"},
     "variable_description.inputs[0].name", "expected a name"),
    ({"constants__0__value": "pi"}, "constants[0].value", "expected a number, got 'pi'"),
    ({"mechanism__1__formula": ""}, "mechanism[1].formula", "expected a formula string"),
    ({"mechanism": []}, "mechanism", "at least one mechanism equation"),
    ({"variable_description__inputs": []}, "variable_description.inputs", "at least one input"),
    ({"variable_description__target": None}, "variable_description", "missing required field 'target'"),
    ({"phenomenological_formula": None}, "", "missing required field 'phenomenological_formula'"),
    ({"probes": [{"name": "x"}]}, "probes[0].name", "probe 'x' is not an intermediate"),
    ({"probes": [{"name": "h"}, {"name": "h"}]}, "probes[1].name", "listed twice"),
    ({"probes": [{"name": "h", "formla": "h = x"}]}, "probes[0]", "unknown field(s) formla"),
    ({"mutations": [1, -2]}, "mutations[1]", "expected a non-negative integer, got -2"),
    ({"mutations": "1-2"}, "mutations", "expected a list"),
    ({"variable_description__intermediates": {"name": "h"}},
     "variable_description.intermediates", "expected a list"),
])
def test_field_errors_name_file_and_field(tmp_path, changes, field, message):
    path = write(tmp_path, variant(**changes), "bad.yaml")
    with pytest.raises(ProblemError) as info:
        load_problem(path, root=tmp_path)
    text = str(info.value)
    prefix = f"{path}: {field}: " if field else f"{path}: "
    assert text.startswith(prefix), text
    assert message in text, text


def test_field_reader_reports_with_the_given_error_class():
    class OtherError(ValueError):
        pass

    read = FieldReader("f.yaml", error=OtherError)
    with pytest.raises(OtherError, match=r"^f\.yaml: v: missing required field 'name'$"):
        read.mapping({"name": None}, "v", required=("name",))  # null counts as missing
    with pytest.raises(OtherError, match=r"^f\.yaml: v: unknown field\(s\) b; expected a$"):
        read.mapping({"a": 1, "b": 2}, "v", keys=("a",))
    with pytest.raises(ProblemError, match=r"^f\.yaml: expected a mapping, got \[1\]$"):
        FieldReader("f.yaml").mapping([1], "")
    assert read.text("  x ", "t") == "  x " and read.text("  x ", "t", stripped=True) == "x"
    assert read.constant({"name": "c", "value": "5.0e2"}, "c") == Constant(name="c", value=500.0)


def test_sampling_checks_itself():
    assert Sampling(0.5, 2.0, 1.0, "log_uniform").ood_boundary == 1.0
    with pytest.raises(ValueError, match=r"sampling: expected min < ood_boundary < max"):
        Sampling(min=1.0, max=2.0, ood_boundary=2.0, distribution="uniform")
    with pytest.raises(ValueError, match=r"sampling\.min: log_uniform needs min > 0, got -1"):
        Sampling(min=-1.0, max=2.0, ood_boundary=1.0, distribution="log_uniform")
    with pytest.raises(ValueError, match=r"sampling\.distribution: expected one of uniform, log_uniform"):
        Sampling(min=0.0, max=2.0, ood_boundary=1.0, distribution="gaussian")


def test_invalid_yaml_and_non_mapping(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("problem_name: [unclosed\n", encoding="utf-8")
    with pytest.raises(ProblemError, match=r"broken\.yaml: invalid YAML at line"):
        load_problem(broken, root=tmp_path)
    twice = tmp_path / "twice.yaml"
    twice.write_text(yaml.safe_dump(BASE) + "mechanism: []\n", encoding="utf-8")
    with pytest.raises(ProblemError, match=r"twice\.yaml: invalid YAML at line \d+: key 'mechanism' is given twice"):
        load_problem(twice, root=tmp_path)
    listing = tmp_path / "list.yaml"
    listing.write_text("- 1\n- 2\n", encoding="utf-8")
    with pytest.raises(ProblemError, match=r"list\.yaml: expected a mapping, got \[1, 2\]"):
        load_problem(listing, root=tmp_path)


def test_file_outside_root(tmp_path):
    path = write(tmp_path, BASE)
    with pytest.raises(ProblemError, match="not inside the problem directory"):
        load_problem(path, root=tmp_path / "elsewhere")


# --- directories ------------------------------------------------------------------------

def test_load_problems_recursive_sorted_skipping_family_and_hidden(tmp_path):
    write(tmp_path, BASE, "b.yml")
    write(tmp_path, BASE, "a/z.yaml")
    write(tmp_path, BASE, "a/source.family.yaml")
    write(tmp_path, BASE, ".cache/copy.yaml")
    (tmp_path / "notes.txt").write_text("not a problem")
    assert [p.task_id for p in load_problems(tmp_path)] == ["a/z", "b"]


def test_duplicate_task_ids(tmp_path):
    write(tmp_path, BASE, "same.yaml")
    write(tmp_path, BASE, "same.yml")
    with pytest.raises(ProblemError, match="task id 'same' is also given by"):
        load_problems(tmp_path)


def test_missing_or_empty_directory(tmp_path):
    with pytest.raises(ProblemError, match="nope: problem file or directory not found"):
        load_problems(tmp_path / "nope")
    with pytest.raises(ProblemError, match=r"no problem files \(\*\.yaml, \*\.yml, answer\.json\) found"):
        load_problems(tmp_path)
