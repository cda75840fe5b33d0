"""Write the composed instances of every family in the problem library.

    python scripts/build_library.py [DIR] [--check]

DIR (default ``problems/mechbench``) holds the ``*.family.yaml`` sources; the script
writes ``DIR/<family>/<instance>.yaml`` (32 per family) and ``DIR/core-set.txt`` and
deletes generated instance files that no longer have a source. ``--check`` writes
nothing and exits 1 when the files on disk differ from what would be written.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from fastscore.library.compose import CORE_SET_FILE, library_files
from fastscore.library.families import FamilyError

DEFAULT_DIRECTORY = Path(__file__).resolve().parent.parent / "problems" / "mechbench"


def generated_on_disk(directory: Path) -> set[str]:
    """Relative paths of the generated files now in ``directory``."""
    found = {p.relative_to(directory).as_posix() for p in directory.glob("*/*.yaml")}
    if (directory / CORE_SET_FILE).exists():
        found.add(CORE_SET_FILE)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", nargs="?", type=Path, default=DEFAULT_DIRECTORY)
    parser.add_argument("--check", action="store_true", help="only compare with the files on disk")
    args = parser.parse_args(argv)
    try:
        files = library_files(args.directory)
    except FamilyError as error:
        print(f"build_library: {error}", file=sys.stderr)
        return 2
    stale = sorted(generated_on_disk(args.directory) - set(files))
    changed = sorted(path for path, text in files.items()
                     if not (args.directory / path).exists()
                     or (args.directory / path).read_text(encoding="utf-8") != text)
    if args.check:
        for path in changed + stale:
            print(f"out of date: {path}")
        return 1 if changed or stale else 0
    for path in changed:
        (args.directory / path).parent.mkdir(parents=True, exist_ok=True)
        (args.directory / path).write_text(files[path], encoding="utf-8")
    for path in stale:
        (args.directory / path).unlink()
    print(f"{len(files)} files, {len(changed)} written, {len(stale)} removed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
