"""Headless output shaped as Claude Code's (issue 46): `--output-format json` is ONE object
(`jq -r .result` is the answer), stream-json's last line carries the same keys, and cairn's
own keys stay beside them."""

from __future__ import annotations

import json

from agent.headless.result import RunTally
from agent.session.models import Message, ToolCall
from agent.turn.events import AssistantFinished, LimitReached, ToolFinished, TurnFinished, UserMessage
from tests.fakes.llm_server import FakeLLMServer, error, text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn

CLAUDE_CODE_KEYS = {
    "type",
    "subtype",
    "is_error",
    "duration_ms",
    "duration_api_ms",
    "num_turns",
    "result",
    "session_id",
    "total_cost_usd",
    "usage",
    "permission_denials",
}
USAGE_KEYS = {"input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"}


@needs_cairn
def test_json_is_one_claude_code_result_object(workspace):
    with FakeLLMServer(
        [
            tool_calls([("c1", "filesystem-read", {"filePath": "notes.txt"})]),
            text("The notes say alpha."),
        ]
    ) as srv:
        (workspace / "notes.txt").write_text("alpha\n")
        out = cairn("-p", "--output-format", "json", *base_args(srv, workspace), "read notes.txt")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)  # one object: the whole of stdout parses
    assert result.keys() >= CLAUDE_CODE_KEYS and result["usage"].keys() >= USAGE_KEYS
    assert result["type"] == "result" and result["subtype"] == "success" and result["is_error"] is False
    assert result["result"] == "The notes say alpha." == result["text"]
    assert result["num_turns"] == 2 == result["requests"]
    assert result["usage"]["output_tokens"] > 0 and result["usage"]["input_tokens"] > 0
    assert result["duration_ms"] >= result["duration_api_ms"] >= 0
    # an unpriced model: 0 that is not "free"
    assert result["total_cost_usd"] == 0 and result["cost_known"] is False
    assert result["unpriced_models"] == ["openai/fake-model"]
    # cairn's own: every stored message, and the exit code
    assert result["exit_code"] == 0 and result["status"] == "ok"
    assert [m["role"] for m in result["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert all(m["session_id"] == result["session_id"] for m in result["messages"])


@needs_cairn
def test_json_on_an_error_is_still_one_object(workspace):
    with FakeLLMServer([error(401)]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hi", "--output-format", "json")
    assert out.returncode == 1
    result = json.loads(out.stdout)
    assert result["is_error"] is True and result["subtype"] == "error_during_execution"
    assert "Authentication failed" in result["errors"][0] and result["exit_code"] == 1


@needs_cairn
def test_json_without_a_model_is_one_object(workspace):
    out = cairn("--cwd", str(workspace), "-p", "hi", "--output-format", "json")
    assert out.returncode == 2
    result = json.loads(out.stdout)
    assert result["is_error"] is True and result["session_id"] is None and result["messages"] == []


@needs_cairn
def test_stream_json_result_line_has_claude_codes_keys(workspace):
    with FakeLLMServer([text("hello back")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hi", "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    lines = events(out.stdout)
    final = lines[-1]
    assert final.keys() >= CLAUDE_CODE_KEYS
    assert final["result"] == "hello back" == final["text"]
    assert final["session_id"] == lines[0]["session_id"] and final["total_cost_usd"] == 0
    assert final["subtype"] == "success" and final["run_cost"] == 0.0 and "messages" not in final


def _answer(content: str, *, cost: float, model: str = "anthropic/claude-sonnet-4-5", calls=()) -> Message:
    usage = {"prompt_tokens": 1000, "completion_tokens": 50, "cache_read_tokens": 600, "cache_write_tokens": 100}
    return Message(
        role="assistant", content=content, tool_calls=list(calls), meta={"usage": usage, "cost": cost, "model": model}
    )


def test_the_tally_sums_usage_in_claude_codes_terms():
    ticks = iter([0.0, 1.0, 3.0, 3.5, 4.0, 10.0])
    tally = RunTally(clock=lambda: next(ticks))  # started at 0
    call = ToolCall(id="c1", name="terminal-execute", arguments='{"command": "rm -rf /"}')
    tally(UserMessage(message=Message(role="user", content="go")))  # asked at 1
    tally(AssistantFinished(message=_answer("", cost=0.01, calls=[call])))  # answered at 3
    refused = Message(role="tool", content="no", meta={"permission": {"decision": "refused"}})
    tally(ToolFinished(call=call, message=refused))  # asked again at 3.5
    tally(AssistantFinished(message=_answer("done", cost=0.02)))  # answered at 4
    tally(TurnFinished(status="ok"))
    result = tally.result(exit_code=0, session_id="s")  # now: 10
    assert result["usage"] == {
        "input_tokens": 600,  # uncached input only, as Anthropic counts it
        "cache_creation_input_tokens": 200,
        "cache_read_input_tokens": 1200,
        "output_tokens": 100,
    }
    assert result["duration_ms"] == 10_000 and result["duration_api_ms"] == 2_500
    assert result["total_cost_usd"] == 0.03 and result["cost_known"] is True and "unpriced_models" not in result
    assert result["permission_denials"] == [
        {"tool_name": "terminal-execute", "tool_use_id": "c1", "tool_input": {"command": "rm -rf /"}}
    ]
    assert result["result"] == "done" and result["num_turns"] == 2


def test_a_limit_is_claude_codes_error_subtype():
    for limit, subtype, code in (
        ("max_turns", "error_max_turns", 3),
        ("max_cost", "error_max_budget_usd", 4),
        ("tool_disallowed", "error_during_execution", 6),
    ):
        tally = RunTally()
        tally(LimitReached(limit=limit, message="Stopped: …", exit_code=code, tool_call_id=None))
        result = tally.result(exit_code=code, session_id="s")
        assert (result["subtype"], result["is_error"], result["status"], result["limit"]) == (
            subtype,
            True,
            "limit",
            limit,
        )
