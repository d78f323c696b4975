"""MCP fixtures: the fake server (tests/fakes/mcp_server.py) as a stdio command or a loopback
HTTP server, and a runtime whose config names it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import REPO_ROOT

HTTP_START_TIMEOUT = 60  # a loaded 2-core machine imports starlette and uvicorn slowly


def stdio_server(*extra: str, timeout: float | None = None, **fields) -> dict:
    """A `[mcp.servers.NAME]` table that runs the fake server over stdio."""
    table = {"command": sys.executable, "args": ["-m", "tests.fakes.mcp_server", *extra], "cwd": str(REPO_ROOT)}
    if timeout is not None:
        table["timeout"] = timeout
    table.update(fields)
    return table


def mcp_flags(servers: dict, **mcp) -> dict:
    # Generous: the fake server is a Python process importing the SDK on a loaded machine.
    return {"mcp": {"servers": servers, "startup_timeout": 120, "headless_wait": 120, **mcp}}


@pytest.fixture
def http_server():
    """Start the fake server over streamable HTTP: `url = http_server("--require-header", ...)`."""
    started: list[subprocess.Popen] = []

    def start(*extra: str) -> str:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.mcp_server", "--http", *extra],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=REPO_ROOT,
        )
        started.append(proc)
        line = proc.stdout.readline()  # blocks until the socket listens (or the process died)
        assert line.startswith("listening "), f"fake MCP server did not start: {line!r}"
        return line.split()[1]

    yield start
    for proc in started:
        proc.kill()
        proc.wait(timeout=HTTP_START_TIMEOUT)


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


def of_type(events, name):
    return [e for e in events if e.type == name]
