"""Problem files in: the registry of problem formats (``ProblemFormat``,
``register_problem_format``; MDBench's problem YAML, read by
``fastscore.problems.model``'s schema, comes last), the safe reading of a YAML
document, and the loading of a problem set (files and directories) by task id, with
its task lists, selection and digest.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import yaml

from fastscore.problems.model import Problem, ProblemError, _problem_from_data
from fastscore.support.registry import Builtins

__all__ = [
    "ProblemFormat", "register_problem_format", "problem_formats", "load_problem", "load_problems",
    "problem_files", "problem_paths", "task_id_of", "select_tasks", "read_task_list", "digest_problems",
]

PROBLEM_SUFFIXES = (".yaml", ".yml")
FAMILY_SUFFIXES = (".family.yaml", ".family.yml")
MAX_DOCUMENT_VALUES = 100_000
"""Most values a problem document may hold once its YAML aliases are expanded: ten
nested aliases of ten (a "billion laughs" of 10**9 strings) load as shared lists, and
anything that walks them (an error message) would never end."""


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
