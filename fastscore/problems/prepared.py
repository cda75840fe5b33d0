"""MDBench 0.7's prepared task folders, both ways: the fields fastscore writes
(``fastscore.problems.splits.write_prepared``) and prepared folders with answers read as problems.

A prepared folder (``mdbench prepare --task mechanism_discovery --format directory``, or
``fastscore prepare --layout mdbench``) holds the public ``problem.json`` and
``data_train.npy`` and, with ``--save-answer``, the private ``answer.json``,
``data_id_test.npy`` and ``data_ood_test.npy``:

- ``problem.json``: ``problem_name``, ``problem_description``, ``task``, ``input``,
  ``expected_output``, ``target_variable``, ``variables`` (the target, then the inputs:
  name, description, unit), ``constants`` (name, value, description, unit) and, when the
  auxiliary inputs are revealed, ``auxiliary_input_variables``; a unit is a mapping of SI
  base units to exponents (``{"m": 1, "s": -2}``; ``{}`` dimensionless);
- ``data_train.npy``: rows in the order of ``variables`` then ``auxiliary_input_variables``;
- ``answer.json``: ``task``, ``target_variable``, ``source_variables`` (inputs,
  auxiliary inputs, constants), ``phenomenological_formula`` (``y = ...``, powers ``**``),
  ``constants``, ``data_variables`` (the target, inputs and auxiliary inputs: the rows of
  the test splits), ``mechanisms`` (formula, formula_description) and
  ``intermediate_variables``; fastscore adds ``task_id``, ``probes``, ``family``,
  ``domain``, ``mutations`` and ``seed``, which MDBench ignores.

Read as a problem (`problem_from_prepared`, the ``mdbench-prepared`` problem format,
claiming an ``answer.json`` beside a ``problem.json``): the task id is the folder's path
under the problem directory; the splits are the folder's arrays, as they are.  The
answer does not give sampling ranges, so each observed variable's range (for the
equivalence points) is taken from the data: from its smallest to its largest value,
the OOD boundary at its smallest OOD-test value, log-uniform when positive and spanning
more than a decade.  A folder prepared without revealing auxiliary inputs has no
training rows for them and is refused (prepare it with ``--reveal-auxiliary``).
"""
from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from fastscore.problems.formats import ProblemFormat, register_problem_format
from fastscore.problems.model import Constant, FieldReader, Problem, ProblemError, Sampling, Variable

__all__ = ["ANSWER_FILE", "PROBLEM_FILE", "TASK", "answer_law", "unit_mapping", "unit_text", "problem_from_prepared",
           "is_prepared_answer"]

ANSWER_FILE, PROBLEM_FILE = "answer.json", "problem.json"
TASK = "mechanism_discovery"
"""The MDBench task of fastscore's prepared folders: data in, mechanisms out."""
_SPLIT_FILES = {"train": "data_train.npy", "id_test": "data_id_test.npy", "ood_test": "data_ood_test.npy"}
_DIMENSIONLESS = {"", "1", "1 (dimensionless)", "dimensionless", "-"}
_UNIT_PART = re.compile(r"([A-Za-z]+)(?:\^([-+]?\d+(?:\.\d+)?))?")
_DECADE = 10.0


def unit_mapping(text: str) -> dict[str, int | float] | str:
    """A unit text (``kg m s^-2``, ``m / s``, ``1 (dimensionless)``) as MDBench's mapping
    of base units to exponents; a text in another notation is returned as it is."""
    text = text.strip().replace("**", "^").replace("*", " ")
    if text.lower() in _DIMENSIONLESS:
        return {}
    result: dict[str, int | float] = {}
    for index, section in enumerate(text.split("/")):
        parts = section.split()
        if not parts:
            return text
        for part in parts:
            if part == "1":
                continue
            match = _UNIT_PART.fullmatch(part)
            if match is None:
                return text
            exponent = match.group(2) or "1"
            value = float(exponent) if "." in exponent else int(exponent)
            result[match.group(1)] = result.get(match.group(1), 0) + (-value if index else value)
    return {name: value for name, value in result.items() if value != 0}


def unit_text(unit) -> str:
    """A unit as written in a prepared folder (a mapping, or text) as fastscore's text."""
    if isinstance(unit, Mapping):
        return " ".join(name if value == 1 else f"{name}^{value:g}" for name, value in unit.items()) or "1"
    return "" if unit is None else str(unit)


def answer_law(law: str) -> str:
    """The law as MDBench's answers write it: ``target = expression``, ``^`` written ``**``."""
    target, _, expression = law.partition("=")
    return f"{target.strip()} = {expression.strip().replace('^', '**')}"


def is_prepared_answer(path: Path) -> bool:
    """Whether ``path`` is the answer of a prepared folder (a ``problem.json`` beside it)."""
    return path.name == ANSWER_FILE and (path.parent / PROBLEM_FILE).is_file()


def _json(path: Path, read: FieldReader) -> Mapping:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ProblemError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ProblemError(f"{path}: invalid JSON: {getattr(exc, 'msg', exc)}") from None
    return read.mapping(value, "")


def _variable(read: FieldReader, item, field: str, sampling: Sampling | None = None) -> Variable:
    data = read.mapping(item, field, required=("name",))
    return Variable(name=read.name(data["name"], f"{field}.name"),
                    description=read.text(data.get("description"), f"{field}.description", optional=True),
                    unit=unit_text(data.get("unit")), sampling=sampling)


def _array(path: Path, read: FieldReader, rows: int, field: str) -> np.ndarray:
    try:
        array = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise read.error(field, f"{path.name} is not a readable NPY file: {exc}") from None
    if (array.ndim != 2 or array.shape[0] != rows or array.shape[1] == 0 or array.dtype.kind not in "fiu"
            or not np.isfinite(array).all()):
        raise read.error(field, f"{path.name}: expected a finite real array of shape ({rows}, n), "
                                f"got {array.dtype} {array.shape}")
    return np.ascontiguousarray(array, dtype=np.float64)


def _sampling(id_values: np.ndarray, ood_values: np.ndarray) -> Sampling:
    """A sampling range covering the data (see the module doc)."""
    values = np.concatenate([id_values, ood_values])
    values = values[np.isfinite(values)]
    low, high = float(values.min()), float(values.max())
    boundary = float(np.min(ood_values)) if np.isfinite(ood_values).any() else (low + high) / 2
    if high <= low:
        high = low + max(abs(low), 1.0)
    if not low < boundary < high:
        boundary = (low + high) / 2
    log = low > 0 and high / low > _DECADE
    return Sampling(min=low, max=high, ood_boundary=boundary, distribution="log_uniform" if log else "uniform")


def _task_id(folder: Path, root: Path) -> str:
    try:
        relative = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        relative = "."
    return folder.resolve().name if relative == "." else relative


def problem_from_prepared(path: str | Path, root: str | Path) -> Problem:
    """The problem of a prepared folder with its answer (``path`` names ``answer.json``)."""
    from fastscore.problems.splits import Splits
    path = Path(path)
    folder, read = path.parent, FieldReader(str(path))
    answer = _json(path, read)
    public = _json(folder / PROBLEM_FILE, FieldReader(str(folder / PROBLEM_FILE)))
    target_name = read.name(read.required(answer, "target_variable", ""), "target_variable")
    columns = [read.name(name, f"data_variables[{i}]")
               for i, name in enumerate(read.sequence(read.required(answer, "data_variables", ""), "data_variables"))]
    if not columns or columns[0] != target_name:
        raise read.error("data_variables", f"expected the target {target_name!r} first, got {columns!r}")
    shown = read.sequence(public.get("variables"), "problem.json: variables")
    revealed = read.sequence(public.get("auxiliary_input_variables"), "problem.json: auxiliary_input_variables",
                             optional=True)
    described = {item.get("name"): item for item in (*shown, *revealed) if isinstance(item, Mapping)}
    visible = [item.get("name") for item in (*shown, *revealed) if isinstance(item, Mapping)]
    hidden = [name for name in columns if name not in visible]
    if hidden:
        raise read.error("data_variables", f"the training data lacks the auxiliary input(s) {', '.join(hidden)} "
                                           f"(prepared without --reveal-auxiliary); prepare with --reveal-auxiliary")
    train = _array(folder / _SPLIT_FILES["train"], read, len(visible), "data_train")
    train = train[[visible.index(name) for name in columns]]
    arrays = {"train": train}
    for split in ("id_test", "ood_test"):
        file = folder / _SPLIT_FILES[split]
        if not file.is_file():
            raise read.error("", f"{file.name} is missing (prepare the folder with --save-answer)")
        arrays[split] = _array(file, read, len(columns), split)
    input_names = {item.get("name") for item in shown if isinstance(item, Mapping)} - {target_name}
    ordered = [target_name, *(n for n in columns if n in input_names), *(n for n in columns[1:] if n not in input_names)]
    if columns != ordered:
        raise read.error("data_variables", f"expected the target, the inputs, then the auxiliary inputs, got {columns}")
    observed = []
    for row, name in enumerate(columns[1:], start=1):
        id_values = np.concatenate([arrays["train"][row], arrays["id_test"][row]])
        observed.append(_variable(read, described[name], f"variables.{name}",
                                  _sampling(id_values, arrays["ood_test"][row])))
    splits = Splits(variables=tuple(columns), seed=answer.get("seed") if isinstance(answer.get("seed"), int) else None,
                    **arrays)
    probes = tuple(read.probe(item, f"probes[{i}]")
                   for i, item in enumerate(read.sequence(answer.get("probes"), "probes", optional=True)))
    return Problem(
        task_id=_task_id(folder, Path(root)),
        name=read.text(public.get("problem_name"), "problem.json: problem_name", optional=True) or folder.name,
        description=read.text(public.get("problem_description"), "problem.json: problem_description", optional=True),
        target=_variable(read, described.get(target_name, {"name": target_name}), "target_variable"),
        inputs=tuple(v for v in observed if v.name in input_names),
        auxiliary_inputs=tuple(v for v in observed if v.name not in input_names),
        intermediates=tuple(_variable(read, item, f"intermediate_variables[{i}]") for i, item in
                            enumerate(read.sequence(answer.get("intermediate_variables"), "intermediate_variables",
                                                    optional=True))),
        constants=tuple(Constant(name=c.name, value=c.value, description=c.description, unit=unit_text(item.get("unit")))
                        for i, item in enumerate(read.sequence(answer.get("constants"), "constants", optional=True))
                        for c in [read.constant(dict(item, unit=None) if isinstance(item, Mapping) else item,
                                                f"constants[{i}]")]),
        law=read.formula(read.required(answer, "phenomenological_formula", ""), "phenomenological_formula"),
        mechanism=tuple(read.equation(item, f"mechanisms[{i}]") for i, item in
                        enumerate(read.sequence(answer.get("mechanisms"), "mechanisms", optional=True))),
        family=answer.get("family") if isinstance(answer.get("family"), str) else None,
        domain=answer.get("domain") if isinstance(answer.get("domain"), str) else None,
        mutations=read.mutations(answer.get("mutations"), "mutations"),
        probes=probes, source=str(path), format="mdbench-prepared", splits=splits,
    )


register_problem_format(ProblemFormat(
    name="mdbench-prepared", claims=lambda path, data: is_prepared_answer(path), yaml=False,
    names=lambda name: name == ANSWER_FILE, read=lambda path, root, data: problem_from_prepared(path, root)))
