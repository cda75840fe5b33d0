"""The manual (README.md, docs/, mkdocs.yml) says only what the repository holds: the
README stays short, every relative link and anchor resolves, every file path and
``fastscore.*`` name it quotes exists, it cites nothing outside the repository, every
page is in the nav, and the command reference is what the parser generates now.
(The strict MkDocs build itself is ``scripts/docs.sh``, run by CI.)"""
from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = sorted(DOCS.glob("*.md"))
MANUAL = [README, *PAGES]

LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
REPO_PATH = re.compile(r"^(?:fastscore|tests|bench|scripts|problems|docs)/[\w./-]*$")
DOTTED = re.compile(r"\bfastscore(?:\.[A-Za-z_]\w*)+")
FORBIDDEN = [re.compile(p) for p in (r"SPEC", r"§", r"MECHBENCH\.md", r"\.\./shared", r"\bissues? #?\d+")]


def _cli_reference():
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives a heading."""
    text = re.sub(r"`|\*\*|\*", "", heading).strip().lower()
    text = re.sub(r"[^\w\s-]", "", text)
    return re.sub(r"[-\s]+", "-", text).strip("-")


def _anchors(page: Path) -> set[str]:
    anchors, fenced = set(), False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        if fenced or not line.startswith("#"):
            continue
        heading = line.lstrip("#").strip()
        if (explicit := re.search(r"\{#([\w-]+)\}\s*$", heading)) is not None:
            anchors.add(explicit.group(1))
            heading = heading[:explicit.start()]
        anchors.add(_slug(heading))
    return anchors


def _prose(page: Path) -> str:
    """The page without its fenced code blocks (examples may name output files)."""
    return re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)


def test_the_readme_is_short():
    assert len(README.read_text().splitlines()) <= 200


@pytest.mark.parametrize("page", MANUAL, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(_prose(page)):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        resolved = page if not path else (page.parent / path).resolve()
        if path and not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert broken == []


def test_the_link_checker_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[here](page.md#title), [there](missing.md), [x](page.md#nope)\n")
    targets = LINK.findall(_prose(page))
    assert targets == ["page.md#title", "missing.md", "page.md#nope"]
    assert _anchors(page) == {"title"} and not (tmp_path / "missing.md").exists()


@pytest.mark.parametrize("page", MANUAL, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_quoted_repository_path_exists(page):
    words = [word for span in CODE_SPAN.findall(page.read_text()) for word in span.split()]
    missing = [word for word in words if REPO_PATH.match(word) and not (ROOT / word.rstrip("/")).exists()]
    assert missing == []


def _resolves(dotted: str) -> bool:
    """Whether ``fastscore.a.b.name`` names a package, a module, or a name a module
    defines (``fastscore.bundled`` is the folder ``problems/``)."""
    parts = dotted.split(".")
    if parts[:2] == ["fastscore", "bundled"]:
        return True
    here, module = ROOT / "fastscore", ROOT / "fastscore" / "__init__.py"
    for part in parts[1:]:
        if (here / part / "__init__.py").is_file():
            here, module = here / part, here / part / "__init__.py"
        elif (here / f"{part}.py").is_file() and module.name == "__init__.py":
            module = here / f"{part}.py"
        else:  # a name in the module (its further parts are attributes of that name)
            return re.search(rf"\b{re.escape(part)}\b", module.read_text()) is not None
    return True


@pytest.mark.parametrize("page", MANUAL, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_fastscore_name_exists(page):
    assert [name for name in sorted(set(DOTTED.findall(page.read_text()))) if not _resolves(name)] == []


def test_the_name_checker_refuses_what_is_not_there():
    assert _resolves("fastscore.outputs.tables.register_rate") and _resolves("fastscore.settings.Settings")
    assert _resolves("fastscore.run.executors.register_executor") and _resolves("fastscore.kernels")
    assert not _resolves("fastscore.outputs.tables.no_such_function")
    assert not _resolves("fastscore.no_such_package.thing")


@pytest.mark.parametrize("page", MANUAL, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_manual_cites_nothing_outside_the_repository(page):
    text = page.read_text()
    assert [pattern.pattern for pattern in FORBIDDEN if pattern.search(text)] == []


def _nav_files(nav) -> list[str]:
    files = []
    for entry in nav:
        for value in (entry.values() if isinstance(entry, dict) else [entry]):
            files += _nav_files(value) if isinstance(value, list) else [value]
    return files


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=yaml.BaseLoader)
    nav = _nav_files(config["nav"])
    assert sorted(nav) == sorted(p.name for p in PAGES)
    assert config["theme"]["name"] == "material"


def test_the_docs_extra_installs_the_builders():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    names = [re.split(r"[<>=\[]", requirement)[0] for requirement in extras["docs"]]
    assert names == ["mkdocs", "mkdocs-material", "mkdocstrings"]
    assert "mkdocstrings[python]" in extras["docs"][2]


def test_the_architecture_page_names_every_package():
    packages = sorted(p.parent.name for p in (ROOT / "fastscore").glob("*/__init__.py"))
    text = (DOCS / "architecture.md").read_text()
    assert [name for name in packages if f"`fastscore.{name}`" not in text] == []


def test_the_quick_start_commands_are_the_readmes():
    readme = README.read_text()
    assert "scripts/example.sh     # score the bundled example sweep" in readme
    assert "scripts/test.sh        # run the test suite" in readme
    assert (ROOT / "scripts" / "example.sh").is_file() and (ROOT / "scripts" / "test.sh").is_file()


def test_the_command_reference_is_what_the_parser_generates():
    """docs/cli.md is generated: after changing the command line, run
    ``.venv/bin/python scripts/cli_reference.py``."""
    assert (DOCS / "cli.md").read_text() == _cli_reference().render()


def test_the_command_reference_covers_every_command_option_and_example():
    from fastscore.cli import _parser
    from fastscore.cli_examples import EXAMPLES
    page = (DOCS / "cli.md").read_text()
    commands = next(a for a in _parser()._actions if a.dest == "command").choices
    for name, command in commands.items():
        assert f"## `{name}`" in page and EXAMPLES[name] in page
        for action in command._actions:
            for flag in action.option_strings:
                assert flag in ("-h", "--help") or f"`{flag}`" in page, (name, flag)


def test_a_machine_dependent_default_is_written_as_its_rule():
    page = _cli_reference().render()
    assert "| `--workers` | `WORKERS` |  | the machine's cores, at most 4 | worker processes |" in page


def test_the_architecture_page_names_every_module():
    """The module table is kept by hand: a module added or moved without its row fails here."""
    page = (DOCS / "architecture.md").read_text(encoding="utf-8")
    modules = sorted(str(path.relative_to(ROOT)) for path in (ROOT / "fastscore").rglob("*.py")
                     if path.name != "__init__.py")
    assert [module for module in modules if f"`{module}`" not in page] == []
