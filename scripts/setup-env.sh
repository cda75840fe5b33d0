#!/usr/bin/env bash
# Create .venv and install fastscore (editable, with test extras) when missing or when
# pyproject.toml changed since the last install.  Used by the quick-start scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
stamp=.venv/.fastscore-installed
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -x .venv/bin/python ]; then
  echo "fastscore: creating .venv with $($PYTHON --version)" >&2
  "$PYTHON" -m venv .venv
fi
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  echo "fastscore: installing into .venv (about a minute the first time)" >&2
  .venv/bin/python -m pip install --quiet --upgrade pip >&2
  .venv/bin/python -m pip uninstall --quiet --yes fastscore >/dev/null 2>&1 || true  # its name before fastscore-bench
  .venv/bin/python -m pip install --quiet -e '.[all,test]' >&2
  echo "$want" > "$stamp"
fi
