#!/usr/bin/env bash
# Lint: ruff's rules (settings in pyproject.toml [tool.ruff]) over fastscore, tests, bench and scripts.
# Fix what it can with: .venv/bin/ruff check --fix fastscore tests bench scripts
# The formatter's settings are there for new files; the code is hand-wrapped at 120 columns and
# is not mass-reformatted (ruff format would push four modules past the 500-line bound).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
exec .venv/bin/ruff check fastscore tests bench scripts
