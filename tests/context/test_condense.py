"""Condense (seed 001 §3.4.5) against the fake LLM server through real litellm."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agent.context.condense import (
    KEEP_RECENT_USER_TOKENS,
    CondenseError,
    condense,
    prepare_condense_request,
)
from agent.context.condense_prompt import SYNTHETIC_RESULT, TRIMMED_NOTE
from agent.context.files.refs import history_ref_id
from agent.session.models import Message, ToolCall
from tests.fakes.llm_server import error, text

MODEL = "openai/fake-model"
NOW = 1_700_000_000_000


def user(content: str, **kw) -> Message:
    return Message(role="user", content=content, session_id="s1", **kw)


def assistant(content: str | None = None, calls: list[tuple[str, str, dict]] = ()) -> Message:
    return Message(
        role="assistant",
        content=content,
        session_id="s1",
        tool_calls=[ToolCall(id=i, name=n, arguments=json.dumps(a)) for i, n, a in calls],
    )


def tool(call_id: str, name: str, content: str, status: str = "ok") -> Message:
    return Message(role="tool", tool_call_id=call_id, tool_name=name, content=content, status=status, session_id="s1")


def session_history() -> list[Message]:
    """A task, a command run, a reply: the smallest range with tools in it."""
    return [
        user("Fix the failing test in calc.py"),
        assistant("Running the tests.", [("c1", "terminal-execute", {"command": "pytest -q"})]),
        tool(
            "c1",
            "terminal-execute",
            json.dumps({"command": "pytest -q", "stdout": "1 failed", "stderr": "", "exitCode": 1}),
        ),
        assistant("The add() function subtracts; fixed it."),
    ]


async def run(server, history, workspace: Path, **kw):
    reply = kw.pop("reply", text("SUMMARY OF WORK"))
    if reply is not None:  # None: the condense must be refused before any model call
        server.add(reply)
    kw.setdefault("automatic", False)
    kw.setdefault("fold", lambda paths: "")
    return await condense(
        history, model=MODEL, api_base=server.base_url, api_key="sk-test", workspace=workspace, now_ms=NOW, **kw
    )


def request_text(server, index: int = -1) -> str:
    return "\n".join(m["content"] or "" for m in server.requests[index]["messages"])


async def test_too_few_messages_is_refused(server, workspace):
    with pytest.raises(CondenseError, match="Too few messages"):
        await run(server, [user("hi")], workspace, reply=None)
    summary = user("old summary", kind="summary")
    with pytest.raises(CondenseError, match="just condensed"):
        await run(server, [user("a"), summary, user("b")], workspace, reply=None)
    assert server.requests == []  # refused before any call


async def test_request_is_text_only_with_tool_calls_rendered(server, workspace):
    history = session_history() + [assistant(None, [("c2", "filesystem-read", {"filePath": "gone.py"})])]
    await run(server, history, workspace)
    body = server.requests[0]
    assert {m["role"] for m in body["messages"]} == {"system", "user"}
    assert "tools" not in body
    sent = request_text(server)
    assert "Fix the failing test in calc.py" in sent
    assert '[called terminal-execute: {"command": "pytest -q"}]' in sent
    assert "[error from terminal-execute:" not in sent and "[result of terminal-execute:" in sent
    assert "1 failed" in sent
    # the orphaned call (no result) gets a synthetic one
    assert f"[result of filesystem-read: {SYNTHETIC_RESULT}]" in sent


async def test_long_results_are_clipped_and_images_dropped(server, workspace):
    big = "x" * 50_000
    history = [
        user("look ![shot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==) here"),
        assistant("ok", [("c1", "terminal-execute", {"command": "cat big"})]),
        tool("c1", "terminal-execute", big),
        assistant("done"),
    ]
    await run(server, history, workspace)
    sent = request_text(server)
    assert "base64" not in sent and "[image omitted]" in sent
    assert "characters omitted" in sent and big not in sent


async def test_instructions_reach_the_request(server, workspace):
    result = await run(server, session_history(), workspace, instructions="focus on the calc module")
    assert "focus on the calc module" in request_text(server)
    assert result.summary.meta["condensed"]["instructions"] == "focus on the calc module"


async def test_command_blocks_are_kept(server, workspace):
    block = '<command name="review">\nReview every change for tests.\n</command>'
    history = [user(f"{block}\nstart reviewing")] + session_history()[1:]
    result = await run(server, history, workspace)
    assert block in result.summary.content
    assert "<system-reminder>\n## Active workflows" in result.summary.content


async def test_folded_context_of_read_files(server, workspace):
    (workspace / "calc.py").write_text(
        "class Calculator:\n    def add(self, a, b):\n        return a - b\n\ndef main():\n    pass\n"
    )
    history = [
        user("read calc"),
        assistant(None, [("r1", "filesystem-read", {"filePath": "calc.py"})]),
        tool("r1", "filesystem-read", "📄 calc.py (lines 1-6/6)\n1→class Calculator:"),
        assistant("Read it."),
    ]
    result = await run(server, history, workspace, fold=None)  # the real folder, tree-sitter included
    content = result.summary.content
    assert "## File Context: calc.py" in content and "Calculator" in content and "add" in content
    assert result.summary.meta["condensed"]["folded_files"] == ["calc.py"]
    assert "outlines of calc.py" in request_text(server)  # the summariser is told, not shown


async def test_recent_user_messages_kept_verbatim_and_not_summarised(server, workspace):
    latest = "Now also handle division by zero. " + "details " * 30 + "MIDDLE-MARKER " + "details " * 30
    history = session_history() + [user(latest), assistant("On it.")]
    request, replaced, kept = prepare_condense_request(
        history,
        instructions=None,
        workspace=workspace,
        automatic=False,
        folded_context="",
        keep_recent_user_tokens=70,
        count=lambda m: len((m.content or "").split()),
        max_request_tokens=10_000,
    )
    assert [m.content for m in kept] == [latest]  # 67 words; the older task does not fit the 3 left
    assert "MIDDLE-MARKER" not in request[-1]["content"]  # only a pointer in the transcript
    assert "kept verbatim after your summary" in request[-1]["content"]
    assert replaced == history  # still replaced: the summary holds it
    result = await run(server, history, workspace, keep_recent_user_tokens=200)
    assert latest.strip() in result.summary.content
    assert KEEP_RECENT_USER_TOKENS == 20_000


async def test_environment_details_only_when_automatic(server, workspace):
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q", "-b", "trunk", str(workspace)], check=True)
        (workspace / "new.txt").write_text("x")
    manual = await run(server, session_history(), workspace, automatic=False)
    auto = await run(server, session_history(), workspace, automatic=True)
    assert "## Environment" not in manual.summary.content
    assert "## Environment" in auto.summary.content
    assert f"Folder: {workspace}" in auto.summary.content and "Date: 2023-11-14" in auto.summary.content
    if shutil.which("git"):
        assert "Git branch: trunk" in auto.summary.content and "?? new.txt" in auto.summary.content
    assert auto.summary.meta["condensed"]["automatic"] is True


async def test_summary_message_shape(server, workspace):
    history = session_history()
    result = await run(server, history, workspace)
    s = result.summary
    assert (s.role, s.kind, s.created_at, s.parent_id, s.session_id) == ("user", "summary", NOW, history[-1].id, "s1")
    assert s.content.startswith("SUMMARY OF WORK")
    assert history_ref_id(history[0].id, history[-1].id) in s.content
    meta = s.meta["condensed"]
    assert {k: meta[k] for k in ("first_id", "last_id", "count", "automatic", "instructions")} == {
        "first_id": history[0].id,
        "last_id": history[-1].id,
        "count": 4,
        "automatic": False,
        "instructions": None,
    }
    assert (result.replaced_first_id, result.replaced_last_id) == (history[0].id, history[-1].id)
    assert meta["tokens_before"] == result.tokens_before > 0 and meta["tokens_after"] == result.tokens_after > 0
    # the archive holds every message whole, tool output included
    assert "Fix the failing test" in result.history_text and '\\"exitCode\\": 1' not in result.history_text
    assert '"exitCode": 1' in result.history_text and "terminal-execute" in result.history_text


async def test_second_condense_covers_only_what_came_after(server, workspace):
    first = session_history()
    one = await run(server, first, workspace, reply=text("FIRST SUMMARY"))
    after = [user("Now add multiply()"), assistant("Added multiply()."), user("thanks"), assistant("welcome")]
    history = first + [one.summary] + after
    two = await run(server, history, workspace, reply=text("SECOND SUMMARY"))
    sent = request_text(server)
    assert "Previous summary" in sent and "FIRST SUMMARY" in sent
    assert "pytest -q" not in sent and "Now add multiply()" in sent
    assert (two.replaced_first_id, two.replaced_last_id) == (after[0].id, after[-1].id)
    assert two.summary.meta["condensed"]["count"] == 4
    assert "FIRST SUMMARY" not in two.history_text


async def test_over_long_request_drops_the_oldest_first(server, workspace):
    history = [user("OLDEST task")]
    for i in range(40):
        history += [assistant(f"step {i} " + "word " * 50), user(f"ok {i}")]
    history += [assistant("NEWEST reply")]
    count = lambda m: len((m.content or "").split())  # noqa: E731 - words stand in for tokens
    request, replaced, _ = prepare_condense_request(
        history,
        instructions=None,
        workspace=workspace,
        automatic=False,
        folded_context="",
        keep_recent_user_tokens=0,
        count=count,
        max_request_tokens=900,
    )
    sent = request[-1]["content"]
    assert sum(count(Message(role="user", content=m["content"])) for m in request) <= 900
    assert "OLDEST task" not in sent and "NEWEST reply" in sent
    assert TRIMMED_NOTE.split("{count}")[1][:30] in sent
    assert replaced == history  # trimmed from the request only; the range is still replaced
    result = await run(server, history, workspace, keep_recent_user_tokens=0, count=count, max_request_tokens=900)
    assert result.replaced_first_id == history[0].id


async def test_provider_error_is_a_readable_condense_error(server, workspace):
    with pytest.raises(CondenseError) as info:
        await run(server, session_history(), workspace, reply=error(400, message="model refuses"))
    assert str(info.value).startswith("Condensing failed:") and "model refuses" in str(info.value)
    assert "Traceback" not in str(info.value)


async def test_the_unanswered_prompt_is_restated_after_the_summary(server, workspace):
    """Seed 001 §3.4「实现Fresh Start模型，保留关键上下文信息」("a Fresh Start that keeps the key
    context") and §8「保留开头和结尾」("keep the beginning and the end"): the request starts at
    the summary, so the user's newest message must follow it as the last user turn, verbatim.
    Issue 17: it was summarised into "Recent user messages" and the request ended there."""
    prompt = "Now also handle division by zero, exactly like this: `1 / 0 -> inf`."
    history = session_history() + [user(prompt)]
    result = await run(server, history, workspace, automatic=True)
    # The prompt is not summarised: the range ends before it, the summary holds the rest.
    assert result.replaced_last_id == history[-2].id and result.summary.meta["condensed"]["count"] == 4
    assert prompt not in result.summary.content and "Fix the failing test" in result.summary.content
    assert prompt not in request_text(server)
    assert result.summary.parent_id == history[-1].id  # stored after the prompt, a linear path
    # It is restated after the summary, verbatim, with its origin.
    assert [(m.role, m.kind, m.content, m.meta) for m in result.restate] == [
        ("user", "message", prompt, {"restated_from": history[-1].id})
    ]
    request = [result.summary, *result.restate]
    assert request[-1].role == "user" and request[-1].content == prompt


async def test_mid_turn_the_newest_user_message_is_summarised_and_restated(server, workspace):
    """Between the tool calls of a turn the newest user message is inside the range: the
    summary holds it and it is restated, so the request still ends with it as a user turn
    before the model's next step (issue 17)."""
    history = session_history()[:3]  # the task, a call, its result: the turn goes on
    result = await run(server, history, workspace, automatic=True)
    assert result.replaced_last_id == history[-1].id
    assert [(m.content, m.meta) for m in result.restate] == [
        ("Fix the failing test in calc.py", {"restated_from": history[0].id})
    ]


async def test_nothing_but_the_prompt_is_too_few_to_condense(server, workspace):
    with pytest.raises(CondenseError, match="Too few messages"):
        await run(server, [user("one huge first prompt")], workspace, automatic=True, reply=None)
    assert server.requests == []
