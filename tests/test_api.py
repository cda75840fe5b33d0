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
