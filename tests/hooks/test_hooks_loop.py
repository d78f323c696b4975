"""Hooks inside a real Runtime against the fake server: what each event's answer does to the turn.

Each hook here logs the JSON it was given to a file (one line per run), so a test reads what
the hook saw; its stdout/stderr/exit code are the answer under test.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

from agent.hooks.dispatch import MAX_STOP_CONTINUES
from agent.runtime.ops import Compact, NewSession, Prompt
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type


def hook(tmp_path: Path, name: str, body: str = "") -> tuple[str, Path]:
    """(command, log): a Python hook that appends its input to `log`, then runs `body`."""
    log = tmp_path / f"{name}.log"
    path = tmp_path / f"{name}.py"
    path.write_text(
        "import json, sys\nevent = json.load(sys.stdin)\n"
        f"open({str(log)!r}, 'a').write(json.dumps(event) + '\\n')\n" + body
    )
    return f"{sys.executable} {path}", log


def seen(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def hooks(**events) -> dict:
    return {"hooks": {event: entries if isinstance(entries, list) else [entries] for event, entries in events.items()}}


async def test_a_user_prompt_submit_exit_2_stores_nothing_and_tells_the_user(server, open_runtime, tmp_path):
    command, log = hook(tmp_path, "prompt", "print('no secrets in prompts', file=sys.stderr)\nsys.exit(2)\n")
    runtime = await open_runtime(flags=hooks(UserPromptSubmit={"command": command}))
    try:
        await runtime.submit(Prompt("my password is hunter2"))
        history = await runtime.history()
    finally:
        await runtime.close()
    assert history == [] and server.requests == []
    (error,) = of_type(runtime.events, "turn_error")
    assert "no secrets in prompts" in error.message
    assert of_type(runtime.events, "turn_finished")[-1].status == "error"
    assert seen(log)[0]["prompt"] == "my password is hunter2"


async def test_stop_hooks_that_never_let_go_are_bounded(server, open_runtime, tmp_path):
    command, log = hook(tmp_path, "stop", "print('keep going', file=sys.stderr)\nsys.exit(2)\n")
    server.add(*[text(f"answer {i}") for i in range(MAX_STOP_CONTINUES + 1)])
    runtime = await open_runtime(flags=hooks(Stop={"command": command}))
    try:
        await runtime.submit(Prompt("work"))
    finally:
        await runtime.close()
    assert len(server.requests) == MAX_STOP_CONTINUES + 1
    # Asked each time the model stopped, until the bound: then the turn ends without asking.
    assert [e["stop_hook_active"] for e in seen(log)] == [False] + [True] * (MAX_STOP_CONTINUES - 1)
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    lines = [n.message for n in of_type(runtime.events, "hook_acted")]
    assert lines == ["Stop hook stop.py sent the model back to work: keep going"] * MAX_STOP_CONTINUES


async def test_a_stop_hooks_continue_false_ends_the_turn(server, open_runtime, tmp_path):
    answer = json.dumps({"continue": False, "decision": "block", "reason": "ignored"})
    command, _ = hook(tmp_path, "stop", f"print({answer!r})\n")
    server.add(text("done"))
    runtime = await open_runtime(flags=hooks(Stop={"command": command}))
    try:
        await runtime.submit(Prompt("work"))
    finally:
        await runtime.close()
    assert len(server.requests) == 1


async def test_session_start_context_goes_with_the_first_prompt_only(server, open_runtime, tmp_path):
    command, log = hook(tmp_path, "start", "print('SESSION-CONTEXT: branch main')\n")
    server.add(text("one"), text("two"), text("three"))
    runtime = await open_runtime(flags=hooks(SessionStart={"command": command}))
    try:
        await runtime.submit(Prompt("first"))
        await runtime.submit(Prompt("second"))
        await runtime.submit(NewSession())
        await runtime.submit(Prompt("third"))
        history = await runtime.history()
    finally:
        await runtime.close()
    first, second, third = (r["messages"][-1]["content"] for r in server.requests)
    assert first.startswith("first\n\n[SessionStart hook]\nSESSION-CONTEXT: branch main")
    assert second == "second"
    assert "SESSION-CONTEXT" in third
    assert [e["source"] for e in seen(log)] == ["startup", "clear"]
    assert history[0].content == "third"  # what the user typed is what is stored and shown


async def test_resuming_a_session_is_source_resume(server, open_runtime, tmp_path):
    command, log = hook(tmp_path, "start")
    server.add(text("one"))
    runtime = await open_runtime(flags=hooks(SessionStart={"command": command}))
    try:
        await runtime.submit(Prompt("first"))
        session_id = runtime.session.id
    finally:
        await runtime.close()
    runtime = await open_runtime(flags=hooks(SessionStart={"command": command}), resume_id=session_id)
    try:
        await _until(lambda: len(seen(log)) == 2)
    finally:
        await runtime.close()
    assert [(e["source"], e["session_id"]) for e in seen(log)] == [("startup", session_id), ("resume", session_id)]


async def test_pre_compact_is_told_the_trigger_and_instructions(server, open_runtime, tmp_path):
    command, log = hook(tmp_path, "compact")
    server.add(text("First answer."), text("Second answer."), text("SUMMARY: all done."))
    runtime = await open_runtime(flags=hooks(PreCompact={"command": command}))
    try:
        await runtime.submit(Prompt("Set up the parser module"))
        await runtime.submit(Prompt("Now add tests for it"))
        await runtime.submit(Compact("focus on X"))
    finally:
        await runtime.close()
    (event,) = seen(log)
    assert (event["trigger"], event["custom_instructions"]) == ("manual", "focus on X")
    assert of_type(runtime.events, "context_managed")[-1].summary is not None


async def test_a_pre_compact_hook_exiting_2_blocks_the_compaction(server, open_runtime, tmp_path):
    """As Claude Code's: exit 2 blocks the compaction, its stderr says why."""
    command, log = hook(tmp_path, "compact", "print('the notes are not saved yet', file=sys.stderr)\nsys.exit(2)\n")
    server.add(text("First answer."), text("Second answer."))
    runtime = await open_runtime(flags=hooks(PreCompact={"command": command}))
    try:
        await runtime.submit(Prompt("Set up the parser module"))
        await runtime.submit(Prompt("Now add tests for it"))
        await runtime.submit(Compact("focus on X"))
        history = await runtime.history()
    finally:
        await runtime.close()
    assert len(seen(log)) == 1 and len(server.requests) == 2  # no summary was asked for
    assert [m.kind for m in history] == ["message"] * 4
    (error,) = of_type(runtime.events, "turn_error")
    assert "PreCompact hook blocked the compaction: the notes are not saved yet" in error.message


async def test_a_notification_hook_hears_that_an_approval_waits(server, open_runtime, tmp_path, workspace):
    command, log = hook(tmp_path, "notify")
    asked = []

    async def approver(request):
        asked.append(request)
        await _until(lambda: bool(seen(log)))  # the dialog stays up while the hook runs
        return "deny"

    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(yolo=False, approver=approver, flags=hooks(Notification={"command": command}))
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    assert len(asked) == 1 and not (workspace / "made").exists()
    (event,) = seen(log)
    assert event["hook_event_name"] == "Notification" and "permission" in event["message"]


def pre_tool(decision: str, reason: str = "") -> str:
    output = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision}}
    if reason:
        output["hookSpecificOutput"]["permissionDecisionReason"] = reason
    return f"print({json.dumps(output)!r})\n"


async def test_a_pre_tool_use_allow_runs_the_call_without_asking(server, open_runtime, tmp_path, workspace):
    command, _ = hook(tmp_path, "allow", pre_tool("allow"))

    async def approver(request):
        raise AssertionError("the hook allowed it: nobody should be asked")

    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(yolo=False, approver=approver, flags=hooks(PreToolUse={"command": command}))
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    assert (workspace / "made").exists()
    (finished,) = of_type(runtime.events, "tool_finished")
    assert finished.message.meta["permission"]["decision"] == "hook"


async def test_a_pre_tool_use_ask_asks_even_with_yolo(server, open_runtime, tmp_path, workspace):
    command, _ = hook(tmp_path, "ask", pre_tool("ask"))
    asked = []

    async def approver(request):
        asked.append(request.detail)
        return "deny"

    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(yolo=True, approver=approver, flags=hooks(PreToolUse={"command": command}))
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    assert asked == ["touch made"] and not (workspace / "made").exists()


async def test_a_pre_tool_use_deny_refuses_with_its_reason(server, open_runtime, tmp_path, workspace):
    command, _ = hook(tmp_path, "deny", pre_tool("deny", "not on a Friday"))
    server.add(tool_calls([("c1", "filesystem-create", {"filePath": "a.txt", "content": "x"})]), text("ok"))
    runtime = await open_runtime(flags=hooks(PreToolUse={"matcher": "Write", "command": command}))
    try:
        await runtime.submit(Prompt("write it"))
    finally:
        await runtime.close()
    assert not (workspace / "a.txt").exists()
    assert server.requests[1]["messages"][-1]["content"] == "Error: not on a Friday"


async def test_updated_input_changes_the_call(server, open_runtime, tmp_path):
    output = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": "echo changed"}}}
    command, _ = hook(tmp_path, "update", f"print({json.dumps(output)!r})\n")
    server.add(tool_calls([("c1", "terminal-execute", {"command": "echo original"})]), text("ok"))
    runtime = await open_runtime(flags=hooks(PreToolUse={"command": command}))
    try:
        await runtime.submit(Prompt("echo"))
    finally:
        await runtime.close()
    assert json.loads(server.requests[1]["messages"][-1]["content"])["stdout"] == "changed\n"


async def test_post_tool_use_feedback_reaches_the_model_with_the_result(server, open_runtime, tmp_path):
    command, _ = hook(tmp_path, "post", "print('lint: 2 warnings in a.py', file=sys.stderr)\nsys.exit(2)\n")
    server.add(tool_calls([("c1", "filesystem-create", {"filePath": "a.py", "content": "x = 1\n"})]), text("ok"))
    runtime = await open_runtime(flags=hooks(PostToolUse={"matcher": "Edit|Write", "command": command}))
    try:
        await runtime.submit(Prompt("write it"))
    finally:
        await runtime.close()
    result = server.requests[1]["messages"][-1]["content"]
    assert result.endswith("[PostToolUse hook]\nlint: 2 warnings in a.py")


async def test_a_failing_hook_is_a_warning_and_the_call_goes_on(server, open_runtime, tmp_path, workspace):
    command, _ = hook(tmp_path, "broken", "print('traceback here', file=sys.stderr)\nsys.exit(1)\n")
    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(flags=hooks(PreToolUse={"command": command}))
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    assert (workspace / "made").exists()
    notes = [n for n in of_type(runtime.events, "notice") if "PreToolUse hook" in n.message]
    assert notes and notes[0].kind == "warning" and "exit code 1" in notes[0].message
    assert "traceback here" in notes[0].message


async def test_claude_code_settings_hooks_see_claude_codes_names(
    server, open_runtime, tmp_path, workspace, monkeypatch
):
    command, log = hook(tmp_path, "claude")
    claude = tmp_path / "claude"
    claude.mkdir()
    entry = {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": command}]}
    (claude / "settings.json").write_text(json.dumps({"hooks": {"PreToolUse": [entry]}}))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    (workspace / "a.txt").write_text("old\n")
    edit = {"filePath": "a.txt", "searchContent": "old", "replaceContent": "new"}
    server.add(tool_calls([("c1", "filesystem-edit", edit)]), text("ok"))
    runtime = await open_runtime(flags={"hooks": {"read_claude_settings": True}})
    try:
        await runtime.submit(Prompt("edit it"))
    finally:
        await runtime.close()
    (event,) = seen(log)
    assert event["tool_name"] == "Edit"
    assert event["tool_input"] == {
        "file_path": str(workspace / "a.txt"),
        "old_string": "old",
        "new_string": "new",
    }
    assert (workspace / "a.txt").read_text() == "new\n"


async def _until(condition, timeout: float = 60.0) -> None:
    """Wait for `condition` (a hook's effect), polling; fails only if it never comes."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "the hook never ran"
        await asyncio.sleep(0.02)


async def test_a_subagents_tool_calls_run_the_tool_hooks_but_not_the_turn_hooks(server, open_runtime, tmp_path):
    tool_command, tool_log = hook(tmp_path, "tool")
    turn_command, turn_log = hook(tmp_path, "turn")
    tasks = ["count the files", "list the folders"]

    calls = [(f"s{i}", "subagent", {"agent": "general-purpose", "task": task}) for i, task in enumerate(tasks)]

    def answer(request: dict):
        """The two children run at once, so each request is answered by what it is part of."""
        first = next(m["content"] for m in request["messages"] if m["role"] == "user")
        answered = any(m["role"] == "tool" for m in request["messages"])
        if first == "look around":
            return text("Both done.") if answered else tool_calls(calls)
        index = tasks.index(first)
        return (
            text(f"{first}: done")
            if answered
            else tool_calls([(f"t{index}", "terminal-execute", {"command": f"echo child{index}"})])
        )

    server.add(*[answer] * 6)
    flags = hooks(
        PreToolUse={"command": tool_command},
        UserPromptSubmit={"command": turn_command},
        Stop={"command": turn_command},
    )
    runtime = await open_runtime(flags=flags)
    try:
        await runtime.submit(Prompt("look around"))
    finally:
        await runtime.close()
    ran = seen(tool_log)
    # Claude Code's names whichever file configured the hook (SPEC §13 item 9): `Bash`, `Task`.
    assert sorted(e["tool_name"] for e in ran) == ["Bash", "Bash", "Task", "Task"]
    assert sorted(e["tool_input"]["command"] for e in ran if e["tool_name"] == "Bash") == [
        "echo child0",
        "echo child1",
    ]
    assert [e["hook_event_name"] for e in seen(turn_log)] == ["UserPromptSubmit", "Stop"]  # the user's turn only
