#!/usr/bin/env bash
# Regenerate requirements.lock from pyproject.toml: every runtime and dev dependency, pinned,
# for Linux x86_64 / Python 3.11 (what CI and the development machines run).
#
#   bash scripts/lock.sh            # rewrite requirements.lock
#   bash scripts/lock.sh --upgrade  # also move locked packages to their newest allowed versions
#
# Without --upgrade, versions already in the lock are kept where pyproject.toml still allows
# them, so adding a dependency changes only what it brings. The resolver (uv, pinned so the
# file's format does not drift) runs from a scratch venv: it is not a project dependency.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_REQUIREMENT="uv==0.13.9"
LOCK=requirements.lock

tool_dir="$(mktemp -d)"
trap 'rm -rf "$tool_dir"' EXIT
python3 -m venv "$tool_dir/venv"
"$tool_dir/venv/bin/python" -m pip install -q "$UV_REQUIREMENT"

extra_args=()
if [[ "${1:-}" == "--upgrade" ]]; then
  extra_args+=(--upgrade)
elif [[ $# -gt 0 ]]; then
  echo "usage: bash scripts/lock.sh [--upgrade]" >&2
  exit 2
fi

"$tool_dir/venv/bin/uv" pip compile pyproject.toml \
  --extra dev \
  --python-version 3.11 \
  --python-platform x86_64-unknown-linux-gnu \
  --custom-compile-command "bash scripts/lock.sh" \
  --output-file "$LOCK" \
  --quiet \
  "${extra_args[@]}"
echo "wrote $LOCK"
