"""Running a program the way a user's shell does: stdout and stderr on terminals (ptys).

What a program writes to a terminal is what the terminal obeys; a pipe is what tests usually
give it, and cairn writes differently to each (agent/fs/terminal_text.py).
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time

from tests.headless.helpers import TIMEOUT


def run_on_terminals(argv: list[str], timeout: float = TIMEOUT) -> tuple[int, bytes, bytes]:
    """`argv` run with stdout and stderr each on a pseudo-terminal: its exit code, what each received."""
    out_master, out_slave = pty.openpty()
    err_master, err_slave = pty.openpty()
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=out_slave, stderr=err_slave, env=os.environ.copy()
    )
    os.close(out_slave)
    os.close(err_slave)
    received = {out_master: b"", err_master: b""}
    open_fds = set(received)
    deadline = time.monotonic() + timeout
    try:
        while open_fds and time.monotonic() < deadline:
            ready, _, _ = select.select(list(open_fds), [], [], 0.5)
            for fd in ready:
                try:
                    data = os.read(fd, 65536)
                except OSError:  # EIO: the slave side closed (the process ended)
                    data = b""
                if data:
                    received[fd] += data
                else:
                    open_fds.discard(fd)
            if process.poll() is not None and not ready:
                break
        code = process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
        os.close(out_master)
        os.close(err_master)
    return code, received[out_master], received[err_master]
