"""What an installed fastscore carries and says: the bundled problem sets as package
data, LICENSE and py.typed, its version, ``python -m fastscore``, the extras and the
one-line error of a command whose extra is missing."""
from __future__ import annotations

import fnmatch
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import fastscore
from fastscore.cli import main
from fastscore.problems import bundled as bundled_data
from fastscore.support import extras

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _matches(relative: str, pattern: str) -> bool:
    """setuptools' package-data glob: ``**/`` matches any folders, or none."""
    return fnmatch.fnmatch(relative, pattern) or (pattern.startswith("**/") and
                                                  fnmatch.fnmatch(relative.split("/")[-1], pattern[3:]))


def test_every_bundled_file_is_package_data():
    setuptools = PYPROJECT["tool"]["setuptools"]
    assert setuptools["package-dir"]["fastscore.bundled"] == "problems"
    assert "fastscore.bundled" in setuptools["packages"]
    patterns = setuptools["package-data"]["fastscore.bundled"]
    files = [p.relative_to(ROOT / "problems").as_posix() for p in (ROOT / "problems").rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".py"]
    assert len(files) > 250 and "example-sweep.jsonl" in files and "mechbench-example/tasks/LICENSE" in files
    assert [f for f in files if not any(_matches(f, pattern) for pattern in patterns)] == []


def test_licence_and_typing_marker_ship():
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["fastscore"]
    assert (ROOT / "fastscore" / "py.typed").is_file()


def test_the_distribution_name_and_extras_are_the_ones_the_errors_name():
    project = PYPROJECT["project"]
    assert project["name"] == extras.DISTRIBUTION == "fastscore-bench"
    optional = project["optional-dependencies"]
    for extra, modules in extras.EXTRAS.items():
        assert [r.split(">")[0].replace("-", "_").lower() for r in optional[extra]] == list(modules)
    assert optional["all"] == [f"fastscore-bench[{','.join(extras.EXTRAS)}]"]
    core = " ".join(project["dependencies"])
    assert not any(module in core for modules in extras.EXTRAS.values() for module in modules)


@pytest.mark.slow
def test_version_from_the_command_and_as_a_module(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out == f"fastscore {fastscore.__version__}\n"
    module = subprocess.run([sys.executable, "-m", "fastscore", "--version"], capture_output=True, text=True,
                            cwd=ROOT, check=True)
    assert module.stdout == f"fastscore {fastscore.__version__}\n"
    usage = subprocess.run([sys.executable, "-m", "fastscore"], capture_output=True, text=True, cwd=ROOT)
    assert usage.returncode == 2 and "COMMAND" in usage.stderr


@pytest.mark.parametrize("module, argv, extra", [
    ("aiohttp", ["serve", "--port", "0"], "serve"),
    ("matplotlib", ["report", "somewhere"], "report"),
    ("ray", ["score", "--problems", "example", "--sweep", "example-sweep.jsonl", "--out", "{out}",
             "--executor", "ray", "--no-progress"], "ray"),
])
def test_a_missing_extra_is_one_line_naming_it(module, argv, extra, monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: importing it fails
    assert not extras.has_extra(extra)
    assert main([a.format(out=tmp_path / "out") for a in argv]) == 2
    assert capsys.readouterr().err == (f"fastscore {argv[0]}: error: needs the '{extra}' extra: "
                                       f"pip install 'fastscore-bench[{extra}]'\n")


def test_an_import_error_of_an_extras_module_is_reported_as_the_extra(monkeypatch, capsys):
    def handler(args):
        raise ModuleNotFoundError("No module named 'matplotlib'", name="matplotlib")
    monkeypatch.setattr("fastscore.cli._validate", handler)
    assert main(["validate", "--problems", "example"]) == 2
    assert "needs the 'report' extra" in capsys.readouterr().err


def test_bundled_sets_are_found_from_anywhere(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)  # no problems/ folder here
    for name in ("example", "problems/example"):
        assert bundled_data.resolve(name) == ROOT / "problems" / "example"
    assert bundled_data.resolve("problems/example-sweep.jsonl").is_file()
    assert bundled_data.resolve("nothing-like-it") == Path("nothing-like-it")
    (tmp_path / "example").mkdir()  # a path that exists here is used as given
    assert bundled_data.resolve("example") == Path("example")
    assert main(["validate", "--problems", "problems/example"]) == 0
    assert "4 of 4 problems valid" in capsys.readouterr().out


def test_auto_scores_a_large_sweep_locally_without_ray(monkeypatch, tmp_path):
    from fastscore.run import job
    from fastscore.settings import Settings
    monkeypatch.setitem(sys.modules, "ray", None)
    by_task = {p.task_id: p for p in fastscore.load_problems(ROOT / "problems" / "example")}
    runner = job._executor("auto", by_task, Settings(ray_threshold=0), address=None, workers=None,
                           sweep=ROOT / "problems" / "example-sweep.jsonl")
    try:
        assert runner.name == "local"  # 19 rows >= 0, but Ray is not installed
    finally:
        runner.close()
