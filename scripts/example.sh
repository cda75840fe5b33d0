#!/usr/bin/env bash
# Quick start: score the bundled example sweep (sets up .venv on first use).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-env.sh
exec .venv/bin/fastscore score --problems problems/example --sweep problems/example-sweep.jsonl \
  --out "${1:-out/example}" --executor local
