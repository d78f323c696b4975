#!/usr/bin/env bash
# Mutation testing of the modules that decide (issue 36): every small change mutmut makes to a
# module must make one of its tests fail. Not part of .ci/run (a run takes minutes per module);
# run it after changing a decision module.
#
#   bash scripts/mutation.sh PATH...          # a module (agent/tools/read_only.py) or a package folder
#   bash scripts/mutation.sh --keep PATH...   # keep the scratch copy (then `mutmut show NAME` in it)
#   bash scripts/mutation.sh --changed [REV]  # the decision modules changed since REV (default: the
#                                             # merge-base with origin/main, else HEAD~1); .ci/mutation
#   MUTATION_TESTS="tests/a.py ..." bash scripts/mutation.sh PATH   # other tests than the table below
#
# Each PATH runs on its own in a scratch copy of the work tree (tracked and untracked files, not
# ignored ones), so the tree itself gets no mutants/ folder, no setup.cfg and no mutmut cache, and
# edits made meanwhile do not leak into a run. Only the tests named for the PATH below run (the
# fallback: the test files that name the module), and each mutant only runs the tests that
# reached the mutated function; one process at a time.
#
# Prints killed / survived per PATH and the survivors; exits 1 when a PATH kills under 90%.
# A survivor that no test can kill (equivalent code) is listed, with why, in
# scripts/mutation_equivalents.md — nowhere else.
set -euo pipefail

MUTMUT_VERSION=3.8.1  # exact: mutant names, operators and config keys change between releases
THRESHOLD=90
root=$(cd "$(dirname "$0")/.." && pwd)
py=$root/.venv/bin/python

# The modules that decide: what runs, what is sent, what is kept. --changed picks among these.
DECISION_MODULES=(
    agent/tools/read_only.py agent/tools/shell_parse.py agent/tools/shell_words.py agent/tools/shell_walk.py
    agent/tools/shell_runners.py agent/tools/command_plan.py
    agent/tools/permissions.py agent/tools/modes.py agent/tools/sandbox.py agent/tools/sandbox_protect.py
    agent/fs/terminal_text.py agent/settings/run_files.py agent/context/cache_policy.py
    agent/context/passes/orphans.py agent/context/passes/terminal_outdated.py
    agent/context/passes/file_reads.py agent/context/passes/externalize.py
    agent/context/passes/active_path.py agent/context/passes/replace.py agent/context/truncation
    agent/context/passes/stale_file_results.py
)

keep=0
changed=0
base=""
paths=()
while [ $# -gt 0 ]; do
    case $1 in
        --keep) keep=1 ;;
        --changed)
            changed=1
            if [ $# -gt 1 ] && [ "${2#-}" = "$2" ]; then base=$2; shift; fi ;;
        -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "mutation.sh: unknown option $1" >&2; exit 2 ;;
        *) paths+=("${1%/}") ;;
    esac
    shift
done
if [ $changed -eq 1 ]; then
    if [ -z "$base" ]; then
        base=$(cd "$root" && git merge-base HEAD origin/main 2>/dev/null || true)
        if [ -z "$base" ] || [ "$base" = "$(cd "$root" && git rev-parse HEAD)" ]; then base=HEAD~1; fi
    fi
    for module in "${DECISION_MODULES[@]}"; do
        if [ -n "$(cd "$root" && git diff --name-only "$base" -- "$module")" ]; then paths+=("$module"); fi
    done
    if [ ${#paths[@]} -eq 0 ]; then
        echo "mutation.sh: no decision module changed since $base"
        exit 0
    fi
    echo "mutation.sh: decision modules changed since $base: ${paths[*]}"
fi
if [ ${#paths[@]} -eq 0 ]; then
    echo "usage: bash scripts/mutation.sh [--keep] PATH... | --changed [REV]" >&2
    exit 2
fi

if [ ! -x "$py" ]; then
    echo "mutation.sh: no .venv; install first (AGENTS.md, Commands)" >&2
    exit 2
fi
installed=$("$py" -c 'import importlib.metadata as m; print(m.version("mutmut"))' 2>/dev/null || true)
if [ "$installed" != "$MUTMUT_VERSION" ]; then
    echo "installing mutmut==$MUTMUT_VERSION into .venv"
    "$py" -m pip install --quiet "mutmut==$MUTMUT_VERSION"
fi

# The tests that decide each module's mutants: its own test files and the ones that reach it
# through its callers. Kept narrow: a surviving mutant runs every selected test that called
# its function (tests/hostile/test_command_table.py runs bash per row: too slow for that).
# MUTATION_TESTS="tests/x.py tests/y.py" replaces the selection (e.g. to measure a baseline).
tests_for() {
    if [ -n "${MUTATION_TESTS:-}" ]; then
        echo "$MUTATION_TESTS"
        return
    fi
    case $1 in
        agent/tools/read_only.py)
            echo tests/tools/test_read_only_mutants.py tests/tools/test_permissions.py \
                 tests/hostile/test_git_signatures.py ;;
        agent/tools/shell_parse.py|agent/tools/shell_words.py|agent/tools/shell_walk.py|agent/tools/shell_runners.py)
            echo tests/tools/test_shell_parse_mutants.py tests/tools/test_permissions.py ;;
        agent/tools/command_plan.py)
            echo tests/tools/test_command_plan_mutants.py tests/tools/test_permissions.py ;;
        agent/tools/permissions.py)
            echo tests/tools/test_permissions_mutants.py tests/tools/test_permissions.py \
                 tests/tools/test_permission_modes.py tests/tools/test_permissions_read_roots.py \
                 tests/tools/test_permissions_hooks_mutants.py tests/tools/test_edit_guard.py ;;
        agent/tools/modes.py)
            echo tests/tools/test_permission_modes.py tests/tools/test_exit_plan_mode.py ;;
        agent/tools/sandbox.py)
            echo tests/tools/test_sandbox_mutants.py tests/tools/test_sandbox.py tests/tools/test_sandbox_env.py \
                 tests/tools/test_sandbox_protect.py ;;
        agent/tools/sandbox_protect.py)
            echo tests/tools/test_sandbox_protect.py tests/tools/test_edit_guard.py \
                 tests/hostile/test_sandbox_writes.py ;;
        agent/fs/terminal_text.py)
            echo tests/hostile/test_terminal_text.py ;;
        agent/settings/run_files.py)
            echo tests/test_trust_run_files.py ;;
        agent/context/cache_policy.py)
            echo tests/context/test_cache_policy_mutants.py tests/context/test_cache_policy.py ;;
        agent/context/passes/orphans.py)
            echo tests/context/test_orphans_mutants.py tests/context/test_orphans.py ;;
        agent/context/passes/terminal_outdated.py)
            echo tests/context/test_terminal_outdated_mutants.py tests/context/test_terminal_outdated.py ;;
        agent/context/passes/file_reads.py)
            echo tests/context/test_file_reads_mutants.py tests/context/test_file_reads.py ;;
        agent/context/passes/externalize.py)
            echo tests/context/test_passes_mutants.py tests/context/test_externalize.py \
                 tests/context/test_skill_results_kept.py ;;
        agent/context/passes/stale_file_results.py)
            echo tests/context/test_stale_file_results_mutants.py tests/context/test_stale_file_results.py ;;
        agent/context/passes/active_path.py|agent/context/passes/replace.py)
            echo tests/context/test_passes_mutants.py ;;
        agent/context/passes*)
            echo tests/context/test_passes_mutants.py tests/context/test_orphans_mutants.py \
                 tests/context/test_orphans.py tests/context/test_terminal_outdated_mutants.py \
                 tests/context/test_terminal_outdated.py tests/context/test_file_reads_mutants.py \
                 tests/context/test_file_reads.py tests/context/test_externalize.py ;;
        agent/context/truncation*)
            echo tests/context/truncation ;;
        *)
            local module=${1%.py}
            module=${module//\//.}
            (cd "$root" && grep -rlF --include='test_*.py' "$module" tests | sort | tr '\n' ' ') ;;
    esac
}

# only_mutate patterns: a file, or every file under a folder.
pattern_for() {
    if [ -d "$root/$1" ]; then echo "$1/*"; else echo "$1"; fi
}

status=0
summary=()
for path in "${paths[@]}"; do
    if [ ! -e "$root/$path" ]; then
        echo "mutation.sh: $path does not exist" >&2
        exit 2
    fi
    selected=()
    for t in $(tests_for "$path"); do
        [ -e "$root/$t" ] && selected+=("$t")
    done
    if [ ${#selected[@]} -eq 0 ]; then
        echo "mutation.sh: no tests found for $path" >&2
        exit 2
    fi

    scratch=$(mktemp -d "${TMPDIR:-/tmp}/cairn-mutation.XXXXXX")
    (cd "$root" && git ls-files -z -co --exclude-standard) \
        | tar -C "$root" --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -C "$scratch" -xf -
    {
        echo "[mutmut]"
        echo "source_paths = agent"
        echo "only_mutate = $(pattern_for "$path")"
        echo "pytest_add_cli_args_test_selection ="
        for t in "${selected[@]}"; do echo "    $t"; done
        # In one process: mutmut records in-process which tests reach which function, so the
        # project's addopts (xdist's `-n auto`) are dropped.
        echo "pytest_add_cli_args ="
        echo "    -o"
        echo "    addopts=-ra"
        echo "    -p"
        echo "    no:cacheprovider"
        echo "    -p"
        echo "    no:xdist"
        # An infinite loop is a kill; waiting 15x the tests' time for it is not worth it.
        echo "timeout_multiplier = 4.0"
        echo "timeout_constant = 2.0"
        echo "use_git_change_detection = false"
    } > "$scratch/setup.cfg"

    echo "== $path: tests ${selected[*]}"
    log=$scratch/mutmut-run.log
    if ! (cd "$scratch" && "$py" -m mutmut run --max-children 1 > "$log" 2>&1); then
        tr '\r' '\n' < "$log" | grep -v '^⠀*[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]' | tail -n 30
        summary+=("$path: mutmut run failed (its log: $log)")
        echo "mutation.sh: mutmut run failed for $path (scratch copy kept: $scratch)" >&2
        status=1
        continue
    fi
    (cd "$scratch" && "$py" -m mutmut results --all true) > "$scratch/results.txt"
    line=$("$py" - "$scratch/results.txt" "$path" "$THRESHOLD" <<'PY'
import collections, sys
results, path, threshold = sys.argv[1], sys.argv[2], float(sys.argv[3])
by_status = collections.Counter()
survivors = []
for raw in open(results, encoding="utf-8"):
    name, _, status = raw.strip().rpartition(": ")
    if not name:
        continue
    by_status[status] += 1
    if status not in ("killed", "timeout", "caught by type check"):
        survivors.append(f"    {status}: {name}")
killed = by_status["killed"] + by_status["timeout"] + by_status["caught by type check"]
total = sum(by_status.values())
score = 100.0 * killed / total if total else 100.0
for s in survivors:
    print(s, file=sys.stderr)
others = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items())
                   if s not in ("killed", "survived", "timeout"))
print(f"{path}: {killed} killed (of which {by_status['timeout']} by timeout), "
      f"{by_status['survived']} survived{', ' + others if others else ''}, "
      f"{total} mutants, {score:.1f}% killed{'' if score >= threshold else '  BELOW ' + str(int(threshold)) + '%'}")
sys.exit(0 if score >= threshold else 3)
PY
    ) || status=1
    echo "$line"
    summary+=("$line")
    if [ $keep -eq 1 ]; then
        echo "   kept: $scratch (cd there; $py -m mutmut show NAME)"
    else
        rm -rf "$scratch"
    fi
done

echo
echo "== mutation summary (mutmut $MUTMUT_VERSION, threshold $THRESHOLD%)"
printf '%s\n' "${summary[@]}"
exit $status
