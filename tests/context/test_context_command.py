"""`cairn context SESSION_ID`: the report of SPEC §11 for a stored session."""

from __future__ import annotations

import json
import sqlite3

from agent.paths import db_path
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.test_cli import CAIRN, pytestmark, run  # noqa: F401 - same skip rule as the CLI tests

MINUTE = 60_000


def _session_with_an_old_command(workspace):
    with FakeLLMServer(
        [
            tool_calls([("c1", "terminal-execute", {"command": "echo built"})]),
            text("Built."),
        ]
    ) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            "k",
            "--cwd",
            str(workspace),
            "--yolo",
            "-p",
            "build it",
        )
    assert out.returncode == 0, out.stderr
    conn = sqlite3.connect(db_path())
    session_id = conn.execute("SELECT id FROM sessions").fetchone()[0]
    result_ms = conn.execute("SELECT created_at FROM messages WHERE role = 'tool'").fetchone()[0]
    return session_id, result_ms


def test_json_report_shape_and_dump(workspace):
    session_id, result_ms = _session_with_an_old_command(workspace)
    out = run("context", session_id[:8], "--json", "--dump", "--at", str(result_ms + MINUTE))
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["session_id"] == session_id and report["now_ms"] == result_ms + MINUTE
    assert set(report["tokens"]) == {"system", "tools", "messages", "total"}
    assert report["tokens"]["total"] == sum(report["tokens"][k] for k in ("system", "tools", "messages"))
    assert report["window"] > 0 and 0 < report["threshold"] <= report["window"]
    assert [p["name"] for p in report["passes"]] == [
        "active_path",
        "orphans",
        "terminal_outdated",
        "file_reads",
        "stale_file_results",
        "externalize",
    ]
    assert all(set(p) == {"name", "changed", "tokens_before", "tokens_after"} for p in report["passes"])
    roles = [m["role"] for m in report["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]


def test_at_reproduces_the_time_based_pass(workspace):
    """Six successful commands: the oldest is outside the newest 5, so it is replaced only
    once it is more than 15 minutes old — `--at` decides which."""
    calls = [(f"c{i}", "terminal-execute", {"command": f"echo {i}"}) for i in range(6)]
    with FakeLLMServer([tool_calls(calls), text("done")]) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            "k",
            "--cwd",
            str(workspace),
            "--yolo",
            "-p",
            "run six",
        )
    assert out.returncode == 0, out.stderr
    conn = sqlite3.connect(db_path())
    session_id = conn.execute("SELECT id FROM sessions").fetchone()[0]
    newest = conn.execute("SELECT MAX(created_at) FROM messages WHERE role = 'tool'").fetchone()[0]

    def terminal_pass(at):
        report = json.loads(run("context", session_id, "--json", "--dump", "--at", str(at)).stdout)
        return next(p for p in report["passes"] if p["name"] == "terminal_outdated"), report["messages"]

    soon, _ = terminal_pass(newest + MINUTE)
    later, messages = terminal_pass(newest + 16 * MINUTE)
    assert soon["changed"] == 0
    assert later["changed"] == 1 and later["tokens_after"] < later["tokens_before"]
    tool_contents = [m["content"] for m in messages if m["role"] == "tool"]
    assert tool_contents[0] == "此命令返回内容已过时"
    assert all(c != "此命令返回内容已过时" for c in tool_contents[1:])


def test_text_report_and_unknown_session(workspace):
    session_id, _ = _session_with_an_old_command(workspace)
    out = run("context", session_id)
    assert out.returncode == 0 and "terminal_outdated" in out.stdout and "condense at" in out.stdout
    missing = run("context", "nope")
    assert missing.returncode == 2 and "no session matches" in missing.stderr


def test_report_lists_context_events_and_flags_an_over_budget_request():
    from agent.context.inspect import format_report

    report = {
        "session_id": "s1",
        "model": "m",
        "window": 10_000,
        "threshold": 8_000,
        "allowed": 7_000,
        "tokens": {"system": 500, "tools": 500, "messages": 7_500, "total": 8_500},
        "passes": [],
        "events": [
            {
                "created_at": 0,
                "action": "condense",
                "trigger": "auto",
                "outcome": "failed",
                "tokens_before": 9_000,
                "tokens_after": 9_000,
                "duration_ms": 1_200,
                "error": "Condensing failed: provider down",
                "detail": {},
            },
            {
                "created_at": 0,
                "action": "truncate",
                "trigger": "auto",
                "outcome": "ok",
                "tokens_before": 9_000,
                "tokens_after": 4_500,
                "duration_ms": 30,
                "error": None,
                "detail": {"messages_deleted": 12, "calls_removed": 3, "results_folded": 1},
            },
        ],
    }
    text = format_report(report)
    assert "over the budget" in text
    assert "0/1 condenses succeeded, 1 truncations" in text
    assert "Condensing failed: provider down" in text
    assert "12 messages left out, 3 tool calls dropped, 1 file reads folded" in text
    truncate_line = next(line for line in text.splitlines() if line.strip().split()[2:3] == ["truncate"])
    assert "9,000" in truncate_line and "4,500" in truncate_line and "50%" in truncate_line
    del report["events"]
    report["tokens"]["total"] = 1_000
    assert "over the budget" not in format_report(report) and "condenses succeeded" not in format_report(report)


def test_the_last_request_is_exactly_what_the_provider_received(workspace):
    (workspace / "a.py").write_text("x = 1\n")
    with FakeLLMServer(
        [
            tool_calls([("c1", "filesystem-read", {"filePath": "a.py"})]),
            text("x is 1."),
        ]
    ) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            "k",
            "--cwd",
            str(workspace),
            "--yolo",
            "-p",
            "what is x?",
        )
        received = srv.requests[-1]
    assert out.returncode == 0, out.stderr
    session_id = sqlite3.connect(db_path()).execute("SELECT id FROM sessions").fetchone()[0]
    report = json.loads(run("context", session_id, "--json", "--dump").stdout)
    last = report["last_request"]
    # The openai SDK leaves out null fields on the wire (an assistant's `content: None`).
    assert without_nulls(last["messages"]) == received["messages"]
    assert last["model"] == "openai/fake" and last["message_count"] == len(received["messages"])
    assert [t["function"]["name"] for t in received["tools"]] and last["tokens"] > 0
    # The next request is that one plus the answer (and a stable prefix: nothing held, nothing applied).
    assert without_nulls(report["messages"][: len(received["messages"])]) == received["messages"]
    assert report["cache"]["policy"] == "auto" and report["cache"]["held"] == 0
    text_report = run("context", session_id).stdout
    assert "last request sent" in text_report and f"{last['message_count']} messages" in text_report


def without_nulls(messages: list[dict]) -> list[dict]:
    return [{k: v for k, v in m.items() if v is not None} for m in messages]
