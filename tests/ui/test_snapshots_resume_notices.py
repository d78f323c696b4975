"""Snapshots of a resumed session's stored lines (issue 46 items 10, 21) at 80×24 and 120×40: a
401 under the prompt it answered, a hook's block under the call it blocked, both dimmed; then a
live hook line as a turn draws it. Same rules as tests/ui/test_snapshots.py; accept a
deliberate change with `--snapshot-update`."""

from __future__ import annotations

import pytest

from agent.session.models import Message, SessionNotice
from agent.turn.events import HookActed
from tests.ui.test_snapshots import SIZES, call, command_result, fixed_home, make_app, settle  # noqa: F401 - autouse

AUTH = (
    "Authentication failed for openai/fake-model at http://127.0.0.1:8000/v1: check your API key "
    "(set OPENAI_API_KEY, or pass --api-key)."
)
BLOCKED = "Blocked by PreToolUse hook bash_guard.py: Use trash instead of rm -rf"


def history() -> tuple[list[Message], list[SessionNotice]]:
    rm = call("c1", "terminal-execute", {"command": "rm -rf build dist"})
    refused = command_result("c1", "rm -rf build dist", "", "", 1)
    refused.content, refused.status = "Use trash instead of rm -rf", "error"
    messages = [
        Message(id="u1", role="user", content="hello again"),
        Message(id="u2", parent_id="u1", role="user", content="clean the build"),
        Message(id="a2", role="assistant", content="", tool_calls=[rm]),
        refused,
        Message(id="a3", role="assistant", content="Understood: I will not delete them."),
    ]
    notices = [
        SessionNotice(id=1, session_id="s", after_id="u1", kind="error", source="error", text=AUTH),
        SessionNotice(id=2, session_id="s", after_id="a2", kind="info", source="hook", text=BLOCKED),
    ]
    return messages, notices


@pytest.mark.parametrize("size", SIZES)
def test_resumed_errors_and_hook_lines(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        app = pilot.app
        app.chat.show_history(*history())
        await settle(pilot)
        app.handle_event(
            HookActed(
                hook_event_name="UserPromptSubmit",
                hook="branch.py",
                action="added_context",
                detail="Branch: main\nahead 2",
                message="UserPromptSubmit hook branch.py added context (2 lines): Branch: main",
            )
        )
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
