"""The architecture of ``fastscore/`` as rules on its source, read statically with ``ast``.

A *package* is a folder ``fastscore/<name>/`` or a top-level module ``fastscore/<name>.py``
(``fastscore/__init__.py`` itself is the package ``fastscore``).  Every ``import`` counts,
at module level, inside functions and under ``if TYPE_CHECKING:`` alike: a lazy import is
still a dependency.  The rules:

- no import cycle among the packages;
- no module imports a private name (``_x``), or reads one off an imported module, from
  another package;
- no module is longer than ``MAX_LINES`` lines;
- ``fastscore.kernels`` imports only NumPy, Numba, the standard library and itself, and
  imports from a plain checkout (no installed package);
- every package's ``__init__.py`` docstring says what it owns and what it may import
  ("May import: ..."), and the imports keep to that list.
"""

from __future__ import annotations

import ast
import json
import os
import re
import site
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "fastscore"
MAX_LINES = 500
KERNEL_DEPENDENCIES = {"numpy", "numba"}


@dataclass(frozen=True)
class Import:
    """One imported module (``target``, dotted) and, for ``from m import a``, the name ``a``."""

    module: str
    line: int
    target: str
    name: str | None

    @property
    def where(self) -> str:
        return f"{module_path(self.module).relative_to(REPO)}:{self.line}"


def module_name(path: Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def module_path(module: str) -> Path:
    base = REPO.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def package_of(module: str) -> str | None:
    """``fastscore.scoring.task`` -> ``scoring``; ``fastscore`` -> ``fastscore``; None outside fastscore."""
    parts = module.split(".")
    if parts[0] != "fastscore":
        return None
    return parts[1] if len(parts) > 1 else "fastscore"


@cache
def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(SOURCE.rglob("*.py")) if "__pycache__" not in path.parts}


@cache
def tree(module: str) -> ast.Module:
    path = modules()[module]
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def is_module(name: str) -> bool:
    return name in modules()


def resolve(module: str, level: int, name: str | None) -> str:
    """The absolute module of a (possibly relative) ``from ... import``."""
    if level == 0:
        return name or ""
    package = module if modules()[module].name == "__init__.py" else module.rpartition(".")[0]
    base = package.split(".")
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


@cache
def imports(module: str) -> tuple[Import, ...]:
    found = []
    for node in ast.walk(tree(module)):
        if isinstance(node, ast.Import):
            found += [Import(module, node.lineno, alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = resolve(module, node.level, node.module)
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if is_module(submodule):  # ``from package import module``
                    found.append(Import(module, node.lineno, submodule, None))
                else:
                    found.append(Import(module, node.lineno, target, alias.name))
    return tuple(found)


def all_imports() -> list[Import]:
    return [found for module in modules() for found in imports(module)]


def package_graph() -> dict[str, dict[str, list[Import]]]:
    """package -> imported package -> the imports that make the edge (self-edges left out)."""
    graph: dict[str, dict[str, list[Import]]] = defaultdict(lambda: defaultdict(list))
    for found in all_imports():
        source, target = package_of(found.module), package_of(found.target)
        if target is not None and target != source:
            graph[source][target].append(found)
    return graph


def strongly_connected(graph: dict[str, dict[str, list[Import]]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one package."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for successor in graph.get(node, {}):
            if successor not in index:
                visit(successor)
                low[node] = min(low[node], low[successor])
            elif successor in stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def packages() -> dict[str, Path]:
    """Each package folder's ``__init__.py`` (top-level modules have no docstring rule)."""
    return {path.parent.name: path for path in sorted(SOURCE.glob("*/__init__.py"))}


# ------------------------------------------------------------------ the analysis itself


def test_the_analysis_reads_relative_and_lazy_imports():
    kernel_imports = {(found.target, found.name) for found in imports("fastscore.kernels")}
    assert ("fastscore.kernels.evaluate", "evaluate") in kernel_imports  # ``from .evaluate import evaluate``
    lazy = [found for found in imports("fastscore.run.executors") if found.target == "fastscore.run.executors.local"]
    assert lazy, "an import inside a function is an import"
    assert package_of("fastscore.settings") == "settings" and package_of("numpy") is None
    graph = {"a": {"b": []}, "b": {"c": []}, "c": {"a": []}, "d": {"a": []}}
    assert strongly_connected(graph) == [["a", "b", "c"]]


# ------------------------------------------------------------------ the rules


def shortest_cycle(graph: dict[str, dict[str, list[Import]]], start: str) -> list[str] | None:
    """The shortest path start -> ... -> start (breadth first), or None."""
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph.get(node, {})):
                if successor == start:
                    return paths[node] + [start]
                if successor not in paths:
                    paths[successor] = paths[node] + [successor]
                    following.append(successor)
        frontier = following
    return None


def test_no_import_cycle_among_packages():
    graph = package_graph()
    components = strongly_connected(graph)
    explained = []
    for component in components:
        explained.append("packages in one cycle: " + ", ".join(component))
        for start in component:
            cycle = shortest_cycle(graph, start)
            steps = [f"{a} -> {b} ({graph[a][b][0].where})" for a, b in zip(cycle, cycle[1:], strict=False)]
            explained.append("  " + "; ".join(steps))
    assert components == [], "import cycles among packages:\n" + "\n".join(explained)


def test_no_private_name_crosses_a_package():
    crossings = []
    for module in modules():
        home = package_of(module)
        imported_modules: dict[str, str] = {}  # local name -> imported fastscore module
        for found in imports(module):
            other = package_of(found.target)
            if other is None or other == home:
                continue
            private = [part for part in found.target.split(".") if is_private(part)]
            if found.name is not None and is_private(found.name):
                private.append(found.name)
            if private:
                crossings.append(f"{found.where}: {found.target} {found.name or ''}".rstrip())
        for node in ast.walk(tree(module)):  # ``import fastscore.x.y as m`` ... ``m._name``
            if isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    if isinstance(node, ast.Import):
                        target = alias.name
                    else:
                        target = f"{resolve(module, node.level, node.module)}.{alias.name}"
                    if is_module(target) and package_of(target) != home:
                        imported_modules[alias.asname or alias.name.split(".")[0]] = target
        for node in ast.walk(tree(module)):
            if (
                isinstance(node, ast.Attribute)
                and is_private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in imported_modules
                and alias_is_exact(module, node.value.id)
            ):
                crossings.append(
                    f"{module_path(module).relative_to(REPO)}:{node.lineno}: "
                    f"{imported_modules[node.value.id]}.{node.attr}"
                )
    assert crossings == [], "private names used from another package:\n" + "\n".join(sorted(crossings))


def alias_is_exact(module: str, local: str) -> bool:
    """Whether ``local`` is bound by an ``import ... as local`` / ``from ... import local``
    (``import fastscore.x`` binds ``fastscore``, whose attributes are packages, not names)."""
    for node in ast.walk(tree(module)):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.asname == local or (isinstance(node, ast.ImportFrom) and alias.name == local):
                    return True
    return False


def test_no_module_is_longer_than_the_limit():
    long = {
        str(path.relative_to(REPO)): n
        for path in modules().values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}, f"modules over {MAX_LINES} lines (split them by concern): {long}"


def test_kernels_import_only_numpy_numba_the_standard_library_and_themselves():
    foreign = []
    for found in all_imports():
        if not found.module.startswith("fastscore.kernels"):
            continue
        top = found.target.split(".")[0]
        if found.target.startswith("fastscore.kernels") or top in KERNEL_DEPENDENCIES:
            continue
        if top in sys.stdlib_module_names or top == "__future__":
            continue
        foreign.append(f"{found.where}: {found.target}")
    assert foreign == []


@pytest.mark.slow  # a new interpreter
def test_kernels_import_from_a_plain_checkout():
    """``-S``: no ``.pth`` file runs, so no installed (editable) fastscore is on the path;
    the dependencies' site-packages are appended by hand, the checkout comes first."""
    probe = (
        "import sys\n"
        f"sys.path.extend({site.getsitepackages()!r})\n"
        "import fastscore.kernels as k\n"
        "import json\n"
        "print(json.dumps([k.__file__, sorted(m for m in sys.modules if m == 'fastscore' or m.startswith('fastscore.')),\n"
        "                  sorted(m for m in sys.modules if 'editable' in m.lower()),\n"
        "                  sorted(m for m in ('symengine', 'sympy', 'polars', 'pyarrow') if m in sys.modules)]))\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-S", "-c", probe], cwd=REPO, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    origin, loaded, editable, heavy = json.loads(done.stdout)
    assert Path(origin) == SOURCE / "kernels" / "__init__.py"
    assert all(name == "fastscore" or name.startswith("fastscore.kernels") for name in loaded), loaded
    assert editable == [] and heavy == []


# ------------------------------------------------------------------ declared layers

MAY_IMPORT = re.compile(r"May import:(.*?)(?:\n\s*\n|\Z)", re.S)


def declared(package: str) -> str | None:
    """The text after "May import:" in the package's docstring (to the paragraph's end)."""
    docstring = ast.get_docstring(tree(f"fastscore.{package}")) or ""
    match = MAY_IMPORT.search(docstring)
    return " ".join(match.group(1).split()) if match else None


def allowed(package: str, seen: frozenset[str] = frozenset()) -> set[str] | None:
    """The fastscore modules/packages ``package`` may import, from its "May import" text:
    named modules (``fastscore.x`` or ``x``, or ``fastscore.x.y`` for one module only);
    "the standard library only"; "every package below ``p``" (what ``p`` may import,
    transitively) less the ones after "not".  None when there is no such text."""
    text = declared(package) if package in packages() else None
    if text is None:
        return None
    if "standard library only" in text:
        return set()
    names = [name.removeprefix("fastscore.") for name in re.findall(r"``([\w.]+)``", text)]
    below = re.search(r"every package below ``(\w+)``", text)
    if below and below.group(1) not in seen:
        excluded = re.search(r"\(not ([^)]*)\)", text)
        result = closure(below.group(1), seen | {package})
        for name in re.findall(r"``(\w+)``", excluded.group(1)) if excluded else []:
            result.discard(name)
        return result
    return set(names)


def closure(package: str, seen: frozenset[str]) -> set[str]:
    result: set[str] = set()
    todo = [package]
    while todo:
        for name in allowed(todo.pop(), seen) or set():
            if name not in result:
                result.add(name)
                todo.append(name.split(".")[0])
    return result


def test_every_package_says_what_it_owns_and_what_it_may_import():
    missing = []
    for name in packages():
        docstring = ast.get_docstring(tree(f"fastscore.{name}"))
        if not docstring or len(docstring.split("May import")[0].split()) < 5:
            missing.append(f"{name}: no docstring saying what it owns")
        elif declared(name) is None:
            missing.append(f"{name}: its docstring does not say 'May import: ...'")
    assert missing == []


def test_packages_import_only_what_they_declare():
    broken = []
    for name in packages():
        permitted = allowed(name)
        if permitted is None:
            continue  # reported by the docstring test
        for target, edges in package_graph().get(name, {}).items():
            for found in edges:
                relative = found.target.removeprefix("fastscore.")
                if target == "fastscore":
                    continue  # the root package: ``__version__`` and the lazy facade, no eager import
                if not any(relative == p or relative.startswith(p + ".") for p in permitted):
                    broken.append(f"{found.where}: {name} imports {found.target} (may import: {declared(name)})")
    assert broken == [], "imports outside the declared 'May import' lists:\n" + "\n".join(broken)
