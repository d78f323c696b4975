"""A subagent's block reads as the parent's own (issue 46, item 15; the walk's 18 and 20): its
child's calls are one-line summaries, not raw JSON; a refused or failed call is marked ✗ with
why; a plan's one-line title has no Markdown syntax; a command's header says whether it ran
in the sandbox."""

from __future__ import annotations

from agent.session.models import Message, ToolCall
from agent.turn.children import _ChildEvents
from agent.turn.events import ToolFinished
from agent.ui.widgets import tool_render
from agent.ui.widgets.tool_block import ToolBlock, _child_lines
from tests.ui.test_snapshots import call


def test_a_childs_calls_read_as_the_parents():
    assert tool_render.child_call('terminal-execute {"command": "grep -rn want_bytes src"}') == (
        "terminal-execute $ grep -rn want_bytes src"
    )
    assert tool_render.child_call('filesystem-read {"filePath": "src/signer.py"}') == "filesystem-read src/signer.py"
    # Cut by the child's progress line (80 characters, then `…`): still the command, not JSON.
    cut = 'terminal-execute {"command": "python -m pytest tests/test_signer.py -k sha256 --maxfail=1 -q -p no…'
    assert (
        tool_render.child_call(cut)
        == "terminal-execute $ python -m pytest tests/test_signer.py -k sha256 --maxfail=1 -q -p no…"
    )
    assert tool_render.child_call("retrying (2/5): rate limited") is None


def test_a_refused_child_call_is_marked_apart_from_one_that_ran():
    lines = [
        'terminal-execute {"command": "grep -rn want_bytes src"}',
        'terminal-execute {"command": "rm -rf build && echo cleaned"}',
        "✗ refused: the user said no",
    ]
    shown = _child_lines(lines)
    ran, refused = shown.plain.split("\n")
    assert ran == "    · terminal-execute $ grep -rn want_bytes src"
    assert refused == "    ✗ terminal-execute $ rm -rf build && echo cleaned · refused: the user said no"
    red = [shown.plain[span.start : span.end] for span in shown.spans if span.style == "red"]
    assert red == ["    ✗", " · refused: the user said no"]


def test_the_child_says_which_call_was_refused():
    said: list[str] = []
    watcher = _ChildEvents("general", said.append)
    run = ToolCall(id="c1", name="terminal-execute", arguments='{"command": "rm -rf build"}')
    refused = Message(
        role="tool",
        tool_call_id="c1",
        tool_name="terminal-execute",
        content="Error: the user denied this command.",
        status="error",
        meta={"permission": {"decision": "deny"}},
    )
    failed = refused.model_copy(update={"content": "Error: exit 2", "meta": {}})
    watcher(ToolFinished(call=run, message=refused))
    watcher(ToolFinished(call=run, message=failed))
    watcher(ToolFinished(call=run, message=refused.model_copy(update={"status": "ok", "content": "fine"})))
    assert said == ["✗ refused: the user denied this command.\n", "✗ failed: exit 2\n"]


def test_a_plan_title_has_no_markdown_syntax():
    plan = call("p1", "exit-plan-mode", {"plan": "# Plan: add a `sha256` default to **Signer**\n\n1. Change it"})
    assert tool_render.format_args(plan) == "Plan: add a sha256 default to Signer"
    assert tool_render.plain_title("See [the docs](https://x.y) and _this_ snake_case_name") == (
        "See the docs and this snake_case_name"
    )


def test_a_command_header_says_where_it_ran():
    command = call("c1", "terminal-execute", {"command": "git log --oneline -5"})
    sandboxed = Message(
        role="tool", tool_call_id="c1", tool_name="terminal-execute", content="{}", meta={"sandbox": "read-only"}
    )
    outside = sandboxed.model_copy(update={"meta": {"outsideSandbox": True}})
    block = ToolBlock(command)
    block.set_result(sandboxed)
    assert block._header().plain == "● terminal-execute $ git log --oneline -5 · sandboxed"
    block.set_result(outside)
    assert block._header().plain.endswith(" · outside sandbox")
    block.set_result(sandboxed.model_copy(update={"meta": {}}))  # stored before it was recorded
    assert block._header().plain == "● terminal-execute $ git log --oneline -5"


async def test_an_opened_plan_and_a_childs_answer_are_drawn_as_markdown(tmp_path):
    from tests.ui.conftest import wait_for
    from tests.ui.test_snapshots import make_app, settle

    plan = call("p1", "exit-plan-mode", {"plan": "# Plan: add a `sha256` default\n\n1. Use `hashlib.sha256`"})
    child = call("s1", "subagent", {"agent": "explore", "task": "find want_bytes"})
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(
            [
                Message(id="a1", role="assistant", content="", tool_calls=[plan, child]),
                Message(
                    id="r1",
                    role="tool",
                    tool_call_id="p1",
                    tool_name="exit-plan-mode",
                    content="The user approved.",
                    meta={"plan": "# Plan: add a `sha256` default\n\n1. Use `hashlib.sha256`", "review": "approved"},
                ),
                Message(
                    id="r2",
                    role="tool",
                    tool_call_id="s1",
                    tool_name="subagent",
                    content="It is `TimestampSigner.unsign`.\nAnd one more line.",
                    meta={"subagent": {"tool_calls": 2}, "cost": 0.0},
                ),
            ]
        )
        await settle(pilot)
        plan_block, child_block = app.chat.tool_blocks
        assert "`" not in plan_block._header().plain
        for block in (plan_block, child_block):
            block.toggle_fold()
        await wait_for(pilot, lambda: len(app.chat.query("ToolBlock .tool-markdown MarkdownBlock")) >= 3, what="drawn")
        await pilot.pause()
        shown = app.export_screenshot()
        assert "TimestampSigner.unsign" in shown and "`TimestampSigner" not in shown
        assert "hashlib.sha256" in shown and "`hashlib" not in shown
