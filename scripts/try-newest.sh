#!/usr/bin/env bash
# See an upgrade's effect before users do: install the newest versions pyproject.toml allows
# (not requirements.lock) into a scratch venv, show what differs from the lock, run the suite.
#
#   bash scripts/try-newest.sh                                   # newest allowed, whole suite
#   bash scripts/try-newest.sh --override 'litellm[mcp]==1.110.2'  # a requirement replaced
#   bash scripts/try-newest.sh --keep -- tests/llm -x -q         # keep the venv; pytest arguments
#
# The venv lives in a temporary folder (printed; removed at the end unless --keep or
# TRY_NEWEST_VENV=DIR is given). The project is installed editable, so the suite and the tmux
# tests run this checkout. Exit status: pytest's.
set -euo pipefail
cd "$(dirname "$0")/.."

overrides=()
keep=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --override) overrides+=("$2"); shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) break ;;
  esac
done

if [[ -n "${TRY_NEWEST_VENV:-}" ]]; then
  venv="$TRY_NEWEST_VENV"
  keep=1
else
  scratch="$(mktemp -d)"
  venv="$scratch/venv"
  if [[ $keep -eq 0 ]]; then
    trap 'rm -rf "$scratch"' EXIT
  fi
fi
echo "scratch venv: $venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --upgrade pip

# pyproject.toml's requirements (runtime + dev), each override replacing the one of its name.
requirements="$(mktemp)"
"$venv/bin/python" - "$requirements" "${overrides[@]}" <<'PY'
import re, sys, tomllib
out, overrides = sys.argv[1], sys.argv[2:]
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
wanted = list(project["dependencies"]) + list(project.get("optional-dependencies", {}).get("dev", []))
def name(req: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", req.strip(), maxsplit=1)[0].lower().replace("_", "-")
replaced = {name(o) for o in overrides}
unknown = replaced - {name(r) for r in wanted}
if unknown:
    sys.exit(f"--override names no requirement of pyproject.toml: {', '.join(sorted(unknown))}")
lines = [r for r in wanted if name(r) not in replaced] + overrides
open(out, "w").write("\n".join(lines) + "\n")
print("requirements:", *lines, sep="\n  ")
PY
"$venv/bin/python" -m pip install -q --upgrade --upgrade-strategy eager -r "$requirements"
rm -f "$requirements"
"$venv/bin/python" -m pip install -q --no-deps -e .

echo "versions that differ from requirements.lock:"
"$venv/bin/python" - <<'PY'
import re
from importlib.metadata import distributions
locked = {}
for line in open("requirements.lock"):
    m = re.match(r"^([A-Za-z0-9._-]+)==(\S+)", line)
    if m:
        locked[m.group(1).lower().replace("_", "-")] = m.group(2)
installed = {d.metadata["Name"].lower().replace("_", "-"): d.version for d in distributions()}
changed = [(n, locked.get(n, "(not locked)"), v) for n, v in sorted(installed.items())
           if n in locked and locked[n] != v or n not in locked and n not in ("pip", "cairn", "setuptools")]
for n, old, new in changed:
    print(f"  {n}: {old} -> {new}")
print(f"  ({len(changed)} of {len(installed)} installed)" if changed else "  none")
PY

echo "running: $venv/bin/python -m pytest $*"
status=0
"$venv/bin/python" -m pytest "$@" || status=$?
echo "try-newest: pytest exit status $status (venv: $venv$([[ $keep -eq 1 ]] && echo ', kept'))"
exit $status
