"""A background task's start and end as the front ends carry them (issue 47): a stream-json line
each (docs/headless.md), and for an editor (ACP) a tool call of its own, running until it ends."""

from __future__ import annotations

from agent.acp.updates import for_event
from agent.headless.stream import to_json
from agent.turn.events import TaskFinished, TaskStarted

STARTED = TaskStarted(task_id="2", command="npm run dev", pid=4242)
CRASHED = TaskFinished(
    task_id="2", command="npm run dev", exit_code=1, runtime_seconds=14.2, message="Background task 2 … exited"
)
STOPPED = CRASHED.model_copy(update={"stopped_by": "session_end", "exit_code": -9})


def test_stream_json_writes_each_start_and_end():
    assert to_json(STARTED) == {"type": "task_started", "task_id": "2", "command": "npm run dev", "pid": 4242}
    line = to_json(STOPPED)
    assert line is not None and line["type"] == "task_finished" and line["stopped_by"] == "session_end"
    assert line["exit_code"] == -9 and line["message"] == "Background task 2 … exited"


def test_an_editor_sees_a_task_as_a_call_until_it_ends():
    (started,) = for_event(STARTED)
    assert started.tool_call_id == "task-2" and started.status == "in_progress" and started.kind == "execute"
    assert started.title == "background task 2: npm run dev"
    (crashed,) = for_event(CRASHED)
    assert crashed.tool_call_id == "task-2" and crashed.status == "failed"
    assert crashed.content[0].content.text == "Background task 2 … exited"
    (stopped,) = for_event(STOPPED)
    assert stopped.status == "completed"  # stopped on purpose: not a failure
