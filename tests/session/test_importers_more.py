"""Issue 17, "Import: every common agent format, never lossy in silence": Cline (Anthropic
content blocks), SWE-agent `.traj`, mini-swe-agent `.traj.json` and Codex CLI rollouts are
imported with their tool calls and results paired, and `cairn session import` reports what
it imported and what it skipped, with reasons."""

from __future__ import annotations

import argparse
import json

import pytest

from agent.session import cli as session_cli
from agent.session.importers import detect_format, import_session, parse_any
from agent.session.loading import load_session_messages, tool_result_ids, tool_use_ids
from tests.conftest import SHARED

TRANSCRIPTS = SHARED / "fixtures" / "transcripts"
CLINE = TRANSCRIPTS / "cline" / "cline__cline__session.messages.json"
SWE = TRANSCRIPTS / "swe-agent" / "SWE-agent__SWE-agent__i_got_id_demo.traj"


def _calls(imported):
    return [tc for m in imported.messages for tc in m.tool_calls]


def _results(imported):
    return [m for m in imported.messages if m.role == "tool"]


async def _survives_loading(store, imported):
    """Every call has its result, so seed 002's load view drops nothing."""
    session = await import_session(store, imported, cwd_default="/w")
    loaded = await load_session_messages(store, session.id)
    assert loaded == await store.active_path(session.id)
    assert tool_use_ids(loaded) == tool_result_ids(loaded)
    return loaded


# -- Cline: Anthropic content blocks ---------------------------------------------------------------


@pytest.mark.skipif(not CLINE.exists(), reason=f"shared Cline transcript not found at {CLINE}")
async def test_cline_fixture_keeps_tool_use_and_tool_result_blocks(store):
    text = CLINE.read_text("utf-8")
    raw = json.loads(text)["messages"]
    blocks = [b for m in raw if isinstance(m["content"], list) for b in m["content"]]
    uses = [b for b in blocks if b["type"] == "tool_use"]
    results = [b for b in blocks if b["type"] == "tool_result"]
    assert len(uses) == len(results) == 11

    assert detect_format(text) == "openai"
    imported = parse_any(text)
    calls = _calls(imported)
    assert [c.id for c in calls] == [b["id"] for b in uses]
    assert [c.name for c in calls] == [b["name"] for b in uses]
    assert [json.loads(c.arguments) for c in calls] == [b["input"] for b in uses]
    tools = _results(imported)
    assert [t.tool_call_id for t in tools] == [b["tool_use_id"] for b in results]
    assert all(t.tool_name == b["name"] for t, b in zip(tools, results, strict=False))
    by_id = {m.id: m for m in imported.messages}
    for tool in tools:  # each result follows the assistant message that made the call
        parent = by_id[tool.parent_id]
        while parent.role == "tool":
            parent = by_id[parent.parent_id]
        assert tool.tool_call_id in {c.id for c in parent.tool_calls}
    assert all(t.content for t in tools) and imported.model == "anthropic/claude-opus-4.8-fast"
    assert (
        imported.messages[0].content.startswith("can you update") and "[file: /Users/" in imported.messages[0].content
    )
    assert {
        "where": "header",
        "what": "system prompt",
        "reason": "cairn builds its own system prompt",
    } in imported.skipped
    assert len(await _survives_loading(store, imported)) == len(imported.messages)


def test_anthropic_blocks_errors_images_and_unknown_blocks():
    text = json.dumps(
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "look"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0"}},
                    ],
                },
                {
                    "role": "assistant",
                    "content": [
                        {"type": "thinking", "thinking": "hmm"},
                        {"type": "text", "text": "Running."},
                        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}},
                        {"type": "tool_use", "id": "t2", "name": "read", "input": {"path": "x"}},
                    ],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": "boom", "is_error": True},
                        {
                            "type": "tool_result",
                            "tool_use_id": "t2",
                            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
                        },
                        {"type": "text", "text": "and now?"},
                        {"type": "audio", "data": "…"},
                    ],
                },
            ]
        }
    )
    imported = parse_any(text)
    user, assistant, r1, r2, follow, note = imported.messages
    assert user.content == "look\n[image]" and user.meta["images"][0]["source"]["media_type"] == "image/png"
    assert assistant.content == "Running." and assistant.meta["thinking"] == "hmm"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in assistant.tool_calls] == [
        ("t1", "terminal-execute", {"command": "ls"}),
        ("t2", "read", {"path": "x"}),
    ]
    assert (r1.tool_call_id, r1.tool_name, r1.status, r1.content) == ("t1", "terminal-execute", "error", "Error: boom")
    assert (r2.tool_call_id, r2.status, r2.content) == ("t2", "ok", "one\ntwo")
    assert follow.role == "user" and follow.content == "and now?"
    assert note.kind == "note" and '"audio"' in note.content
    assert any(s["what"] == "audio block" for s in imported.skipped)


# -- SWE-agent --------------------------------------------------------------------------------------


@pytest.mark.skipif(not SWE.exists(), reason=f"shared SWE-agent trajectory not found at {SWE}")
async def test_swe_agent_fixture_actions_become_paired_tool_calls(store):
    text = SWE.read_text("utf-8")
    data = json.loads(text)
    assert detect_format(text) == "swe-agent"
    imported = parse_any(text)
    actions = [m["action"].strip() for m in data["history"] if m["role"] == "assistant"]
    calls = _calls(imported)
    # every action but the last (`submit`, which has no observation) is a tool call with its result
    assert [json.loads(c.arguments)["command"] for c in calls] == actions[:-1]
    assert all(c.name == "terminal-execute" for c in calls)
    observations = [m["content"] for m in data["history"][3::2]]
    assert [t.content for t in _results(imported)] == observations
    assert [t.tool_call_id for t in _results(imported)] == [c.id for c in calls]
    assert imported.messages[-2].meta["action"] == actions[-1]
    note = imported.messages[-1]
    assert note.kind == "note" and "FLAG{p3rl_6_iz_EVEN_BETTER!!1}" in note.content
    whats = [s["what"] for s in imported.skipped]
    assert "system message" in whats and "action without an observation" in whats and "21 steps" in whats
    await _survives_loading(store, imported)


# -- mini-swe-agent (written from docs/usage/output_files.md: no real file in ../shared) -----------

MINI = {
    "info": {
        "exit_status": "Submitted",
        "submission": "diff --git a/x b/x\n",
        "mini_version": "1.9.0",
        "model_stats": {"instance_cost": 0.01, "api_calls": 3},
        "config": {"model": {"model_name": "claude-sonnet-4"}},
    },
    "messages": [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
        {"role": "user", "content": "Please solve this issue: x is broken"},
        {"role": "assistant", "content": "THOUGHT: look first.\n\n```bash\nls -la\n```"},
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nx\n</output>"},
        {"role": "assistant", "content": "THOUGHT: two at once.\n\n```bash\nls\n```\n```bash\npwd\n```"},
        {"role": "user", "content": "Please always provide EXACTLY ONE action in triple backticks."},
        {"role": "assistant", "content": "THOUGHT: run it.\n\n```bash\npython x.py\n```"},
        {"role": "user", "content": "<returncode>1</returncode>\n<output>\nTraceback\n</output>"},
        {
            "role": "assistant",
            "content": "Done.\n\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff\n```",
        },
        {
            "role": "exit",
            "content": "diff --git a/x b/x\n",
            "extra": {"exit_status": "Submitted", "submission": "diff --git a/x b/x\n"},
        },
    ],
    "trajectory_format": "mini-swe-agent-1",
}


async def test_mini_swe_agent_commands_results_and_the_exit_message(store):
    text = json.dumps(MINI)
    assert detect_format(text) == "mini-swe-agent"
    imported = parse_any(text)
    calls, results = _calls(imported), _results(imported)
    assert [json.loads(c.arguments)["command"] for c in calls] == ["ls -la", "python x.py"]
    assert [r.tool_call_id for r in results] == [c.id for c in calls]
    assert [(r.status, r.meta["exitCode"]) for r in results] == [("ok", 0), ("error", 1)]
    assert results[1].content.startswith("Error:") and "Traceback" in results[1].content
    format_error = next(m for m in imported.messages if "EXACTLY ONE" in (m.content or ""))
    assert format_error.role == "user" and format_error.kind == "message"
    exit_note = imported.messages[-1]
    assert exit_note.kind == "note" and exit_note.content.startswith("[exit: Submitted]")
    assert imported.model == "claude-sonnet-4" and imported.title == "Please solve this issue: x is broken"
    whats = [s["what"] for s in imported.skipped]
    assert whats == ["system message", "command without an observation", "'exit' message"]
    await _survives_loading(store, imported)


def test_mini_swe_agent_tool_call_mode():
    data = {
        "messages": [
            {"role": "user", "content": "fix"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c9", "type": "function", "function": {"name": "bash", "arguments": '{"command": "false"}'}}
                ],
            },
            {"role": "tool", "tool_call_id": "c9", "content": "failed", "extra": {"returncode": 1}},
            {"role": "exit", "content": "", "extra": {"exit_status": "LimitsExceeded"}},
        ],
        "trajectory_format": "mini-swe-agent-1.1",
    }
    imported = parse_any(json.dumps(data))
    assert imported.source == "mini-swe-agent"
    [call] = _calls(imported)
    [result] = _results(imported)
    assert (call.id, call.name, result.tool_call_id, result.status) == ("c9", "terminal-execute", "c9", "error")
    assert imported.messages[-1].content == "[exit: LimitsExceeded]"


# -- Codex CLI rollouts (written from codex-rs/protocol: RolloutItem / ResponseItem) ----------------


def _codex(*records):
    return "".join(
        json.dumps({"timestamp": f"2025-10-29T00:59:{n:02d}.000Z", "type": t, "payload": p}) + "\n"
        for n, (t, p) in enumerate(records)
    )


CODEX = _codex(
    (
        "session_meta",
        {
            "id": "019a2d7a",
            "timestamp": "2025-10-29T00:59:38.308Z",
            "cwd": "/proj",
            "originator": "codex_cli_rs",
            "cli_version": "0.46.0",
            "instructions": None,
        },
    ),
    ("response_item", {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]}),
    (
        "response_item",
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<environment_context>\n<cwd>/proj</cwd>\n</environment_context>"}
            ],
        },
    ),
    (
        "response_item",
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run the tests"}]},
    ),
    ("event_msg", {"type": "user_message", "message": "run the tests", "kind": "plain"}),
    ("turn_context", {"cwd": "/proj", "approval_policy": "never", "model": "gpt-5-codex"}),
    (
        "response_item",
        {
            "type": "reasoning",
            "summary": [{"type": "summary_text", "text": "**Running tests**"}],
            "content": None,
            "encrypted_content": "gAAA",
        },
    ),
    (
        "response_item",
        {
            "type": "function_call",
            "name": "shell",
            "call_id": "call_1",
            "arguments": json.dumps({"command": ["bash", "-lc", "pytest -q"], "workdir": "/proj"}),
        },
    ),
    (
        "response_item",
        {
            "type": "function_call_output",
            "call_id": "call_1",
            "output": json.dumps({"output": "1 failed", "metadata": {"exit_code": 1, "duration_seconds": 0.5}}),
        },
    ),
    (
        "response_item",
        {
            "type": "custom_tool_call",
            "status": "completed",
            "call_id": "call_2",
            "name": "apply_patch",
            "input": "*** Begin Patch\n*** End Patch",
        },
    ),
    ("response_item", {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done!"}),
    (
        "response_item",
        {"type": "function_call", "name": "view_image", "call_id": "call_3", "arguments": '{"path":"a.png"}'},
    ),
    (
        "response_item",
        {"type": "function_call_output", "call_id": "call_3", "output": {"content": "no such file", "success": False}},
    ),
    ("response_item", {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "x"}}),
    (
        "response_item",
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "One test fails."}]},
    ),
)


async def test_codex_rollout_calls_results_and_skips(store):
    assert detect_format(CODEX) == "codex"
    imported = parse_any(CODEX)
    assert (imported.cwd, imported.model, imported.title) == ("/proj", "gpt-5-codex", "run the tests")
    calls, results = _calls(imported), _results(imported)
    assert [(c.id, c.name) for c in calls] == [
        ("call_1", "terminal-execute"),
        ("call_2", "apply_patch"),
        ("call_3", "view_image"),
    ]
    assert json.loads(calls[0].arguments) == {"command": "pytest -q", "cwd": "/proj"}
    assert [r.tool_call_id for r in results] == ["call_1", "call_2", "call_3"]
    assert json.loads(results[0].content) == {"command": "pytest -q", "stdout": "1 failed", "stderr": "", "exitCode": 1}
    assert [r.status for r in results] == ["error", "ok", "error"]
    assert results[2].content == "Error: no such file"
    assert imported.messages[2].meta["thinking"] == "**Running tests**"  # joined to the calling message
    # a call after a result starts the next response: one assistant message per call here
    assert [len(m.tool_calls) for m in imported.messages if m.role == "assistant" and m.kind == "message"] == [
        1,
        1,
        1,
        0,
    ]
    whats = {s["what"] for s in imported.skipped}
    assert {
        "1 × developer message",
        "1 × event_msg record",
        "1 × turn_context record",
        "1 × encrypted reasoning",
        "web_search_call item",
        "injected context (environment, instructions)",
    } <= whats
    assert imported.messages[-1].content == "One test fails."
    await _survives_loading(store, imported)


# -- the CLI report ---------------------------------------------------------------------------------


async def test_cli_import_reports_imported_and_skipped(tmp_path, workspace, capsys):
    path = tmp_path / "run.traj.json"
    data = json.loads(json.dumps(MINI))
    data["messages"].append({"role": "critic", "content": "meh"})
    path.write_text(json.dumps(data), "utf-8")

    args = argparse.Namespace(session_command="import", file=str(path), format="auto", json=True)
    capsys.readouterr()
    assert await session_cli._run(args, workspace) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"session_id", "imported", "skipped"} and out["format"] == "mini-swe-agent"
    assert out["imported"]["tool_calls"] == 2 and out["imported"]["tool_results"] == 2
    assert out["imported"]["tool_errors"] == 1 and out["imported"]["notes"] == 2
    reasons = {s["what"]: s["reason"] for s in out["skipped"]}
    assert reasons["system message"] == "cairn builds its own system prompt"
    assert reasons["'critic' message"] == "kept as a note message"
    assert "no result" in reasons["command without an observation"]

    args = argparse.Namespace(session_command="import", file=str(path), format="auto", json=False)
    assert await session_cli._run(args, workspace) == 0
    captured = capsys.readouterr()
    assert len(captured.out.strip().splitlines()) == 1  # stdout: the session id only
    assert "2 tool calls" in captured.err and "system message (cairn builds its own system prompt)" in captured.err
    assert "'critic' message (kept as a note message)" in captured.err
