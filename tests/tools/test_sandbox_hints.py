"""A sandboxed command's failure tells the model why, and the escalation's question tells the user.

The sandbox has its own network namespace: a server on this machine's localhost answers
"Connection refused" from inside it. The real test runs the real bwrap against a TCP server
the test starts on the host.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from agent.session.models import ToolCall
from agent.tools.base import ToolContext
from agent.tools.permissions import ESCALATION_NOTE, Permissions
from agent.tools.registry import ToolRegistry, default_registry
from agent.tools.sandbox_hints import LOOPBACK_WHY, SandboxFailures, sandbox_note, sandbox_symptom
from tests.fakes.approver import FakeApprover
from tests.fakes.loopback_server import ping_script, pong_server
from tests.tools.test_sandbox import needs_sandbox

# Found on PATH inside the sandbox too: a virtualenv under /tmp (a CI clone) is hidden by the
# sandbox's private /tmp, so `sys.executable` may not exist there.
SYSTEM_PYTHON = "python3"


@pytest.mark.parametrize(
    "output",
    [
        "urllib.error.URLError: <urlopen error [Errno 111] Connection refused>",
        "Error: connect ECONNREFUSED 127.0.0.1:5432",
        "curl: (7) Failed to connect to localhost port 8000: Connection refused",
        "curl: (7) Failed to connect to localhost port 8000 after 0 ms: Couldn't connect to server",
        'psql: error: connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused\n'
        "\tIs the server running on that host and accepting TCP/IP connections?",
        "dial tcp 127.0.0.1:8000: connect: connection refused",
    ],
)
def test_a_refused_local_connection_is_a_sandbox_symptom(output):
    symptom = sandbox_symptom(output)
    assert symptom
    note = sandbox_note("workspace-write", symptom)
    assert "servers on this machine's localhost are not reachable from it" in note
    assert "outsideSandbox: true" in note


@pytest.mark.parametrize(
    "output, symptom",
    [
        ("touch: cannot touch '/x': Read-only file system", "Read-only file system"),
        ("npm ERR! getaddrinfo EAI_AGAIN registry.npmjs.org", "getaddrinfo"),
        ("AssertionError: 1 != 2", ""),
    ],
)
def test_other_symptoms_keep_their_note(output, symptom):
    assert sandbox_symptom(output) == symptom
    note = sandbox_note("read-only", symptom)
    assert ("localhost" in note) is False
    assert bool(note) is bool(symptom)
    if symptom:
        assert "nothing is writable" in note and "there is no network," in note


def test_failures_are_remembered_per_command_and_forgotten_on_success():
    failures = SandboxFailures(limit=2)
    failures.record("curl localhost:8000", "workspace-write", "Connection refused")
    assert failures.reason("curl localhost:8000") == f"Its sandboxed run failed: Connection refused ({LOOPBACK_WHY})."
    assert failures.reason("curl localhost:9000") == ""
    failures.record("curl localhost:8000", "workspace-write", "")  # ran fine this time
    assert failures.reason("curl localhost:8000") == ""
    for n in range(3):
        failures.record(f"touch /x{n}", "read-only", "Read-only file system")
    assert failures.reason("touch /x0") == ""  # the oldest goes first
    assert "write nothing" in failures.reason("touch /x2")


@pytest.fixture
def host_server() -> Iterator[int]:
    with pong_server() as port:
        yield port


async def execute(registry: ToolRegistry, ctx: ToolContext, **args):
    return await registry.execute(ToolCall(id="c1", name="terminal-execute", arguments=json.dumps(args)), ctx)


@needs_sandbox
async def test_a_sandboxed_command_refused_by_localhost_is_told_why_and_the_question_says_it(workspace, host_server):
    """The walk's step: a rule lets the command run unasked, in the sandbox, where the host's
    server is out of reach; the model is told so, asks to run it outside, and the user's
    question says why; outside, it reaches the server; each result says where it ran."""
    (workspace / "ping.py").write_text(ping_script(host_server))
    command = f"{SYSTEM_PYTHON} ping.py"
    approver = FakeApprover("once")
    ctx = ToolContext(
        workspace=workspace, permissions=Permissions(approver, workspace=workspace, allow_commands=[SYSTEM_PYTHON])
    )
    registry = default_registry()  # one session's tools: the terminal remembers its failures

    first = await execute(registry, ctx, command=command)
    assert first.is_error and approver.requests == []
    stderr = json.loads(first.content)["stderr"]
    assert "Connection refused" in stderr
    assert "servers on this machine's localhost are not reachable from it" in stderr
    assert first.meta["sandbox"] == "workspace-write" and "outsideSandbox" not in first.meta

    second = await execute(registry, ctx, command=command, outsideSandbox=True)
    assert not second.is_error and json.loads(second.content)["stdout"] == "pong\n"
    (request,) = approver.requests
    assert request.note == (
        f"{ESCALATION_NOTE} Its sandboxed run failed: Connection refused (the sandbox cannot reach this "
        "machine's localhost)."
    )
    assert second.meta["outsideSandbox"] is True and "sandbox" not in second.meta


async def test_an_escalation_without_a_sandboxed_failure_says_only_what_it_asks(workspace):
    approver = FakeApprover("deny")
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver, workspace=workspace))
    await execute(default_registry(), ctx, command="echo hi", outsideSandbox=True)
    (request,) = approver.requests
    assert request.note == ESCALATION_NOTE
