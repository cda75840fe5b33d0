"""Problem files (SPEC §2): read MDBench problem YAML as it is, plus fastscore's fields.

Formula texts (the law, mechanism equations, probe formulas) are kept as written;
`fastscore.text.parse` turns them into expressions. This module only checks the schema.
"""
from __future__ import annotations

import math
import os
import reprlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import yaml

from fastscore.support.registry import Builtins

__all__ = [
    "FieldReader", "ProblemError", "Sampling", "Variable", "Constant", "Equation", "Probe", "Problem",
    "DISTRIBUTIONS", "load_problem", "load_problems", "problem_files", "problem_paths", "task_id_of",
]

DISTRIBUTIONS = ("uniform", "log_uniform")
PROBLEM_SUFFIXES = (".yaml", ".yml")
FAMILY_SUFFIXES = (".family.yaml", ".family.yml")
MAX_DOCUMENT_VALUES = 100_000
"""Most values a problem document may hold once its YAML aliases are expanded: ten
nested aliases of ten (a "billion laughs" of 10**9 strings) load as shared lists, and
anything that walks them (an error message) would never end."""
_SAMPLING_KEYS = frozenset({"min", "max", "ood_boundary", "distribution"})
_PROBE_KEYS = frozenset({"name", "description", "formula"})


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """Safe YAML loading that refuses a key given twice in one mapping (YAML would keep the last)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                continue
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key '{key}' is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


class ProblemError(ValueError):
    """A problem file or directory that cannot be used; the message names file and field."""


@dataclass(frozen=True)
class Sampling:
    """Sampling range of one observed variable: ID draws in [min, ood_boundary), OOD in [ood_boundary, max)."""
    min: float
    max: float
    ood_boundary: float
    distribution: str  # 'uniform' | 'log_uniform'

    def __post_init__(self):
        if fault := Sampling.fault(self.min, self.max, self.ood_boundary, self.distribution):
            field, message = fault
            raise ValueError(f"sampling.{field}: {message}" if field else f"sampling: {message}")

    @staticmethod
    def fault(low: float, high: float, boundary: float, distribution) -> tuple[str, str] | None:
        """Why a sampling range is unusable, as (field or '', reason), or None when it is fine."""
        if distribution not in DISTRIBUTIONS:
            return "distribution", f"expected one of {', '.join(DISTRIBUTIONS)}, got {_show(distribution)}"
        for field, value in (("min", low), ("max", high), ("ood_boundary", boundary)):
            if not math.isfinite(value):
                return field, f"expected a finite number, got {value!r}"
        if not low < boundary < high:
            return "", f"expected min < ood_boundary < max, got min={low:g}, ood_boundary={boundary:g}, max={high:g}"
        if distribution == "log_uniform" and low <= 0:
            return "min", f"log_uniform needs min > 0, got {low:g}"
        return None


@dataclass(frozen=True)
class Variable:
    name: str
    description: str = ""
    unit: str = ""
    sampling: Sampling | None = None


@dataclass(frozen=True)
class Constant:
    """A named number; ``formula`` is its exact value as written (a MechBench fixed
    coefficient ``k = 1.4``), substituted exactly in the problem's own formulas."""
    name: str
    value: float
    description: str = ""
    unit: str = ""
    formula: str | None = None


@dataclass(frozen=True)
class Equation:
    text: str
    description: str = ""
    role: str = ""  # MechBench's relation label ('constitutive/component relations', ...)


@dataclass(frozen=True)
class Probe:
    name: str
    description: str = ""
    formula: str | None = None  # as written: "cm = ..." or just the expression


@dataclass(frozen=True)
class Problem:
    task_id: str
    name: str
    description: str
    target: Variable
    inputs: tuple[Variable, ...]
    auxiliary_inputs: tuple[Variable, ...]
    intermediates: tuple[Variable, ...]
    constants: tuple[Constant, ...]
    law: str  # phenomenological_formula as written, e.g. "r = 2 * hbar**2 / (...)"
    mechanism: tuple[Equation, ...]
    family: str | None = None
    domain: str | None = None
    mutations: tuple[int, ...] | None = None
    probes: tuple[Probe, ...] = ()
    source: str | None = None
    format: str = "mdbench"  # the file format it was read from: 'mdbench' | 'mechbench'
    coefficients: tuple[Constant, ...] = ()
    """Private fixed coefficients (MechBench ``name = number`` equations): substituted
    by their exact values in the problem's own formulas; not names a submission knows."""
    splits: object | None = field(default=None, repr=False, compare=False)
    """Data splits given with the problem (a MechBench answer folder), used as they are."""
    task: Mapping | None = field(default=None, repr=False, compare=False)
    """The MechBench task as read (the seven keys), for writing task folders."""

    @property
    def observed(self) -> tuple[Variable, ...]:
        """Variables drawn for the data: inputs, then auxiliary inputs."""
        return self.inputs + self.auxiliary_inputs

    @property
    def data_variables(self) -> tuple[str, ...]:
        """Row names of a data split: target, inputs, auxiliary inputs."""
        return (self.target.name, *(v.name for v in self.observed))

    @property
    def known_names(self) -> tuple[str, ...]:
        """Names a derived law may keep: inputs, auxiliary inputs, constants."""
        return (*(v.name for v in self.observed), *(c.name for c in self.constants))

    @property
    def n_mutations(self) -> int | None:
        return None if self.mutations is None else len(self.mutations)

    @property
    def is_original(self) -> bool:
        return self.mutations == ()


class FieldReader:
    """Schema readers for one YAML source; a bad value raises `error("file: field.path: problem")`.

    Shared by problem files (`ProblemError`) and family files (`fastscore.library.compose`, `FamilyError`).
    A required field that is absent or null is reported as missing.
    """

    def __init__(self, source: str, *, error: type[ValueError] = ProblemError):
        self.source = source
        self._error = error

    def error(self, field: str, message: str) -> ValueError:
        """The error to raise for `field` (or for the whole file when `field` is '')."""
        return self._error(f"{self.source}: {field}: {message}" if field else f"{self.source}: {message}")

    def mapping(self, value, field: str, *, keys: Iterable[str] | None = None,
                required: Iterable[str] = ()) -> Mapping:
        """A mapping; with `keys`, no other field is allowed; every `required` field must be given."""
        if not isinstance(value, Mapping):
            raise self.error(field, f"expected a mapping, got {_show(value)}")
        if keys is not None and (unknown := sorted(map(str, set(value) - set(keys)))):
            raise self.error(field, f"unknown field(s) {', '.join(unknown)}; expected {', '.join(sorted(keys))}")
        for key in required:
            self.required(value, key, field)
        return value

    def sequence(self, value, field: str, *, optional: bool = False) -> list:
        if value is None and optional:
            return []
        if not isinstance(value, list):
            raise self.error(field, f"expected a list, got {_show(value)}")
        return value

    def required(self, data: Mapping, key: str, field: str):
        """`data[key]`, which must be given and not null."""
        if data.get(key) is None:
            raise self.error(field, f"missing required field '{key}'")
        return data[key]

    def text(self, value, field: str, *, optional: bool = False, stripped: bool = False) -> str:
        """A free text; numbers are accepted as written (a unit `1`).

        `stripped`: the text without surrounding blanks, which must not be empty."""
        if value is None and optional:
            return ""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.error(field, f"expected a string, got {_show(value)}")
        if stripped and not (value := str(value).strip()):
            raise self.error(field, "expected non-empty text")
        return str(value)

    def formula(self, value, field: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(field, f"expected a formula string, got {_show(value)}")
        return value.strip()

    def name(self, value, field: str) -> str:
        if not isinstance(value, str) or not value.isidentifier():
            raise self.error(field, f"expected a name (letters, digits, '_'), got {_show(value)}")
        return value

    def number(self, value, field: str) -> float:
        """A finite number; strings such as '5.0e2' (which YAML 1.1 leaves as text) are accepted."""
        if isinstance(value, bool):
            raise self.error(field, f"expected a number, got {_show(value)}")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise self.error(field, f"expected a number, got {_show(value)}") from None
        if not math.isfinite(number):
            raise self.error(field, f"expected a finite number, got {_show(value)}")
        return number

    def sampling(self, value, field: str) -> Sampling:
        data = self.mapping(value, field, keys=_SAMPLING_KEYS, required=("min", "max", "ood_boundary", "distribution"))
        low, high, boundary = (self.number(data[key], f"{field}.{key}") for key in ("min", "max", "ood_boundary"))
        distribution = data["distribution"]
        if fault := Sampling.fault(low, high, boundary, distribution):
            raise self.error(f"{field}.{fault[0]}" if fault[0] else field, fault[1])
        return Sampling(min=low, max=high, ood_boundary=boundary, distribution=distribution)

    def variable(self, value, field: str, *, needs_sampling: bool, complete: bool = False) -> Variable:
        """A variable; `complete`: description and unit are required, description is stripped,
        and no field beyond name, description, unit (and sampling when `needs_sampling`) is allowed."""
        keys = ("name", "description", "unit", *(("sampling",) if needs_sampling else ())) if complete else None
        data = self.mapping(value, field, keys=keys,
                            required=keys or ("name", *(("sampling",) if needs_sampling else ())))
        sampling = data.get("sampling")
        return Variable(
            name=self.name(data["name"], f"{field}.name"),
            description=self.text(data.get("description"), f"{field}.description",
                                  optional=not complete, stripped=complete),
            unit=self.text(data.get("unit"), f"{field}.unit", optional=not complete),
            sampling=None if sampling is None else self.sampling(sampling, f"{field}.sampling"),
        )

    def variables(self, data: Mapping, key: str, field: str, *, needs_sampling: bool) -> tuple[Variable, ...]:
        items = self.sequence(data.get(key), f"{field}.{key}", optional=True)
        return tuple(self.variable(item, f"{field}.{key}[{i}]", needs_sampling=needs_sampling)
                     for i, item in enumerate(items))

    def constant(self, value, field: str, *, complete: bool = False) -> Constant:
        """A constant; `complete`: description and unit are required, description is stripped,
        and no field beyond name, value, description, unit is allowed."""
        keys = ("name", "value", "description", "unit") if complete else None
        data = self.mapping(value, field, keys=keys, required=keys or ("name", "value"))
        return Constant(
            name=self.name(data["name"], f"{field}.name"),
            value=self.number(data["value"], f"{field}.value"),
            description=self.text(data.get("description"), f"{field}.description",
                                  optional=not complete, stripped=complete),
            unit=self.text(data.get("unit"), f"{field}.unit", optional=not complete),
        )

    def equation(self, value, field: str) -> Equation:
        data = self.mapping(value, field, required=("formula",))
        return Equation(
            text=self.formula(data["formula"], f"{field}.formula"),
            description=self.text(data.get("formula_description"), f"{field}.formula_description",
                                  optional=True),
        )

    def probe(self, value, field: str) -> Probe:
        data = self.mapping(value, field, keys=_PROBE_KEYS, required=("name",))
        formula = data.get("formula")
        return Probe(
            name=self.name(data["name"], f"{field}.name"),
            description=self.text(data.get("description"), f"{field}.description", optional=True),
            formula=None if formula is None else self.formula(formula, f"{field}.formula"),
        )

    def mutations(self, value, field: str) -> tuple[int, ...] | None:
        if value is None:
            return None
        items = self.sequence(value, field)
        for i, item in enumerate(items):
            if isinstance(item, bool) or not isinstance(item, int) or item < 0:
                raise self.error(f"{field}[{i}]", f"expected a non-negative integer, got {_show(item)}")
        if len(set(items)) != len(items):
            raise self.error(field, f"repeated mutation index in {items}")
        return tuple(items)


_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxtuple = _REPR.maxlist = _REPR.maxarray = _REPR.maxdict = _REPR.maxset = _REPR.maxfrozenset = 4
_REPR.maxdeque, _REPR.maxstring, _REPR.maxlong, _REPR.maxother = 4, 60, 40, 60


def _show(value) -> str:
    """A value for an error message, at most 60 characters whatever its size."""
    text = _REPR.repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _expanded_size_exceeds(data, limit: int) -> bool:
    """Whether ``data`` holds more than ``limit`` values counted with repeats (a value
    reached through several aliases counts each time); stops at the limit."""
    count, stack = 0, [data]
    while stack:
        value = stack.pop()
        count += 1
        if count > limit:
            return True
        if isinstance(value, Mapping):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set)):
            stack.extend(value)
    return False


def task_id_of(path: str | Path, root: str | Path) -> str:
    """The task id of a problem file: its path relative to `root`, without extension, '/'-separated."""
    try:
        relative = PurePath(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        raise ProblemError(f"{path}: not inside the problem directory {root}") from None
    return relative.with_suffix("").as_posix()


def _problem_from_data(data, *, task_id: str, source: str) -> Problem:
    read = FieldReader(source)
    data = read.mapping(data, "")
    variables = read.mapping(read.required(data, "variable_description", ""), "variable_description")
    field = "variable_description"
    target = read.variable(read.required(variables, "target", field), f"{field}.target", needs_sampling=False)
    inputs = read.variables(variables, "inputs", field, needs_sampling=True)
    if not inputs:
        raise read.error(f"{field}.inputs", "a problem needs at least one input")
    auxiliary = read.variables(variables, "auxiliary_inputs", field, needs_sampling=True)
    intermediates = read.variables(variables, "intermediates", field, needs_sampling=False)
    constants = tuple(read.constant(item, f"constants[{i}]")
                      for i, item in enumerate(read.sequence(data.get("constants"), "constants", optional=True)))
    mechanism = tuple(read.equation(item, f"mechanism[{i}]")
                      for i, item in enumerate(read.sequence(read.required(data, "mechanism", ""), "mechanism")))
    if not mechanism:
        raise read.error("mechanism", "a problem needs at least one mechanism equation")
    probes = tuple(read.probe(item, f"probes[{i}]")
                   for i, item in enumerate(read.sequence(data.get("probes"), "probes", optional=True)))

    seen: dict[str, str] = {}
    roles = [(target.name, f"{field}.target")]
    roles += [(v.name, f"{field}.{kind}[{i}]") for kind, group in
              (("inputs", inputs), ("auxiliary_inputs", auxiliary), ("intermediates", intermediates))
              for i, v in enumerate(group)]
    roles += [(c.name, f"constants[{i}]") for i, c in enumerate(constants)]
    for name, where in roles:
        if name in seen:
            raise read.error(f"{where}.name", f"name '{name}' is already used by {seen[name]}")
        seen[name] = where
    internal = {v.name for v in intermediates}
    probe_names: set[str] = set()
    for i, probe in enumerate(probes):
        if probe.name not in internal:
            raise read.error(f"probes[{i}].name",
                             f"probe '{probe.name}' is not an intermediate of the problem")
        if probe.name in probe_names:
            raise read.error(f"probes[{i}].name", f"probe '{probe.name}' is listed twice")
        probe_names.add(probe.name)

    family, domain = (None if data.get(key) is None else read.text(data[key], key) for key in ("family", "domain"))
    return Problem(
        task_id=task_id,
        name=read.text(read.required(data, "problem_name", ""), "problem_name"),
        description=read.text(read.required(data, "problem_description", ""), "problem_description"),
        target=target, inputs=inputs, auxiliary_inputs=auxiliary, intermediates=intermediates,
        constants=constants,
        law=read.formula(read.required(data, "phenomenological_formula", ""), "phenomenological_formula"),
        mechanism=mechanism,
        family=family, domain=domain,
        mutations=read.mutations(data.get("mutations"), "mutations"),
        probes=probes,
        source=source,
    )


def _read_yaml(path: str | Path):
    source = str(path)
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.load(handle, Loader=_Loader)
    except OSError as exc:
        raise ProblemError(f"{source}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProblemError(f"{source}: not UTF-8 text: {exc.reason}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        raise ProblemError(f"{source}: invalid YAML{line}: {getattr(exc, 'problem', None) or exc}") from None
    except RecursionError:
        raise ProblemError(f"{source}: invalid YAML: nested too deeply") from None
    if _expanded_size_exceeds(data, MAX_DOCUMENT_VALUES):
        raise ProblemError(f"{source}: the document holds more than {MAX_DOCUMENT_VALUES:,} values "
                           "once its aliases are expanded") from None
    return data


@dataclass(frozen=True)
class ProblemFormat:
    """A problem file format (an extension point: `register_problem_format`).

    ``claims(path, data)``: whether a file is in this format, from its path and, for a
    YAML file, its parsed content (``data``; None for other files); ``read(path, root,
    data)``: the checked `Problem` (raises `ProblemError`, one line naming file and
    field); ``yaml``: its files are YAML, parsed once before ``claims`` is asked;
    ``names``: file-name test of the files it reads, for `problem_files`."""

    name: str
    claims: Callable[[Path, object], bool]
    read: Callable[[Path, Path, object], Problem]
    yaml: bool = True
    names: Callable[[str], bool] = field(default=lambda name: name.endswith(PROBLEM_SUFFIXES))


def _mdbench_format() -> ProblemFormat:
    return ProblemFormat(
        name="mdbench", claims=lambda path, data: True,
        read=lambda path, root, data: _problem_from_data(data, task_id=task_id_of(path, root), source=str(path)))


PROBLEM_FORMATS: list[ProblemFormat] = []
"""The formats, asked in order (the first that claims a file reads it); MDBench's
problem YAML, which claims every YAML file, comes last.  Built-in formats are added
on first use (`problem_formats`)."""
_BUILTIN_FORMATS = Builtins("fastscore.problems.mechbench", "fastscore.problems.prepared", "fastscore.benchmarks")


def register_problem_format(problem_format: ProblemFormat) -> None:
    """Add a problem format, asked before the formats already registered."""
    PROBLEM_FORMATS.insert(0, problem_format)


def problem_formats() -> list[ProblemFormat]:
    """The registered formats, the built-in ones included."""
    if not any(f.name == "mdbench" for f in PROBLEM_FORMATS):
        PROBLEM_FORMATS.append(_mdbench_format())
    _BUILTIN_FORMATS.load()
    return PROBLEM_FORMATS


def load_problem(path: str | Path, *, root: str | Path) -> Problem:
    """Read and check one problem file, in the first format that claims it (by its name
    and, for YAML, its keys): MechBench's task files (``task_name``, ...) and task
    folders (``answer.json``), else MDBench's problem YAML, whose task id is its path
    relative to `root` without extension."""
    path = Path(path)
    formats = [f for f in problem_formats() if f.names(path.name)]
    data = _read_yaml(path) if any(f.yaml for f in formats) else None
    for problem_format in formats:
        if problem_format.claims(path, data if problem_format.yaml else None):
            return problem_format.read(path, Path(root), data if problem_format.yaml else None)
    raise ProblemError(f"{path}: not a problem file of any format ({', '.join(f.name for f in formats)})")


def problem_files(directory: str | Path) -> list[Path]:
    """Problem files under `directory` (recursive: the files some format reads, such as
    *.yaml/*.yml and MechBench ``answer.json``), without family sources and hidden paths."""
    root = Path(directory)
    formats = problem_formats()
    return sorted(
        path for path in root.rglob("*")
        if any(f.names(path.name) for f in formats) and path.is_file()
        and not path.name.endswith(FAMILY_SUFFIXES)
        and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )


def problem_paths(problems) -> list[Path] | None:
    """The paths a problem-set argument names (a file or directory, or a sequence of
    them), or None when it holds ``Problem`` objects instead."""
    if isinstance(problems, (str, Path)):
        return [Path(problems)]
    if isinstance(problems, (list, tuple)) and problems and all(isinstance(p, (str, Path)) for p in problems):
        return [Path(p) for p in problems]
    return None


def _files_of(root: Path) -> tuple[Path, list[Path]]:
    """A problem path's task-id root and problem files: a directory's, or a file itself."""
    if root.is_file():
        return root.parent, [root]
    if not root.is_dir():
        raise ProblemError(f"{root}: problem file or directory not found")
    return root, problem_files(root)


def load_problems(directory: str | Path | Sequence[str | Path]) -> list[Problem]:
    """Load every problem file under `directory` (or that file itself; or each of several
    files and directories), sorted by task id."""
    problems: dict[str, Problem] = {}
    for given in problem_paths(directory) or [Path(str(directory))]:
        root, files = _files_of(given)
        for path in files:
            problem = load_problem(path, root=root)
            if (other := problems.get(problem.task_id)) is not None:
                raise ProblemError(f"{path}: task id '{problem.task_id}' is also given by {other.source}")
            problems[problem.task_id] = problem
    if not problems:
        raise ProblemError(f"{directory}: no problem files (*.yaml, *.yml, answer.json) found")
    return [problems[task_id] for task_id in sorted(problems)]


def select_tasks(by_task: Mapping[str, Problem], tasks: Iterable[str] | None) -> dict[str, Problem]:
    """The problems named in ``tasks`` (all when None); an unknown task id is an error."""
    if tasks is None:
        return dict(by_task)
    tasks = list(tasks)
    unknown = [t for t in tasks if t not in by_task]
    if unknown:
        raise ValueError(f"{len(unknown)} listed task(s) not in the problem set, e.g. {unknown[0]!r}")
    return {t: by_task[t] for t in tasks}


def read_task_list(path: str | Path) -> list[str]:
    """Task ids from a file, one a line; blank lines and ``#`` comments are ignored."""
    lines = Path(path).read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def digest_problems(problems: str | Path | Sequence[str | Path] | Iterable[Problem]) -> str:
    """SHA-256 of a problem set: its files (relative paths and bytes) for a directory,
    a file or several of them, or the problems themselves."""
    import hashlib
    digest = hashlib.sha256()
    if (paths := problem_paths(problems)) is not None:
        for root, files in map(_files_of, paths):
            for path in files:
                digest.update(str(path.relative_to(root)).encode())
                digest.update(path.read_bytes())
    else:
        for problem in problems:
            digest.update(repr(problem).encode())
    return digest.hexdigest()
