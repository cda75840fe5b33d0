"""The package-level import graph of fastscore: no cycle among its packages and top-level
modules, and no module imports another package's private (``_x``) name.

The graph is read statically from every ``import`` in the package, deferred ones inside
functions included; imports under ``if TYPE_CHECKING:`` (types only) and the lazy
name tables (``fastscore._HOMES``, ``fastscore.api._HOMES``) are not edges."""
from __future__ import annotations

import ast
from pathlib import Path

import fastscore

PACKAGE = Path(fastscore.__file__).parent


def _node(module: str) -> str:
    """The graph node of a dotted module name: its package under fastscore, or the
    top-level module itself (``cli``, ``settings``, ...); the package root is ``fastscore``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "fastscore"


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.is_dir() or path.with_suffix(".py").exists()


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(imported module, names imported from it) of every runtime import of one file."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    tree = ast.parse(path.read_text())
    typing_only = {id(node) for branch in ast.walk(tree)
                   if isinstance(branch, ast.If) and getattr(branch.test, "id", None) == "TYPE_CHECKING"
                   for statement in branch.body for node in ast.walk(statement)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = node.module or ""
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:  # ``from fastscore.x import module`` imports the module
                full = f"{target}.{alias.name}"
                found.append((full, []) if _is_module(full) else (target, [alias.name]))
    return [(target, names) for target, names in found if target.split(".")[0] == "fastscore"]


def package_graph() -> tuple[dict[str, set[str]], list[str]]:
    """Edges between nodes, and the private cross-package imports ('module: name from target')."""
    edges: dict[str, set[str]] = {}
    private = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        source = _node(module)
        for target, names in _imports(path):
            if _node(target) == source:
                continue
            edges.setdefault(source, set()).add(_node(target))
            private += [f"{module}: {name} from {target}" for name in names
                        if name.startswith("_") and not name.startswith("__")]
    return edges, private


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(set(edges) | {other for targets in edges.values() for other in targets}):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle_and_only_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "d": {"a", "c"}}) == []


def test_the_graph_sees_deferred_imports_and_not_type_only_ones():
    edges, _ = package_graph()
    assert "scoring" in edges["export"] and "scoring" in edges["cli"]  # cli's are deferred, inside functions
    assert "problems" not in edges.get("text", set())  # text.answers imports Problem for its type only
    assert "cli" in edges["__main__"]


def test_the_packages_import_each_other_without_a_cycle():
    edges, _ = package_graph()
    assert cycles(edges) == []


def test_no_module_imports_another_packages_private_name():
    _, private = package_graph()
    assert private == []
