"""`cairn -p --permission-mode …` through the installed console script and the fake server: plan
mode refuses edits and writing commands (even with --yolo) and tells the model it is planning;
its plan is the run's answer; accept-edits edits unasked while a command is still refused."""

from __future__ import annotations

import io

import pytest

from agent.headless.stream import StreamPrinter
from agent.session.models import Message, ToolCall
from agent.tools.exit_plan_mode import NOBODY_TO_ASK
from agent.tools.modes import PLAN_REFUSAL
from agent.turn.events import AssistantFinished, ToolFinished, TurnFinished, UserMessage
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn

WRITES = [
    ("c1", "filesystem-edit", {"filePath": "a.txt", "searchContent": "old", "replaceContent": "new"}),
    ("c2", "filesystem-create", {"filePath": "new.txt", "content": "x\n"}),
    ("c3", "terminal-execute", {"command": "touch made"}),
]


def tool_results(request: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


@needs_cairn
@pytest.mark.parametrize("yolo", [False, True])
def test_plan_mode_refuses_edits_and_commands_and_says_why(workspace, yolo):
    (workspace / "a.txt").write_text("old\n")
    with FakeLLMServer([tool_calls(WRITES), text("I would change a.txt.")]) as srv:
        out = cairn(
            *base_args(srv, workspace), *(["--yolo"] if yolo else []), "--permission-mode", "plan", "-p", "change it"
        )
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "I would change a.txt.\n"
    assert (workspace / "a.txt").read_text() == "old\n"
    assert not (workspace / "new.txt").exists() and not (workspace / "made").exists()
    assert tool_results(requests[1]) == {
        "c1": PLAN_REFUSAL.format(title="Edit a.txt"),
        "c2": PLAN_REFUSAL.format(title="Create new.txt"),
        "c3": PLAN_REFUSAL.format(title="Run command: touch made"),
    }
    assert "Note: not run in plan mode: Edit a.txt" in out.stderr
    assert "Note: not run in plan mode: Run command: touch made." in out.stderr
    assert "plan mode" in requests[0]["messages"][-1]["content"]  # the model was told at once


@needs_cairn
def test_the_plan_is_the_answer_of_a_headless_plan_run(workspace):
    plan = "## Plan\n1. Rename `f` to `g` in a.py\n2. Run the tests"
    with FakeLLMServer([tool_calls([("c1", "exit-plan-mode", {"plan": plan})]), text("Plan recorded.")]) as srv:
        out = cairn(*base_args(srv, workspace), "--permission-mode", "plan", "-p", "plan a rename")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    assert out.stdout == plan + "\n"
    assert tool_results(requests[1]) == {"c1": NOBODY_TO_ASK}


@needs_cairn
def test_accept_edits_edits_unasked_and_a_command_is_still_refused(workspace):
    (workspace / "a.txt").write_text("old\n")
    with FakeLLMServer([tool_calls([WRITES[0], WRITES[2]]), text("Edited.")]) as srv:
        out = cairn(*base_args(srv, workspace), "--permission-mode", "acceptEdits", "-p", "change it")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    assert (workspace / "a.txt").read_text() == "new\n" and not (workspace / "made").exists()
    results = tool_results(requests[1])
    assert results["c1"].startswith("---") and "+new" in results["c1"]
    assert "nobody can approve" in results["c3"]
    assert "Note: not allowed without approval: Run command: touch made" in out.stderr
    assert "Note: not run in plan mode" not in out.stderr


@needs_cairn
def test_an_unknown_mode_is_a_usage_error(workspace):
    out = cairn("--cwd", str(workspace), "--permission-mode", "bypassPermissions", "-p", "hi")
    assert out.returncode == 2 and out.stdout == ""
    assert "--permission-mode: invalid choice: 'bypassPermissions'" in out.stderr
    assert "'default', 'acceptEdits', 'plan'" in out.stderr


def test_stream_json_result_text_is_the_recorded_plan():
    out = io.StringIO()
    printer = StreamPrinter(out, io.StringIO())
    call = ToolCall(id="c1", name="exit-plan-mode", arguments="{}")
    printer(UserMessage(message=Message(role="user", content="plan it")))
    printer(
        ToolFinished(call=call, message=Message(role="tool", content="x", meta={"plan": "P", "review": "recorded"}))
    )
    printer(AssistantFinished(message=Message(role="assistant", content="Plan recorded.")))
    printer(TurnFinished(status="ok"))
    printer.result(exit_code=0, session_id="s")
    assert events(out.getvalue())[-1]["text"] == "P"
    # the next prompt's answer is its own
    printer(UserMessage(message=Message(role="user", content="and now?")))
    printer(AssistantFinished(message=Message(role="assistant", content="Nothing more.")))
    assert printer.tally.final_text == "Nothing more."
