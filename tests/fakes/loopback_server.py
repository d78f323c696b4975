"""A TCP server on this machine's loopback that answers every connection with `pong`: what a
sandboxed command cannot reach (the sandbox has its own network namespace) and one run
outside can."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def pong_server() -> Iterator[int]:
    """Serve until the block ends; yields the port."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.sendall(b"pong")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def ping_script(port: int) -> str:
    """A Python script printing what the server at `port` answers."""
    return f"import socket\nprint(socket.create_connection(('127.0.0.1', {port}), timeout=5).recv(4).decode())\n"
