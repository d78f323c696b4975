# Sourced by ./cairn, ./test and .ci/mutation: make .venv match requirements.lock, then return.
#
# The check costs two file tests (no process is started), so `./cairn` starts as fast as
# `.venv/bin/cairn`. The first run, a missing or broken .venv, or a lock file that changed
# (a pull that moved a pin) installs the locked versions and the project on top, with one
# progress line; whatever is missing (Python >= 3.11, its venv module, the package index)
# is said in one sentence, never a traceback. Sets CAIRN_ROOT.

CAIRN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
_venv=$CAIRN_ROOT/.venv
_stamp=$_venv/.cairn-lock-sha256  # the hash of the requirements.lock .venv was made from
_lock=$CAIRN_ROOT/requirements.lock

_cairn_say() { echo "cairn: $*" >&2; }

_cairn_lock_hash() {
    "$_venv/bin/python" -c 'import hashlib, sys; print(hashlib.sha256(open(sys.argv[1], "rb").read()).hexdigest())' "$_lock"
}

_cairn_python() {
    # The newest Python >= 3.11 on PATH.
    local candidate
    for candidate in python3.13 python3.12 python3.11 python3 python; do
        if command -v "$candidate" >/dev/null 2>&1 \
            && "$candidate" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
            echo "$candidate"
            return 0
        fi
    done
    return 1
}

_cairn_pip_failed() {
    # One sentence from pip's log: a bad lock line, an unreachable index, or pip's own error.
    local log=$1 what=$2 line
    line=$(grep -m1 -E "Invalid requirement|Expected (end|package name|semicolon)|Could not parse" "$log" || true)
    if [ -n "$line" ]; then
        _cairn_say "requirements.lock has a line pip cannot read (${line#ERROR: }); fix it or run: git checkout requirements.lock"
    elif grep -qE "Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|No matching distribution found|Could not find a version" "$log"; then
        _cairn_say "could not download $what: is the package index (pypi.org, or PIP_INDEX_URL) reachable from here? (pip: $(grep -m1 -E '^ERROR' "$log" | cut -c1-160))"
    else
        _cairn_say "installing $what failed: $(grep -m1 -E '^ERROR' "$log" | cut -c1-200) (full log: $log)"
    fi
}

_cairn_setup() {
    local py log
    if ! py=$(_cairn_python); then
        _cairn_say "needs Python 3.11 or newer, and found $(python3 --version 2>&1 || echo 'no python3') on PATH; install one (e.g. sudo apt install python3.11) and run this again."
        return 1
    fi
    if ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        _cairn_say "$py has no venv module; install it (Debian/Ubuntu: sudo apt install python3-venv) and run this again."
        return 1
    fi
    _cairn_say "setting up .venv from requirements.lock (first run, or the lock changed; a minute or two)..."
    if [ -d "$_venv" ] && ! "$_venv/bin/python" -c '' >/dev/null 2>&1; then
        rm -rf "$_venv"  # broken (its Python moved or was removed): made again
    fi
    if [ ! -x "$_venv/bin/python" ] && ! "$py" -m venv "$_venv" >/dev/null 2>&1; then
        _cairn_say "could not create $_venv with $py -m venv; is the folder writable?"
        return 1
    fi
    rm -f "$_stamp"
    log=$(mktemp "${TMPDIR:-/tmp}/cairn-setup.XXXXXX")
    if ! "$_venv/bin/python" -m pip install -q --disable-pip-version-check -r "$_lock" >"$log" 2>&1; then
        _cairn_pip_failed "$log" "the packages in requirements.lock"
        return 1
    fi
    if ! "$_venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps -e "$CAIRN_ROOT" >"$log" 2>&1; then
        _cairn_pip_failed "$log" "cairn itself"
        return 1
    fi
    rm -f "$log"
    _cairn_lock_hash >"$_stamp"
    if ! command -v bwrap >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
            && (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1; then
            _cairn_say "installed bubblewrap (the sandbox for commands cairn runs without asking)"
        else
            _cairn_say "bubblewrap is not installed, so every command asks before it runs (nothing runs unasked); install it for the sandbox: sudo apt install bubblewrap"
        fi
    fi
    _cairn_say "ready"
}

cairn_bootstrap() {
    if [ -x "$_venv/bin/cairn" ] && [ -f "$_stamp" ] && ! [ "$_lock" -nt "$_stamp" ]; then
        return 0  # the usual case: two file tests
    fi
    if [ -x "$_venv/bin/cairn" ] && [ -f "$_stamp" ] && [ "$(_cairn_lock_hash 2>/dev/null)" = "$(cat "$_stamp")" ]; then
        touch "$_stamp"  # the lock was touched, not changed (a checkout)
        return 0
    fi
    _cairn_setup
}
