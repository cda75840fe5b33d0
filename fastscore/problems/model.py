"""What a problem is: its variables, constants, equations, probes and sampling
(``Problem`` and its parts), and the schema of a problem document: MDBench problem YAML
as it is, plus fastscore's fields (``FieldReader``, field-level ``ProblemError``).

Formula texts (the law, mechanism equations, probe formulas) are kept as written;
`fastscore.text.parse` turns them into expressions. This module only checks the schema;
reading files, and the registry of problem formats, are ``fastscore.problems.formats``.
"""
from __future__ import annotations

import math
import reprlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "FieldReader", "ProblemError", "Sampling", "Variable", "Constant", "Equation", "Probe", "Problem",
    "DISTRIBUTIONS",
]

DISTRIBUTIONS = ("uniform", "log_uniform")
_SAMPLING_KEYS = frozenset({"min", "max", "ood_boundary", "distribution"})
_PROBE_KEYS = frozenset({"name", "description", "formula"})


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
        for name, value in (("min", low), ("max", high), ("ood_boundary", boundary)):
            if not math.isfinite(value):
                return name, f"expected a finite number, got {value!r}"
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


