"""The warm backend: a per-user process that forks ready-loaded `cairn -p` runs.

Started by agent/headless/warm_client.py (`CAIRN_WARM=1`) as `python -m agent.headless.warm`.
It imports litellm (~2.7 s of CPU), the modules a first request loads, the loop and the
tokenizer once, then listens on `<data dir>/warm/backend.sock` (folder 0700, peer uid
checked). Each connection brings a command line, a folder, an environment and the client's
stdin/stdout/stderr as file descriptors; a forked child takes them over and runs
`agent.cli.main` exactly as the client would have, and sends its exit code back.

Why fork and not a request server: the child is the run, with the client's streams and
signals (the client forwards Ctrl-C/SIGTERM/SIGHUP), so every behaviour of `cairn -p`,
store, tools, approvals and exit codes included, is the in-process one.

litellm's native extension cannot cross a fork once it ran, so this process reserves itself
for forking (`reserve_process_for_forking`) and only imports: it never sends a request.
What a child imported beyond the preload is imported here afterwards, so the next child
starts with it. A client whose fingerprint (interpreter, cairn's code, litellm, import-time
variables) differs gets a refusal and this backend exits: that client runs in-process and
starts a current one. After IDLE_TIMEOUT_S without a run, it exits.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import io
import json
import logging
import os
import signal
import socket
import struct
import sys
import time
import traceback
from pathlib import Path

from agent.headless.warm_client import LOCK_NAME, LOG_NAME, fingerprint, socket_path, warm_dir

IDLE_TIMEOUT_S = 600.0
IDLE_ENV = "CAIRN_WARM_IDLE"  # seconds without a run before the backend exits
ACCEPT_POLL_S = 1.0
LOCK_WAIT_S = 10.0  # a stale backend still shutting down releases the lock within this
MAX_HELLO_BYTES = 4 * 1024 * 1024  # command line and environment
MODULES_FILE = "modules-{pid}.json"  # what a child imported, for the backend to preload
# Never preloaded from a child's list: the child's own entry points.
NOT_PRELOADED = ("__main__", "__mp_main__")

log = logging.getLogger("agent.warm")


class WarmBackend:
    def __init__(self, folder: Path, idle_timeout: float = IDLE_TIMEOUT_S) -> None:
        self.folder = folder
        self.idle_timeout = idle_timeout
        self.fingerprint = fingerprint()
        self.children: set[int] = set()
        self.last_activity = time.monotonic()
        self.stopping = False
        # Open in this process, never to be inherited by a run: a child holding the lock would
        # keep the next backend from starting after this one exits.
        self.inherited: list = []

    # -- start --------------------------------------------------------------------
    def preload(self) -> None:
        from agent.context.tokens import load_encoding
        from agent.llm.offline import import_litellm
        from agent.runtime.backend_load import FIRST_REQUEST_MODULES

        import_litellm()
        try:
            from litellm.rust_bridge.fork_guard import reserve_process_for_forking

            reserve_process_for_forking("cairn's warm backend")
        except ImportError:  # a litellm without the native extension: nothing to guard
            pass
        self._import(
            FIRST_REQUEST_MODULES + ("agent.cli", "agent.headless.run", "agent.turn.loop", "agent.runtime.runtime")
        )
        from agent.settings.schema import ContextSettings

        load_encoding(ContextSettings().tokenizer)
        import gc

        gc.freeze()  # children share these pages copy-on-write; the collector leaves them alone

    def _import(self, names) -> None:
        for name in names:
            if name in sys.modules or name.startswith(NOT_PRELOADED):
                continue
            try:
                importlib.import_module(name)
            except Exception:  # best effort: only a speed-up (a child imports what it needs)
                log.debug("preload of %s failed", name, exc_info=True)

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(ACCEPT_POLL_S)
        while not self.stopping:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                self._reap()
                if not self.children and time.monotonic() - self.last_activity > self.idle_timeout:
                    log.info("idle for %.0f s: exiting", self.idle_timeout)
                    return
                continue
            self.last_activity = time.monotonic()
            try:
                self._handle(conn)
            except Exception:
                log.exception("a connection failed")
            finally:
                conn.close()
            self._reap()

    # -- one connection ---------------------------------------------------------------
    def _handle(self, conn: socket.socket) -> None:
        conn.settimeout(5.0)
        uid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[1]
        if uid != os.getuid():
            log.warning("refused a connection from uid %d", uid)
            return
        data, fds = _receive(conn)
        try:
            hello = json.loads(data)
            if hello.get("command") == "stop":
                self.stopping = True
                _send(conn, {"stopped": True})
                return
            if hello.get("fingerprint") != self.fingerprint:
                # Another cairn, litellm or import-time environment: that client runs
                # in-process and starts a backend of its own kind; this one is done.
                log.info("stale: a client with another fingerprint; exiting")
                self.stopping = True
                _send(conn, {"error": "stale backend"})
                return
            if len(fds) != 3:
                _send(conn, {"error": "expected stdin, stdout and stderr"})
                return
            pid = os.fork()
            if pid == 0:
                for owned in self.inherited:
                    owned.close()
                _run_child(conn, fds, hello, self.folder)  # never returns
            self.children.add(pid)
            log.info("run pid=%d argv=%d words", pid, len(hello.get("argv", [])))
            _send(conn, {"pid": pid})
        finally:
            for fd in fds:
                os.close(fd)

    def _reap(self) -> None:
        for pid in list(self.children):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.children.discard(pid)
                self._learn(pid)

    def _learn(self, pid: int) -> None:
        """Import what that child needed beyond the preload, for the next one."""
        path = self.folder / MODULES_FILE.format(pid=pid)
        try:
            names = json.loads(path.read_text())
            path.unlink()
        except (OSError, ValueError):
            return
        if isinstance(names, list):
            self._import([n for n in names if isinstance(n, str)])
            import gc

            gc.freeze()


def _receive(conn: socket.socket) -> tuple[bytes, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, MAX_HELLO_BYTES, 3)
    while not data.endswith(b"\n") and len(data) < MAX_HELLO_BYTES:
        more = conn.recv(MAX_HELLO_BYTES)
        if not more:
            break
        data += more
    return data, list(fds)


def _send(conn: socket.socket, obj: dict) -> None:
    conn.sendall(json.dumps(obj).encode() + b"\n")


def _run_child(conn: socket.socket, fds: list[int], hello: dict, folder: Path) -> None:
    """In the forked child: become the client's `cairn -p` and exit with its code."""
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        encoding = hello.get("encoding") or "utf-8"
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=encoding, line_buffering=os.isatty(1))
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), encoding=encoding, errors="backslashreplace", line_buffering=True
        )
        os.chdir(hello["cwd"])
        os.environ.clear()
        os.environ.update(hello["env"])
        before = set(sys.modules)
        from agent.cli import main

        try:
            code = main(list(hello["argv"]), warm=False)
        except SystemExit as exc:  # argparse's errors and --help
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except KeyboardInterrupt:
            code = 130
        with contextlib.suppress(OSError):
            (folder / MODULES_FILE.format(pid=os.getpid())).write_text(json.dumps(sorted(set(sys.modules) - before)))
    except BaseException:
        log.error("run failed:\n%s", traceback.format_exc())
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        with contextlib.suppress(OSError):
            _send(conn, {"exit": code})
        os._exit(code)


def _bind(path: Path) -> socket.socket:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def _take_lock(folder: Path):
    """The one backend of this data folder holds the lock while it lives."""
    handle = open(folder / LOCK_NAME, "a+")  # noqa: SIM115 - held (and locked) as long as the backend lives
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return handle
        except BlockingIOError:
            if time.monotonic() > deadline:
                handle.close()
                return None
            time.sleep(0.1)


def _idle_timeout() -> float:
    try:
        return max(1.0, float(os.environ.get(IDLE_ENV, "")))
    except ValueError:
        return IDLE_TIMEOUT_S


def main() -> int:
    folder = warm_dir()
    path = socket_path()
    if path is None:
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    os.chmod(folder, 0o700)
    handler = logging.FileHandler(folder / LOG_NAME, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(process)d %(levelname)s %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log.info("starting (pid %d)", os.getpid())
    lock = _take_lock(folder)
    if lock is None:
        log.info("another backend holds the lock: exiting")
        return 0
    backend = WarmBackend(folder, idle_timeout=_idle_timeout())
    backend.preload()
    listener = _bind(path)
    backend.inherited = [listener, lock]
    inode = os.stat(path).st_ino
    log.info("ready (pid %d)", os.getpid())
    try:
        backend.serve(listener)
    finally:
        listener.close()
        try:
            if os.stat(path).st_ino == inode:
                path.unlink()
        except OSError:
            pass
        lock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
