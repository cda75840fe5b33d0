#!/usr/bin/env bash
# Lint: ruff's rules and its formatter (settings in pyproject.toml [tool.ruff]), checked, not applied.
# Fix with: .venv/bin/ruff check --fix fastscore tests bench scripts && .venv/bin/ruff format fastscore tests bench scripts
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
status=0
.venv/bin/ruff check fastscore tests bench scripts || status=1
.venv/bin/ruff format --check fastscore tests bench scripts || status=1
exit $status
