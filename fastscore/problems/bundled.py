"""Where the bundled problem sets live: the repository's ``problems/`` folder, installed
as the package ``fastscore.bundled`` (its data: ``example/``, ``example-sweep.jsonl``,
``mechbench/``, ``mechbench-example/``).

On the command line, a ``--problems`` or ``--sweep`` path that does not exist is looked
up there, with or without its leading ``problems/``: ``--problems example`` and
``--problems problems/example`` both name the bundled example wherever fastscore runs
(a path that exists is always used as given)."""
from __future__ import annotations

from importlib import resources
from pathlib import Path

PREFIX = "problems"


def root() -> Path:
    """The folder of the bundled problem sets."""
    return Path(str(resources.files("fastscore.bundled")))


def resolve(path: str | Path) -> Path:
    """``path`` when it exists, else the bundled file or folder it names (see module
    doc), else ``path`` unchanged (the caller reports it missing)."""
    path = Path(path)
    if path.exists() or path.is_absolute():
        return path
    parts = path.parts[1:] if path.parts[:1] == (PREFIX,) else path.parts
    if not parts:
        return path
    bundled = root().joinpath(*parts)
    return bundled if bundled.exists() else path
