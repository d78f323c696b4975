"""Whatever arguments the model sends to filesystem-search / filesystem-find, the answer is a
bounded result (an `Error:` at worst), never an exception or a hang."""

from __future__ import annotations

import asyncio
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.session.models import ToolCall
from agent.tools.base import ToolContext, ToolResult
from agent.tools.fs_find import FsFind
from agent.tools.fs_search import FsSearch
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry

KEYS = ["pattern", "path", "glob", "caseSensitive", "maxResults", "x"]
values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5000),
    st.text(max_size=40),
    st.sampled_from(
        [
            "*",
            "**",
            "{a,b",
            "[",
            "(a+)+$",
            "\\",
            "..",
            "/etc",
            "~",
            "a/../../b",
            "-e",
            "--files",
            "\x00",
            "*.{py",
            "[!a]*",
            "src/**/x",
        ]
    ),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["filesystem-search", "filesystem-find"]),
    arguments=st.dictionaries(st.sampled_from(KEYS), values, max_size=5),
)
def test_any_arguments_give_a_bounded_result(workspace, name, arguments):
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / "src" / "a.py").write_text("alpha\nbeta\n")
    registry = ToolRegistry([FsSearch(), FsFind()])
    ctx = ToolContext(workspace=workspace, permissions=Permissions(None, allow=[]))
    call = ToolCall(id="c", name=name, arguments=json.dumps(arguments))
    result = asyncio.run(asyncio.wait_for(registry.execute(call, ctx), 60))
    assert isinstance(result, ToolResult) and len(result.content) < 100_000
    assert "Traceback" not in result.content
    assert not result.content.startswith(f"Error: {name} failed"), result.content  # no bug behind an Error:
