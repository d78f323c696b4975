"""`--output-format stream-json` and `--input-format stream-json` through the installed `cairn -p`
(docs/headless.md): events as they happen, multi-turn on stdin, the final `result` line."""

from __future__ import annotations

import json

from tests.fakes.llm_server import FakeLLMServer, rate_limited, text, tool_calls
from tests.headless.helpers import FAST_RETRIES, base_args, cairn, events, needs_cairn, write_user_config

pytestmark = needs_cairn


def test_text_tool_call_retry_and_condense_as_events(workspace, _isolated_home):
    """One run, two turns: a rate-limited request retried, a tool call and its result, text
    deltas, usage; then `/compact` from stdin: a condense with its summary; then the result."""
    write_user_config(_isolated_home, FAST_RETRIES)
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    with FakeLLMServer(
        [
            rate_limited(retry_after=0),
            tool_calls([("c1", "filesystem-read", {"filePath": "notes.txt"})], text="Reading."),
            text("The notes say alpha and beta.", chunk_size=6),
            text("SUMMARY: read notes.txt"),
        ]
    ) as srv:
        stdin = json.dumps({"type": "user", "text": "/compact keep file names"}) + "\n"
        out = cairn(
            *base_args(srv, workspace),
            "-p",
            "read notes.txt",
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            stdin=stdin,
        )
    assert out.returncode == 0, out.stderr
    lines = events(out.stdout)
    types = [e["type"] for e in lines]
    assert types[0] == "session" and types[-1] == "result"
    session = lines[0]
    assert session["model"] == "openai/fake-model" and session["session_id"] and session["schema"] == 1
    retry = next(e for e in lines if e["type"] == "retry")
    assert retry["attempt"] == 1 and "Rate limited" in retry["reason"]
    call = next(e for e in lines if e["type"] == "tool_call")
    assert call == {"type": "tool_call", "id": "c1", "name": "filesystem-read", "arguments": {"filePath": "notes.txt"}}
    result = next(e for e in lines if e["type"] == "tool_result")
    assert result["id"] == "c1" and result["status"] == "ok" and "alpha" in result["content"]
    # The tool call comes before its result, the retry before both; deltas build the answer.
    assert types.index("retry") < types.index("tool_call") < types.index("tool_result")
    deltas = "".join(e["text"] for e in lines if e["type"] == "text")
    assert "The notes say alpha and beta." in deltas
    usage = [e for e in lines if e["type"] == "usage"]
    assert len(usage) == 2 and all(u["prompt_tokens"] and u["completion_tokens"] for u in usage)
    context = next(e for e in lines if e["type"] == "context")
    assert context["action"] == "condense" and context["trigger"] == "manual" and context["outcome"] == "ok"
    assert context["summary"]["text"].startswith("SUMMARY")
    assert [e["status"] for e in lines if e["type"] == "turn_end"] == ["ok", "ok"]
    final = lines[-1]
    assert final["status"] == "ok" and final["exit_code"] == 0 and final["session_id"] == session["session_id"]
    assert final["requests"] == 2
    # Every line is one JSON object written as it happened: nothing else on stdout.
    assert all(isinstance(e, dict) and "type" in e for e in lines)


def test_multi_turn_on_stdin_keeps_one_session(workspace):
    with FakeLLMServer([text("one"), text("two"), text("three")]) as srv:
        stdin = (
            "\n".join(
                [
                    json.dumps({"type": "user", "text": "second"}),
                    "",
                    "not json",
                    json.dumps(
                        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "third"}]}}
                    ),
                ]
            )
            + "\n"
        )
        out = cairn(
            *base_args(srv, workspace),
            "-p",
            "first",
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            stdin=stdin,
        )
        requests = srv.requests
    assert out.returncode == 0, out.stderr
    lines = events(out.stdout)
    assert [e["text"] for e in lines if e["type"] == "user"] == ["first", "second", "third"]
    assert any(e["type"] == "error" and "stdin line 3" in e["message"] for e in lines)
    # Each turn sent the conversation so far: one session.
    assert [m["content"] for m in requests[-1]["messages"] if m["role"] == "user"] == ["first", "second", "third"]
    assert lines[-1]["type"] == "result" and lines[-1]["text"] == "three"


def test_prompt_may_be_empty_with_stdin_input(workspace):
    with FakeLLMServer([text("hello back")]) as srv:
        out = cairn(
            *base_args(srv, workspace),
            "-p",
            "",
            "--output-format",
            "stream-json",
            "--input-format",
            "stream-json",
            stdin=json.dumps({"type": "user", "text": "hello"}) + "\n",
        )
    assert out.returncode == 0, out.stderr
    assert [e["text"] for e in events(out.stdout) if e["type"] == "user"] == ["hello"]


def test_error_ends_the_run_with_a_result_line(workspace):
    from tests.fakes.llm_server import error

    with FakeLLMServer([error(401)]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hi", "--output-format", "stream-json")
    assert out.returncode == 1
    final = events(out.stdout)[-1]
    assert final["type"] == "result" and final["status"] == "error" and final["exit_code"] == 1
    assert "Authentication failed" in final["message"] and "Traceback" not in out.stderr


def test_no_model_still_ends_with_a_result_line(workspace):
    out = cairn("--cwd", str(workspace), "-p", "hi", "--output-format", "stream-json")
    assert out.returncode == 2
    [final] = events(out.stdout)
    assert {k: final[k] for k in ("type", "status", "exit_code", "session_id", "requests", "run_cost", "text")} == {
        "type": "result",
        "status": "error",
        "exit_code": 2,
        "session_id": None,
        "requests": 0,
        "run_cost": 0.0,
        "text": "",
    }
    assert "no model configured" in final["message"]
    assert (final["subtype"], final["is_error"], final["result"]) == ("error_during_execution", True, "")


def test_stream_json_input_needs_stream_json_output(workspace):
    out = cairn("--cwd", str(workspace), "-p", "hi", "--input-format", "stream-json")
    assert out.returncode == 2 and "needs --output-format stream-json" in out.stderr


def test_sigterm_mid_request_ends_with_a_result_line(workspace):
    import os
    import signal
    import subprocess

    from tests.fakes.llm_server import hang
    from tests.headless.helpers import CAIRN, TIMEOUT

    with FakeLLMServer([hang(300, text="thinking")]) as srv:
        proc = subprocess.Popen(
            [str(CAIRN), *base_args(srv, workspace), "-p", "think", "--output-format", "stream-json"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        srv.wait_for_requests(1, timeout=TIMEOUT)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 128 + signal.SIGTERM, err
    final = events(out)[-1]
    assert final["type"] == "result" and final["status"] == "interrupted" and final["exit_code"] == 143
