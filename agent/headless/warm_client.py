"""`cairn -p` through the warm backend (agent/headless/warm.py), when the user asked for it.

Importing litellm costs ~2.7 s of CPU before the first request can leave (bench/README.md,
start_to_request); a headless run in a script or CI job pays it every time. With
`CAIRN_WARM=1` the run is handed to a per-user background process that has litellm and the
tokenizer loaded: it forks a child that runs this very command line with this process's
standard streams (passed as file descriptors), folder and environment, and the exit code
comes back here. When the backend is absent, stale (another cairn, another litellm, other
LITELLM_*/proxy variables) or fails to answer, the run happens in this process as always and
a new backend is started for the runs that follow.

Standard library only, imported by agent/cli.py before anything heavy.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
from pathlib import Path

WARM_ENV = "CAIRN_WARM"  # "1": use (and start) the warm backend for `cairn -p`
SOCKET_NAME = "backend.sock"
LOCK_NAME = "backend.lock"
LOG_NAME = "backend.log"
# Unix socket paths are limited to 107 bytes; a longer data folder runs in-process.
MAX_SOCKET_PATH = 100
CONNECT_TIMEOUT_S = 2.0
# Variables that change what litellm or the HTTP stack set up at import: a backend started
# under other values is stale. (Secrets never enter the fingerprint or the backend's environment.)
IMPORT_TIME_ENV_PREFIXES = (
    "LITELLM_",
    "TIKTOKEN_",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "SSL_CERT_",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    "PYTHON",
)
# The backend's own environment: enough to run Python and find its data, no API keys (a model's
# command could read /proc/<pid>/environ of a process that kept them).
BACKEND_ENV_NAMES = (
    "PATH",
    "HOME",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TMPDIR",
    "CAIRN_HOME",
    "XDG_DATA_HOME",
    "XDG_CONFIG_HOME",
    "USER",
    "LOGNAME",
    "CAIRN_WARM_IDLE",
)
SECRET_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL")
FORWARDED_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class WarmUnavailable(Exception):
    """No usable backend: the caller runs in-process."""


def warm_requested(environ: dict[str, str] | None = None) -> bool:
    return (environ if environ is not None else os.environ).get(WARM_ENV, "") == "1"


def warm_dir() -> Path:
    from agent.paths import data_dir

    return data_dir() / "warm"


def _is_secret(name: str) -> bool:
    return any(word in name.upper() for word in SECRET_WORDS)


def import_time_env(environ: dict[str, str]) -> dict[str, str]:
    return {
        k: v for k, v in sorted(environ.items()) if k.upper().startswith(IMPORT_TIME_ENV_PREFIXES) and not _is_secret(k)
    }


def fingerprint(environ: dict[str, str] | None = None) -> str:
    """What a backend must share with this command to run it: this interpreter, this cairn's
    code (every module's size and mtime: an edited checkout is a new version), litellm's
    install, and the variables read at import."""
    import agent

    environ = dict(os.environ if environ is None else environ)
    digest = hashlib.sha256()
    digest.update(f"{sys.executable}\0{agent.__version__}\0{sys.version}\0".encode())
    package = Path(agent.__file__).parent
    for path in sorted(package.rglob("*.py")):
        try:
            stat = path.stat()
        except OSError:
            continue
        digest.update(f"{path.relative_to(package)}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    import importlib.util

    spec = importlib.util.find_spec("litellm")
    if spec is not None and spec.origin:
        with contextlib.suppress(OSError):
            digest.update(f"{spec.origin}\0{os.stat(spec.origin).st_mtime_ns}\0".encode())
    digest.update(json.dumps(import_time_env(environ)).encode())
    return digest.hexdigest()[:32]


def socket_path() -> Path | None:
    path = warm_dir() / SOCKET_NAME
    return path if len(os.fsencode(str(path))) <= MAX_SOCKET_PATH else None


def run_warm(argv: list[str], api_key: str | None = None) -> int:
    """Run `argv` in a child of the warm backend; its exit code. Raises WarmUnavailable
    (before anything ran) when there is no usable backend. `api_key`: the `--api-key` of
    `argv` as the CLI parsed it, hidden from `ps` once the run is handed over."""
    path = socket_path()
    if path is None or not path.exists():
        raise WarmUnavailable("no backend")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(CONNECT_TIMEOUT_S)
    try:
        conn.connect(str(path))
        # The environment sent holds API keys: only to a backend of this very user.
        peer_uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[1]
        if peer_uid != os.getuid():
            raise OSError(f"the backend socket belongs to uid {peer_uid}")
        hello = {
            "fingerprint": fingerprint(),
            "argv": argv,
            "cwd": os.getcwd(),
            "env": dict(os.environ),
            "encoding": getattr(sys.stdout, "encoding", None) or "utf-8",
        }
        payload = json.dumps(hello).encode() + b"\n"
        socket.send_fds(conn, [payload], [0, 1, 2])
        reader = conn.makefile("rb")
        answer = json.loads(reader.readline() or b"{}")
    except (OSError, ValueError) as exc:
        conn.close()
        raise WarmUnavailable(str(exc)) from None
    if "pid" not in answer:
        conn.close()
        raise WarmUnavailable(answer.get("error", "refused"))
    hide_keys(api_key)
    return _wait_for_exit(conn, reader, int(answer["pid"]))


def hide_keys(api_key: str | None) -> None:
    """The run is the backend's now; this process only waits, for as long as the run lasts,
    and `ps` would show its `--api-key KEY` all along (/proc/<pid>/environ, to the same user
    and so to a model's command, the key variables). Overwritten where they sit, as an
    in-process run overwrites its own (agent/runtime/runtime.py, agent/process/secrets.py hide_from_proc).
    Every key-like variable goes too: the environment was sent, this process needs none.
    sys.argv and os.environ, copies, keep the values."""
    from agent.process.secrets import hide_from_proc, known_secrets

    hide_from_proc([api_key, *known_secrets()])


def _wait_for_exit(conn: socket.socket, reader, pid: int) -> int:
    """Forward Ctrl-C, SIGTERM and SIGHUP to the child (it ends as an in-process run would)
    and wait for its exit code. The run has started: from here on it is never re-run."""

    def forward(signum: int, _frame) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)

    previous = {s: signal.signal(s, forward) for s in FORWARDED_SIGNALS}
    conn.settimeout(None)
    try:
        line = reader.readline()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        conn.close()
    try:
        return int(json.loads(line)["exit"])
    except (ValueError, KeyError, TypeError):
        sys.stderr.write(f"Error: the warm backend's run ended without an exit status (see {warm_dir() / LOG_NAME}).\n")
        return 1


def backend_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    environ = dict(os.environ if environ is None else environ)
    kept = {k: v for k, v in environ.items() if k in BACKEND_ENV_NAMES}
    kept.update(import_time_env(environ))
    return kept


def start_backend() -> None:
    """Start a backend for the runs that follow (detached; it waits for the lock if a stale
    one is still shutting down). Best effort: a failure only means the next run is cold too."""
    if socket_path() is None:
        return
    import agent

    root = Path(agent.__file__).resolve().parent.parent  # importable from there, installed or not
    with contextlib.suppress(OSError):
        subprocess.Popen(
            [sys.executable, "-m", "agent.headless.warm"],
            env=backend_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            cwd=root,
        )
