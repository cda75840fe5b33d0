"""MechBench's task files and task folders as fastscore problems.

A **task file** is YAML with exactly the seven keys ``task_name``, ``task_description``,
``mutation``, ``mechanism_model`` [{formula, role, description}], ``phenomenal_model``
(``target = expr``), ``variables`` [{name, description, unit?, role, sampling?}] and
``mechanism_probes`` [{probe, description, answer}].  It becomes a `Problem`:

- task id and name: ``task_name``; family: the name before the last `` - ``;
  mutations: ``()`` for ``Original``, ``(1, 2, 5)`` for ``Variant 1-2-5`` (None otherwise);
  domain: the top-level folder under the problem directory that holds the file
  (``physics/Hall Response - Original.yaml`` -> ``physics``), none for a file at the top
  or in the task's own folder;
- roles: ``input`` -> inputs, ``auxiliary`` -> auxiliary inputs (both need ``sampling``),
  ``internal`` -> intermediates, one ``target``;
- a mechanism equation ``name = <number>`` whose name is not declared in ``variables``
  is a **fixed coefficient**: a private constant (``Problem.coefficients``) substituted by
  its exact value in the task's own formulas (law, mechanism, probe answers).  MechBench
  does not publish it, so it is not a name a submission knows;
- probe answers are kept as written; ``fastscore.scoring.reference`` expands them (and the law)
  through the reference mechanism's solution, as the harness does (``answer: e`` is the
  mechanism's value of ``e``).

A **task folder** is the private side of a harness export: ``answer.json`` =
{``task``: the seven keys, ``data_layout``: ``variables_by_samples``, ``data_columns``:
[target, inputs and auxiliaries in declaration order], ``data``: {``train``, ``id_test``,
``ood_test``: NPY paths relative to answer.json}}.  Its arrays are checked against
``data_columns`` and used as they are (``Problem.splits``).

`write_task_folder` writes a harness export: ``agent/problem.json`` + ``agent/train.npy``
(public) and, with ``save_answer``, ``answer/answer.json`` + the three NPY splits.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path, PurePath

import numpy as np

from fastscore.problems.formats import ProblemFormat, register_problem_format
from fastscore.problems.model import Constant, Equation, FieldReader, Probe, Problem, ProblemError, Variable
from fastscore.problems.splits import SPLITS
from fastscore.text.parse import parse_expression
from fastscore.text.tokens import ParseError

__all__ = ["TASK_KEYS", "ROLES", "is_task", "problem_from_task", "problem_from_answer", "answer_paths",
           "public_problem", "data_columns", "write_task_folder", "parse_task_name"]

TASK_KEYS = ("task_name", "task_description", "mutation", "mechanism_model", "phenomenal_model", "variables",
             "mechanism_probes")
ROLES = ("input", "target", "internal", "auxiliary")
LAYOUT = "variables_by_samples"
ANSWER_FILE = "answer.json"
_VARIABLE_KEYS = ("name", "description", "unit", "role", "sampling")
_EQUATION_KEYS = ("formula", "role", "description")
_PROBE_KEYS = ("probe", "description", "answer")
_NAME = re.compile(r"[^\W\d]\w*")
_VARIANT = re.compile(r"Variant ([1-9]\d*(?:-[1-9]\d*)*)")


def is_task(data) -> bool:
    """Whether parsed YAML is a MechBench task (it has MechBench's own keys)."""
    return isinstance(data, Mapping) and "task_name" in data and "mechanism_model" in data


def parse_task_name(name: str) -> tuple[str | None, tuple[int, ...] | None]:
    """(family, mutations) of a task name: 'Hall Response - Variant 1-2' -> ('Hall Response', (1, 2))."""
    family, separator, suffix = name.rpartition(" - ")
    if not separator:
        return None, None
    if suffix.strip() == "Original":
        return family.strip(), ()
    match = _VARIANT.fullmatch(suffix.strip())
    return family.strip(), None if match is None else tuple(int(i) for i in match.group(1).split("-"))


def _domain(path: Path, root: Path, task_name: str) -> str | None:
    """The top-level folder under ``root`` holding ``path``, unless it is the task's own folder."""
    try:
        parts = PurePath(os.path.abspath(path)).relative_to(os.path.abspath(root)).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 and parts[0] != task_name else None


def _task_name(read: FieldReader, value) -> str:
    name = read.text(value, "task_name", stripped=True)
    if name != value or any(c in name for c in "/\\\0") or name in (".", ".."):
        raise read.error("task_name", f"expected a task name usable as a folder name, got {name!r}")
    return name


def _variable(read: FieldReader, value, field: str) -> tuple[Variable, str]:
    data = read.mapping(value, field, keys=_VARIABLE_KEYS, required=("name", "description", "role"))
    role = data["role"]
    if role not in ROLES:
        raise read.error(f"{field}.role", f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    sampled = role in ("input", "auxiliary")
    if sampled and data.get("sampling") is None:
        raise read.error(field, f"missing required field 'sampling' (a {role} variable is sampled)")
    if not sampled and data.get("sampling") is not None:
        raise read.error(f"{field}.sampling", f"a {role} variable has no sampling")
    sampling = data.get("sampling")
    return Variable(
        name=read.name(data["name"], f"{field}.name"),
        description=read.text(data["description"], f"{field}.description"),
        unit=read.text(data.get("unit"), f"{field}.unit", optional=True),
        sampling=None if sampling is None else read.sampling(sampling, f"{field}.sampling"),
    ), role


def _coefficient(equation: Equation, declared: set[str]) -> Constant | None:
    """A fixed coefficient ``name = <number>`` with ``name`` not declared, else None."""
    left, equals, right = equation.text.partition("=")
    name, right = left.strip(), right.strip()
    if not equals or "=" in right or name in declared or not _NAME.fullmatch(name) or not right:
        return None
    try:
        value = parse_expression(right)
    except ParseError:
        return None
    if value.free_symbols:
        return None
    return Constant(name=name, value=float(value), description=equation.description, formula=right)


def problem_from_task(data, *, source: str, domain: str | None = None,
                      splits=None) -> Problem:
    """Check a MechBench task (the seven keys) and make it a `Problem` (see module doc)."""
    read = FieldReader(source)
    data = read.mapping(data, "", keys=TASK_KEYS, required=TASK_KEYS)
    task_name = _task_name(read, data["task_name"])
    description = read.text(data["task_description"], "task_description")
    read.text(data["mutation"], "mutation")
    by_role: dict[str, list[Variable]] = {role: [] for role in ROLES}
    seen: dict[str, str] = {}
    for i, item in enumerate(read.sequence(data["variables"], "variables")):
        variable, role = _variable(read, item, f"variables[{i}]")
        if variable.name in seen:
            raise read.error(f"variables[{i}].name", f"name '{variable.name}' is already used by {seen[variable.name]}")
        seen[variable.name] = f"variables[{i}]"
        by_role[role].append(variable)
    if len(by_role["target"]) != 1:
        raise read.error("variables", f"expected exactly one target variable, got {len(by_role['target'])}")
    if not by_role["input"]:
        raise read.error("variables", "a task needs at least one input variable")

    equations, coefficients = [], []
    for i, item in enumerate(read.sequence(data["mechanism_model"], "mechanism_model")):
        field = f"mechanism_model[{i}]"
        entry = read.mapping(item, field, keys=_EQUATION_KEYS, required=_EQUATION_KEYS)
        equation = Equation(text=read.formula(entry["formula"], f"{field}.formula"),
                            description=read.text(entry["description"], f"{field}.description"),
                            role=read.text(entry["role"], f"{field}.role", stripped=True))
        coefficient = _coefficient(equation, set(seen))
        if coefficient is None:
            equations.append(equation)
        elif coefficient.name in {c.name for c in coefficients}:
            raise read.error(f"{field}.formula", f"fixed coefficient '{coefficient.name}' is defined twice")
        else:
            coefficients.append(coefficient)
    if not equations:
        raise read.error("mechanism_model", "a task needs at least one mechanism equation")

    observed = {v.name for role in ("input", "auxiliary", "target") for v in by_role[role]}
    probes = []
    for i, item in enumerate(read.sequence(data["mechanism_probes"], "mechanism_probes")):
        field = f"mechanism_probes[{i}]"
        entry = read.mapping(item, field, keys=_PROBE_KEYS, required=_PROBE_KEYS)
        name = read.name(entry["probe"], f"{field}.probe")
        if name in observed:
            raise read.error(f"{field}.probe", f"probe '{name}' is an observed variable, not an internal quantity")
        if name in {p.name for p in probes}:
            raise read.error(f"{field}.probe", f"probe '{name}' is listed twice")
        probes.append(Probe(name=name, description=read.text(entry["description"], f"{field}.description"),
                            formula=read.formula(entry["answer"], f"{field}.answer")))

    family, mutations = parse_task_name(task_name)
    return Problem(
        task_id=task_name, name=task_name, description=description,
        target=by_role["target"][0], inputs=tuple(by_role["input"]),
        auxiliary_inputs=tuple(by_role["auxiliary"]), intermediates=tuple(by_role["internal"]),
        constants=(), law=read.formula(data["phenomenal_model"], "phenomenal_model"),
        mechanism=tuple(equations), family=family, domain=domain, mutations=mutations,
        probes=tuple(probes), source=source, format="mechbench", coefficients=tuple(coefficients),
        splits=splits, task=data,
    )


def read_task_file(path: Path, root: Path, data) -> Problem:
    """A task file already read as YAML ``data`` (see `fastscore.problems.formats.load_problem`)."""
    return problem_from_task(data, source=str(path), domain=_domain(path, root, str(data.get("task_name"))))


register_problem_format(ProblemFormat(name="mechbench", claims=lambda path, data: is_task(data), read=read_task_file))
register_problem_format(ProblemFormat(
    name="mechbench-task-folder", claims=lambda path, data: not (path.parent / "problem.json").is_file(), yaml=False,
    names=lambda name: name == ANSWER_FILE, read=lambda path, root, data: problem_from_answer(path, root)))


def data_columns(problem: Problem) -> list[str]:
    """MechBench's data row order: the target, then inputs and auxiliaries in declaration order."""
    if problem.task is not None:
        observed = [v["name"] for v in problem.task["variables"] if v.get("role") in ("input", "auxiliary")]
    else:
        observed = [v.name for v in problem.observed]
    return [problem.target.name, *observed]


def answer_paths(path: str | Path) -> dict[str, Path]:
    """The NPY split files an ``answer.json`` names, resolved inside its folder."""
    path = Path(path)
    read = FieldReader(str(path))
    answer = _read_answer(path, read)
    data = read.mapping(answer.get("data"), "data", keys=SPLITS, required=SPLITS)
    folder = path.parent.resolve()
    paths = {}
    for split in SPLITS:
        relative = read.text(data[split], f"data.{split}", stripped=True)
        target = (folder / relative).resolve()
        if folder not in target.parents or not target.is_file():
            raise read.error(f"data.{split}", f"{relative!r} is not a file inside {folder}")
        paths[split] = target
    return paths


def _read_answer(path: Path, read: FieldReader) -> Mapping:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProblemError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProblemError(f"{path}: not UTF-8 text: {exc.reason}") from None
    try:
        answer = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ProblemError(f"{path}: invalid JSON: {getattr(exc, 'msg', 'nested too deeply')}") from None
    return read.mapping(answer, "")


def problem_from_answer(path: str | Path, root: str | Path) -> Problem:
    """A private task folder's ``answer.json``: its task, with its NPY splits checked
    against ``data_columns`` and kept as the problem's splits."""
    from fastscore.problems.splits import Splits
    path = Path(path)
    read = FieldReader(str(path))
    answer = _read_answer(path, read)
    task = read.required(answer, "task", "")
    if answer.get("data_layout") != LAYOUT:
        raise read.error("data_layout", f"expected {LAYOUT!r}, got {answer.get('data_layout')!r}")
    problem = problem_from_task(task, source=str(path),
                                domain=_domain(path, Path(root), str(read.mapping(task, "task").get("task_name"))))
    columns = data_columns(problem)
    if answer.get("data_columns") != columns:
        raise read.error("data_columns", f"expected {columns} (target, then inputs and auxiliaries in "
                                         f"declaration order), got {answer.get('data_columns')!r}")
    arrays = {}
    for split, file in answer_paths(path).items():
        try:
            array = np.load(file, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise read.error(f"data.{split}", f"not a readable NPY file: {exc}") from None
        if (array.ndim != 2 or array.shape[0] != len(columns) or array.shape[1] == 0
                or array.dtype.kind not in "fiu" or not np.isfinite(array).all()):
            raise read.error(f"data.{split}", f"expected a finite real array of shape ({len(columns)}, n), "
                                              f"got {array.dtype} {array.shape}")
        arrays[split] = np.ascontiguousarray(array, dtype=np.float64)
    generation = answer.get("generation")
    seed = generation.get("seed") if isinstance(generation, Mapping) else None
    splits = Splits(variables=tuple(columns), seed=seed if isinstance(seed, int) else None, **arrays)
    return problem_from_task(task, source=str(path), domain=problem.domain, splits=splits)


def public_problem(problem: Problem) -> dict:
    """The public ``problem.json`` of a task: observed variables only (no name, mechanism,
    internal variable, sampling range or probe)."""
    roles = {v.name: role for role, group in (("input", problem.inputs), ("auxiliary", problem.auxiliary_inputs))
             for v in group}
    roles[problem.target.name] = "target"
    variables = {v.name: v for v in (problem.target, *problem.observed)}
    columns = data_columns(problem)
    return {"task_description": problem.description,
            "variables": [{"name": name, "description": variables[name].description,
                           "unit": variables[name].unit or None, "role": roles[name]} for name in columns],
            "data_columns": columns, "data_layout": LAYOUT}


def _ordered(splits, columns: list[str], split: str) -> np.ndarray:
    rows = splits.columns(split)
    return np.ascontiguousarray(np.vstack([rows[name] for name in columns]))


def _write_json(path: Path, value) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _task_dict(problem: Problem) -> dict:
    """The task as read, with sampling bounds as JSON numbers (YAML 1.1 reads ``1e-7`` as text)."""
    sampled = {v.name: v.sampling for v in problem.observed}
    variables = []
    for item in problem.task["variables"]:
        item = dict(item)
        if item.get("sampling") is not None:
            sampling = sampled[item["name"]]
            item["sampling"] = {**item["sampling"], "min": sampling.min, "max": sampling.max,
                                "ood_boundary": sampling.ood_boundary}
        variables.append(item)
    return {**problem.task, "variables": variables}


def write_task_folder(problem: Problem, splits, folder: str | Path, *, save_answer: bool = False) -> None:
    """Write a harness export of a MechBench task: ``agent/problem.json`` and
    ``agent/train.npy``; with ``save_answer`` also ``answer/answer.json`` and
    ``answer/{train,id_test,ood_test}.npy`` (without it, answer files of an earlier run
    are removed).  Rows follow ``data_columns``."""
    if problem.task is None:
        raise ValueError(f"{problem.task_id}: only MechBench task files can be written as MechBench task "
                         f"folders (this problem is in the {problem.format} format)")
    folder = Path(folder)
    columns = data_columns(problem)
    _write_json(folder / "agent" / "problem.json", public_problem(problem))
    np.save(folder / "agent" / "train.npy", _ordered(splits, columns, "train"), allow_pickle=False)
    answer_dir = folder / "answer"
    if not save_answer:
        for name in (ANSWER_FILE, *(f"{split}.npy" for split in SPLITS)):
            (answer_dir / name).unlink(missing_ok=True)
        return
    for split in SPLITS:
        answer_dir.mkdir(parents=True, exist_ok=True)
        np.save(answer_dir / f"{split}.npy", _ordered(splits, columns, split), allow_pickle=False)
    _write_json(answer_dir / ANSWER_FILE, {
        "task": _task_dict(problem), "data_columns": columns, "data_layout": LAYOUT,
        "data": {split: f"{split}.npy" for split in SPLITS},
        "generation": {"seed": splits.seed, "generator": "fastscore"},
    })
