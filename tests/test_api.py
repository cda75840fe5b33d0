"""The package's public names: each command is one function call from Python, and
``import fastscore`` loads none of the heavy modules."""
from __future__ import annotations

import subprocess
import sys

import pytest

import fastscore


@pytest.mark.parametrize("name", fastscore.__all__)
def test_every_public_name_is_its_home_modules_object(name):
    home = __import__(fastscore._HOMES[name], fromlist=[name])
    assert getattr(fastscore, name) is getattr(home, name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        fastscore.no_such_name  # noqa: B018


def test_importing_the_package_loads_no_heavy_module():
    code = "import sys, fastscore; print(sorted(m for m in ('numba', 'symengine', 'polars', 'ray') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"


# ---------------------------------------------------------------- fastscore.api: every extension point

def _registration_functions() -> list[tuple[str, str]]:
    """(module, name) of every top-level ``def register_*`` / ``def unregister_*`` in the package."""
    import ast
    from pathlib import Path
    root = Path(fastscore.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        module = ".".join(path.relative_to(root.parent).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith(("register_", "unregister_")):
                found.append((module, node.name))
    return found


def test_the_package_has_registration_functions_to_find():
    names = {name for _, name in _registration_functions()}
    assert {"register_problem_format", "register_sweep_reader", "register_scorer", "unregister_scorer",
            "register_rate", "register_outcome", "register_executor", "register_benchmark"} <= names


@pytest.mark.parametrize("module, name", _registration_functions())
def test_every_registration_function_is_reachable_from_fastscore_api(module, name):
    import fastscore.api
    assert name in fastscore.api.__all__
    assert getattr(fastscore.api, name) is getattr(__import__(module, fromlist=[name]), name)


def test_every_name_of_fastscore_api_is_its_home_modules_object():
    import fastscore.api
    for name in fastscore.api.__all__:
        home = __import__(fastscore.api._HOMES[name], fromlist=[name])
        assert getattr(fastscore.api, name) is getattr(home, name), name
    with pytest.raises(AttributeError, match="no attribute 'register_nothing'"):
        fastscore.api.register_nothing  # noqa: B018


def test_importing_fastscore_api_loads_no_heavy_module():
    code = ("import sys, fastscore.api; "
            "print(sorted(m for m in ('numba', 'symengine', 'polars', 'ray') if m in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout == "[]\n"
