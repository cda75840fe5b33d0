"""Public MechBench task artifacts: ``problem.json`` + ``train.npy``.

Validated as MechBench's harness validates them: the public layout
(``data_layout`` ``variables_by_samples``), observed variables only (exactly the
fields name, description, unit, role; roles input, target, auxiliary), exactly one
target, ``data_columns`` equal to the unique variable names in order, and a finite
real 2-D training array with one row per column.  NumPy only: the feedback service
reads tasks without loading the solver.
"""
from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

__all__ = ["PublicTask", "TaskError", "excerpt", "load_task", "one_line", "public_task", "read_problem", "read_train"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_VARIABLE_FIELDS = {"name", "description", "unit", "role"}
_ROLES = ("input", "target", "auxiliary")


class TaskError(ValueError):
    """A public task that is not in MechBench's public layout; one line."""


@dataclass(frozen=True, eq=False)
class PublicTask:
    """A validated public task: column names in row order, the target, the sources
    (inputs and auxiliaries, in row order) and the training data (float64)."""

    columns: tuple[str, ...]
    target: str
    sources: tuple[str, ...]
    data: np.ndarray
    description: str | None = None

    @property
    def n_samples(self) -> int:
        return self.data.shape[1]

    def row(self, name: str) -> np.ndarray:
        """The training values of one column."""
        return self.data[self.columns.index(name)]


# ----------------------------------------------------------------------- the task


def read_problem(data: bytes | str) -> object:
    """``problem.json`` bytes -> the decoded JSON value (``TaskError`` if not JSON)."""
    try:
        return json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        reason = error.msg if isinstance(error, json.JSONDecodeError) else str(error) or "nested too deeply"
        raise TaskError(f"problem is not JSON: {reason}") from None


def read_train(data: bytes) -> np.ndarray:
    """NPY bytes -> array, without pickles; the header is checked against the byte
    count before any allocation (``TaskError`` for anything but one NPY array)."""
    stream = io.BytesIO(data)
    try:
        version = npy_format.read_magic(stream)
        if version == (1, 0):
            shape, fortran, dtype = npy_format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, fortran, dtype = npy_format.read_array_header_2_0(stream)
        else:
            raise ValueError(f"unsupported NPY version {version[0]}.{version[1]}")
        if dtype.hasobject:
            raise ValueError("object arrays are not accepted")
        expected = math.prod(shape) * dtype.itemsize
        if len(data) - stream.tell() != expected:
            raise ValueError(f"header announces {expected} data bytes, {len(data) - stream.tell()} present")
        stream.seek(0)
        array = np.load(stream, allow_pickle=False)
    except (ValueError, EOFError, OSError, SyntaxError, TypeError) as error:
        raise TaskError(f"train_data is not an NPY array: {one_line(error)}") from None
    return array


def public_task(problem: object, train: object) -> PublicTask:
    """Validate a public ``problem.json`` value and its training array, the
    harness's way: the public layout, observed variables only (exactly four fields
    each, roles input/target/auxiliary), exactly one target, ``data_columns`` equal
    to the variable names in order and unique, and a finite real 2-D array with one
    row per column and at least one sample."""
    if not isinstance(problem, dict) or problem.get("data_layout") != "variables_by_samples":
        raise TaskError("problem is not a public problem.json: expected data_layout 'variables_by_samples'")
    variables = problem.get("variables")
    if not isinstance(variables, list):
        raise TaskError("problem: variables must be a list")
    names, roles = [], []
    for index, item in enumerate(variables):
        if not isinstance(item, dict) or set(item) != _VARIABLE_FIELDS:
            raise TaskError(f"problem: variable {index} must have exactly the fields name, description, unit, role")
        name, role = item["name"], item["role"]
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise TaskError(f"problem: variable {index} has an invalid name {excerpt(name)}")
        if role not in _ROLES:
            raise TaskError(f"problem: variable {name} has role {excerpt(role)}; public roles are input, target, auxiliary")
        names.append(name)
        roles.append(role)
    columns = problem.get("data_columns")
    if columns != names or len(set(names)) != len(names):
        raise TaskError("problem: data_columns must equal the unique variable names, in order")
    targets = [n for n, r in zip(names, roles) if r == "target"]
    if len(targets) != 1:
        raise TaskError(f"problem: exactly one target is required, found {len(targets)}")
    if (not isinstance(train, np.ndarray) or train.ndim != 2 or train.shape[0] != len(names)
            or train.shape[1] == 0 or train.dtype.kind not in "fiu"):
        shape = getattr(train, "shape", None)
        raise TaskError(f"train_data must be a real array of shape ({len(names)}, n_samples) in data_columns "
                        f"order, got {'shape ' + str(shape) if shape is not None else type(train).__name__}"
                        + (f" of {train.dtype}" if isinstance(train, np.ndarray) else ""))
    data = np.ascontiguousarray(train, dtype=np.float64)
    if not np.isfinite(data).all():
        raise TaskError("train_data holds non-finite values")
    description = problem.get("task_description")
    return PublicTask(columns=tuple(names), target=targets[0],
                      sources=tuple(n for n, r in zip(names, roles) if r != "target"), data=data,
                      description=description if isinstance(description, str) else None)


def load_task(directory: str | Path) -> PublicTask:
    """A public task folder: ``problem.json`` + ``train.npy`` in ``directory`` (or in
    its ``agent/`` folder, MechBench's export layout)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"no task folder {directory}")
    if not (directory / "problem.json").is_file() and (directory / "agent" / "problem.json").is_file():
        directory = directory / "agent"
    files = [directory / "problem.json", directory / "train.npy"]
    for path in files:
        if not path.is_file():
            raise FileNotFoundError(f"{directory} has no {path.name}")
    return public_task(read_problem(files[0].read_bytes()), read_train(files[1].read_bytes()))


def excerpt(value: object, width: int = 40) -> str:
    """``repr(value)``, cut to ``width`` characters."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 4] + "...'"


def one_line(error: BaseException) -> str:
    """The first line of an error's message (its type name when empty)."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
