#!/usr/bin/env bash
# Build the manual (docs/, mkdocs.yml) into site/ with --strict: a broken link, a page
# left out of the nav or a docstring mkdocstrings cannot read fails the build.
# Sets up .venv with the docs extra on first use.  Extra arguments go to mkdocs build
# (not --quiet: with it, MkDocs 1.6 stops counting the warnings --strict fails on).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
if ! .venv/bin/python -c "import mkdocs, material, mkdocstrings_handlers.python" 2>/dev/null; then
  echo "fastscore: installing the docs extra into .venv" >&2
  .venv/bin/python -m pip install --quiet -e '.[all,test,docs]' >&2
fi
.venv/bin/python scripts/cli_reference.py --check
NO_MKDOCS_2_WARNING=1 exec .venv/bin/mkdocs build --strict -d site "$@"
