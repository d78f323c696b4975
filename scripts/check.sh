#!/usr/bin/env bash
# The checks a change must pass before it lands, as CI runs them (.ci/run calls this first):
# ruff's lint, ruff's format check, and mypy over agent/, each with the configuration in
# pyproject.toml. Any finding fails.
#
#   bash scripts/check.sh          # this repository
#   bash scripts/check.sh DIR      # another tree with its own pyproject.toml (the tests use it)
#
# To fix what the first two report: `.venv/bin/ruff check --fix . && .venv/bin/ruff format .`
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="${1:-$here}"
bin="${CHECK_BIN:-$here/.venv/bin}"
cd "$root"
status=0
echo "ruff check";         "$bin/ruff" check --quiet . || status=1
echo "ruff format --check"; "$bin/ruff" format --check --quiet . || status=1
echo "mypy";               "$bin/mypy" || status=1
exit $status
