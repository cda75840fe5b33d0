#!/usr/bin/env bash
# Quick start: run the test suite (sets up .venv on first use).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
exec .venv/bin/python -m pytest "$@"
