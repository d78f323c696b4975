"""Claude Code's hook events cairn lacked (issue 45), in a real Runtime against the fake server:
`transcript_path` (a Stop loop reading the last assistant line), SessionEnd, SessionStart's
matchers and `compact` source, PostToolUseFailure, PermissionRequest, the idle Notification,
SubagentStart/SubagentStop, and the warning for a matcher naming a tool cairn has not.

Hooks log what they were given (tests/hooks/test_hooks_loop.py `hook`), or are bash + jq
scripts as a Claude Code user writes them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from agent.runtime.ops import Compact, NewSession, Prompt
from agent.session.importers.claude_code import parse
from tests.fakes.llm_server import text, tool_calls
from tests.hooks.test_hooks_loop import _until, hook, hooks, seen
from tests.loop.conftest import of_type

needs_jq = pytest.mark.skipif(shutil.which("jq") is None, reason="needs jq")

# A Stop loop as Claude Code users write it (the "ralph" pattern): the last assistant line of
# the transcript, its text blocks; exit 2 until the model says DONE.
STOP_LOOP = r"""#!/bin/bash
INPUT=$(cat)
TRANSCRIPT=$(echo "$INPUT" | jq -r '.transcript_path')
LAST_LINE=$(grep '"role":"assistant"' "$TRANSCRIPT" | tail -1)
LAST=$(echo "$LAST_LINE" | jq -r '.message.content | map(select(.type == "text")) | map(.text) | join("\n")')
echo "$LAST" >> "{log}"
if ! echo "$LAST" | grep -q DONE; then
  echo "Keep going until you can say DONE" >&2
  exit 2
fi
"""


@needs_jq
async def test_a_stop_loop_reads_the_last_assistant_message_from_the_transcript(server, open_runtime, tmp_path):
    log = tmp_path / "last.log"
    script = tmp_path / "stop-loop.sh"
    script.write_text(STOP_LOOP.replace("{log}", str(log)))
    script.chmod(0o755)
    echo = ("c1", "terminal-execute", {"command": "echo hi"})
    server.add(tool_calls([echo]), text("Still working on it."), text("All tests pass. DONE"))
    logger, logged = hook(tmp_path, "stop-logger")
    runtime = await open_runtime(flags=hooks(Stop=[{"command": str(script)}, {"command": logger}]))
    try:
        await runtime.submit(Prompt("fix the bug"))
        session_id = runtime.session.id
    finally:
        await runtime.close()
    assert log.read_text().splitlines() == ["Still working on it.", "All tests pass. DONE"]
    # Claude Code's newer field says the same without the transcript.
    assert [e["last_assistant_message"] for e in seen(logged)] == ["Still working on it.", "All tests pass. DONE"]
    assert len(server.requests) == 3
    assert "Keep going until you can say DONE" in server.requests[2]["messages"][-1]["content"]
    # In the data folder, never in the repository; Claude Code's format, its tool names.
    path = Path(os.environ["CAIRN_HOME"]) / "transcripts" / f"{session_id}.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["type"], r["parentUuid"] is None) for r in lines][:2] == [("user", True), ("assistant", False)]
    assert lines[0]["message"] == {"role": "user", "content": "fix the bug"}
    assert lines[1]["message"]["content"][0] == {
        "type": "tool_use",
        "id": "c1",
        "name": "Bash",
        "input": {"command": "echo hi"},
    }
    assert lines[2]["message"]["content"][0]["tool_use_id"] == "c1" and lines[2]["toolUseResult"]["stdout"] == "hi\n"
    assert len({r["uuid"] for r in lines}) == len(lines)  # each message once, however many hooks ran
    assert not any(r["isSidechain"] for r in lines)
    imported = parse(path.read_text())  # the format Claude Code's own importer reads
    assert [m.role for m in imported.messages][:3] == ["user", "assistant", "tool"]


async def test_every_payload_names_the_transcript(server, open_runtime, tmp_path):
    command, log = hook(tmp_path, "prompt")
    server.add(text("ok"))
    runtime = await open_runtime(flags=hooks(UserPromptSubmit={"command": command}))
    try:
        await runtime.submit(Prompt("hello"))
    finally:
        await runtime.close()
    (event,) = seen(log)
    assert event["transcript_path"] == str(
        Path(os.environ["CAIRN_HOME"]) / "transcripts" / f"{event['session_id']}.jsonl"
    )
    assert Path(event["transcript_path"]).exists()


async def test_session_end_runs_on_close_and_for_the_session_new_replaces(server, open_runtime, tmp_path):
    command, log = hook(tmp_path, "end")
    clear_only, clear_log = hook(tmp_path, "end-clear")
    server.add(text("one"), text("two"))
    flags = hooks(SessionEnd=[{"command": command}, {"command": clear_only, "matcher": "clear"}])
    runtime = await open_runtime(flags=flags)
    try:
        await runtime.submit(Prompt("first"))
        first = runtime.session.id
        await runtime.submit(NewSession())
        await runtime.submit(Prompt("second"))
        second = runtime.session.id
    finally:
        await runtime.close()
    await _until(lambda: len(seen(log)) == 2)
    assert sorted((e["session_id"], e["reason"]) for e in seen(log)) == sorted([(first, "clear"), (second, "other")])
    assert [(e["session_id"], e["reason"]) for e in seen(clear_log)] == [(first, "clear")]


async def test_session_start_matchers_select_by_source_and_a_compaction_starts_one(server, open_runtime, tmp_path):
    startup, startup_log = hook(tmp_path, "startup")
    after, after_log = hook(tmp_path, "after", "print('RE-READ: the plan is in PLAN.md')\n")
    server.add(text("First answer."), text("Second answer."), text("SUMMARY: all done."), text("ok"))
    flags = hooks(
        SessionStart=[{"command": startup, "matcher": "startup"}, {"command": after, "matcher": "clear|compact"}]
    )
    runtime = await open_runtime(flags=flags)
    try:
        await runtime.submit(Prompt("Set up the parser module"))
        await runtime.submit(Prompt("Now add tests for it"))
        await runtime.submit(Compact())
        await runtime.submit(Prompt("go on"))
    finally:
        await runtime.close()
    assert [(e["source"], e["model"]) for e in seen(startup_log)] == [("startup", "openai/fake-model")]
    assert [e["source"] for e in seen(after_log)] == ["compact"]
    assert "RE-READ: the plan is in PLAN.md" in server.requests[-1]["messages"][-1]["content"]


async def test_a_failed_call_runs_post_tool_use_failure_not_post_tool_use(server, open_runtime, tmp_path, workspace):
    context = {"hookSpecificOutput": {"hookEventName": "PostToolUseFailure", "additionalContext": "Try src/ instead."}}
    failed, failed_log = hook(tmp_path, "failed", f"print({json.dumps(context)!r})\n")
    post, post_log = hook(tmp_path, "post")
    read = ("c1", "filesystem-read", {"filePath": "missing.py"})
    server.add(tool_calls([read]), text("ok"))
    flags = hooks(PostToolUseFailure={"command": failed, "matcher": "Read"}, PostToolUse={"command": post})
    runtime = await open_runtime(flags=flags)
    try:
        await runtime.submit(Prompt("read it"))
    finally:
        await runtime.close()
    (event,) = seen(failed_log)
    assert event["tool_name"] == "Read" and event["tool_input"] == {"file_path": str(workspace / "missing.py")}
    assert event["tool_use_id"] == "c1" and "missing.py" in event["error"]
    assert seen(post_log) == []  # PostToolUse is for a result, as Claude Code's
    result = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")
    assert "[PostToolUseFailure hook]\nTry src/ instead." in result["content"]


def permission(behavior: str, message: str = "") -> str:
    decision = {"behavior": behavior, **({"message": message} if message else {})}
    output = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": decision}}
    return f"print({json.dumps(output)!r})\n"


@pytest.mark.parametrize("behavior", ["allow", "deny"])
async def test_a_permission_request_hook_answers_for_the_user(server, open_runtime, tmp_path, workspace, behavior):
    command, log = hook(tmp_path, "permission", permission(behavior, "not on Fridays"))
    asked = []

    async def approver(request):
        asked.append(request)
        return "once"

    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(
        yolo=False, approver=approver, flags=hooks(PermissionRequest={"command": command, "matcher": "Bash"})
    )
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    (event,) = seen(log)
    assert event["hook_event_name"] == "PermissionRequest" and event["tool_name"] == "Bash"
    assert event["tool_input"] == {"command": "touch made"}
    assert asked == []  # the hook answered; the user was not asked
    assert (workspace / "made").exists() == (behavior == "allow")
    if behavior == "deny":
        assert any("not on Fridays" in n.message for n in of_type(runtime.events, "notice"))


async def test_a_silent_permission_request_hook_leaves_the_question_to_the_user(
    server, open_runtime, tmp_path, workspace
):
    command, log = hook(tmp_path, "permission")
    asked = []

    async def approver(request):
        asked.append(request)
        return "deny"

    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(yolo=False, approver=approver, flags=hooks(PermissionRequest={"command": command}))
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    assert len(seen(log)) == 1 and len(asked) == 1 and not (workspace / "made").exists()


async def test_an_idle_notification_follows_a_finished_turn(server, open_runtime, tmp_path):
    idle, idle_log = hook(tmp_path, "idle")
    asking, asking_log = hook(tmp_path, "asking")
    server.add(text("Done."))
    flags = hooks(
        Notification=[{"command": idle, "matcher": "idle_prompt"}, {"command": asking, "matcher": "permission_prompt"}]
    )
    runtime = await open_runtime(flags=flags)
    runtime.agent.hooks.idle_after = 0.1  # Claude Code's is 60 s
    try:
        await runtime.submit(Prompt("hi"))
        await _until(lambda: bool(seen(idle_log)))
    finally:
        await runtime.close()
    (event,) = seen(idle_log)
    assert (event["notification_type"], event["message"]) == ("idle_prompt", "cairn is waiting for your input")
    assert seen(asking_log) == []


async def test_a_prompt_before_the_idle_time_cancels_the_idle_notification(server, open_runtime, tmp_path):
    idle, idle_log = hook(tmp_path, "idle")
    server.add(text("one"), text("two"))
    runtime = await open_runtime(flags=hooks(Notification={"command": idle}))
    runtime.agent.hooks.idle_after = 3600
    try:
        await runtime.submit(Prompt("hi"))
        await runtime.submit(Prompt("again"))
    finally:
        await runtime.close()
    assert seen(idle_log) == []


async def test_subagent_start_adds_context_and_subagent_stop_sends_the_child_back(server, open_runtime, tmp_path):
    context = {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "CHILD-RULE: cite lines"}}
    start, start_log = hook(tmp_path, "start", f"print({json.dumps(context)!r})\n")
    stop, stop_log = hook(
        tmp_path,
        "stop",
        "if not event['stop_hook_active']:\n    print('check the tests too', file=sys.stderr)\n    sys.exit(2)\n",
    )
    tool, tool_log = hook(tmp_path, "tool")  # the child's own tool hooks write its transcript too
    call = ("s1", "subagent", {"agent": "general-purpose", "task": "count the files"})
    server.add(
        tool_calls([call]),
        tool_calls([("t1", "terminal-execute", {"command": "ls"})]),
        text("3 files"),
        tool_calls([("t2", "terminal-execute", {"command": "echo tests pass"})]),
        text("3 files, tests pass"),
        text("Done."),
    )
    flags = hooks(
        SubagentStart={"command": start, "matcher": "general-purpose"},
        SubagentStop={"command": stop},
        PreToolUse={"command": tool, "matcher": "Bash"},
    )
    runtime = await open_runtime(flags=flags)
    try:
        await runtime.submit(Prompt("look around"))
    finally:
        await runtime.close()
    (started,) = seen(start_log)
    assert started["agent_type"] == "general-purpose" and started["agent_id"]
    assert "CHILD-RULE: cite lines" in server.requests[1]["messages"][0]["content"]  # the child's instructions
    first, second = seen(stop_log)
    assert (first["stop_hook_active"], second["stop_hook_active"]) == (False, True)
    assert (first["last_assistant_message"], second["last_assistant_message"]) == ("3 files", "3 files, tests pass")
    assert first["agent_id"] == started["agent_id"]
    assert "check the tests too" in server.requests[3]["messages"][-1]["content"]
    result = next(m for m in server.requests[5]["messages"] if m["role"] == "tool")
    assert result["content"] == "3 files, tests pass"
    # The child's transcript: every message once, though its hooks and the parent's both wrote it.
    child = [json.loads(line) for line in Path(second["agent_transcript_path"]).read_text().splitlines()]
    assert [e["transcript_path"] for e in seen(tool_log)] == [second["agent_transcript_path"]] * 2
    assert len({r["uuid"] for r in child}) == len(child) == 8
    assert all(r["isSidechain"] for r in child)
    assert child[-1]["message"]["content"] == [{"type": "text", "text": "3 files, tests pass"}]


async def test_a_matcher_naming_a_tool_cairn_lacks_is_a_startup_warning(open_runtime, tmp_path):
    entries = [
        {"command": "true # notebook", "matcher": "NotebookEdit"},
        {"command": "true # both", "matcher": "Edit|NotebookEdit"},
        {"command": "true # typo", "matcher": "Bsh"},
        {"command": "true # regex", "matcher": "Notebook.*"},
        {"command": "true # fine", "matcher": "Bash|Write"},
        {"command": "true # mcp", "matcher": "mcp__github__.*"},
    ]
    runtime = await open_runtime(flags=hooks(PreToolUse=entries))
    await runtime.close()
    warned = [n.message for n in of_type(runtime.events, "notice") if n.kind == "warning"]
    assert any("true # notebook" in w and "NotebookEdit" in w and "never runs" in w for w in warned), warned
    assert any("true # both" in w and "does not run for NotebookEdit" in w for w in warned), warned
    assert any("true # typo" in w and "'Bsh'" in w for w in warned), warned
    assert any("true # regex" in w and "matches none of cairn's tools" in w for w in warned), warned
    assert not any("true # fine" in w or "true # mcp" in w for w in warned), warned


async def test_a_session_start_hook_writing_claude_env_file_is_told_what_cairn_does_not_apply(
    server, open_runtime, tmp_path, workspace
):
    """As Claude Code documents it, a SessionStart hook appends `export` lines to
    `$CLAUDE_ENV_FILE`; cairn gives it a file (the hook does not fail) and says the variables
    do not reach the model's commands, rather than dropping them without a word."""
    command = 'echo "export NODE_ENV=test" >> "$CLAUDE_ENV_FILE"; echo "$CLAUDE_PROJECT_DIR" > ' + str(
        tmp_path / "project"
    )
    server.add(text("ok"))
    runtime = await open_runtime(flags=hooks(SessionStart={"command": command}))
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    warned = [n.message for n in of_type(runtime.events, "notice") if n.kind == "warning"]
    assert any("NODE_ENV" in w and "CLAUDE_ENV_FILE" in w for w in warned), warned
    assert not any("failed" in w for w in warned), warned
    assert (tmp_path / "project").read_text() == f"{workspace}\n"


@pytest.mark.parametrize("behavior", ["allow", "deny"])
async def test_with_nobody_to_ask_a_permission_request_hook_still_answers(
    server, open_runtime, tmp_path, workspace, behavior
):
    """As Claude Code's `-p` (since 2.1.268): no approver, and the hook decides; without its
    answer the call does not run (the silent-hook case below)."""
    command, log = hook(tmp_path, "permission", permission(behavior, "not in CI"))
    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(yolo=False, flags=hooks(PermissionRequest={"command": command}))
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    assert len(seen(log)) == 1
    assert (workspace / "made").exists() == (behavior == "allow")


async def test_with_nobody_to_ask_a_silent_permission_request_hook_leaves_the_call_refused(
    server, open_runtime, tmp_path, workspace
):
    command, log = hook(tmp_path, "permission")
    server.add(tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("ok"))
    runtime = await open_runtime(yolo=False, flags=hooks(PermissionRequest={"command": command}))
    try:
        await runtime.submit(Prompt("make it"))
    finally:
        await runtime.close()
    assert len(seen(log)) == 1 and not (workspace / "made").exists()


@pytest.mark.parametrize(("variable", "shown"), [(None, "1.5"), ("200", "0.2")])
async def test_session_end_hooks_hold_the_exit_only_for_claude_codes_budget(
    server, open_runtime, tmp_path, monkeypatch, variable, shown
):
    """A SessionEnd hook with no `timeout` of its own gets Claude Code's 1.5 s (or
    CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS), not the 60 s other hooks get: closing waits no longer."""
    if variable is not None:
        monkeypatch.setenv("CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS", variable)
    runtime = await open_runtime(flags=hooks(SessionEnd={"command": "sleep 30"}))
    await runtime.close()
    warned = [n.message for n in of_type(runtime.events, "notice") if n.kind == "warning"]
    assert any(f"SessionEnd hook `sleep 30` timed out after {shown} s" in w for w in warned), warned


@pytest.mark.parametrize("behavior", ["allow", None])
async def test_a_subagents_call_reaches_the_permission_request_hook_once_with_its_input(
    server, open_runtime, tmp_path, workspace, behavior
):
    command, log = hook(tmp_path, "permission", permission(behavior) if behavior else "")
    call = ("s1", "subagent", {"agent": "general-purpose", "task": "make the file"})
    server.add(
        tool_calls([call]),
        tool_calls([("t1", "terminal-execute", {"command": "touch made"})]),
        text("made it"),
        text("Done."),
    )
    runtime = await open_runtime(yolo=False, flags=hooks(PermissionRequest={"command": command}))
    try:
        await runtime.submit(Prompt("delegate"))
    finally:
        await runtime.close()
    assert [(e["tool_name"], e["tool_input"]) for e in seen(log)] == [("Bash", {"command": "touch made"})]
    assert (workspace / "made").exists() == (behavior == "allow")
