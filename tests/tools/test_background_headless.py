"""`cairn -p` and background tasks (issue 47): a server the model started runs while the run does,
and the end of the run stops it and says so (stderr's `Note:`, stream-json's `task_finished`,
json's `background_tasks_stopped`); nothing is left running once `cairn` exited."""

from __future__ import annotations

import json

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn
from tests.tools.test_background_tasks import call, fetch_command, free_port, group_alive, server_command

pytestmark = needs_cairn


def test_the_end_of_a_run_stops_its_server_and_says_so(workspace):
    port = free_port()
    (workspace / "index.html").write_text("<p>served by the background task</p>\n")
    with FakeLLMServer(
        [
            tool_calls([call("c1", "terminal-execute", command=server_command(port), background=True)]),
            tool_calls([call("c2", "terminal-execute", command=fetch_command(port))]),
            text("The server answers."),
        ]
    ) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "serve and check", "--output-format", "stream-json")
    assert out.returncode == 0, out.stderr
    lines = events(out.stdout)
    (started,) = [e for e in lines if e["type"] == "task_started"]
    (fetched,) = [e for e in lines if e["type"] == "tool_result" and e["id"] == "c2"]
    assert "served by the background task" in json.loads(fetched["content"])["stdout"]
    (finished,) = [e for e in lines if e["type"] == "task_finished"]
    assert finished["task_id"] == started["task_id"] == "1" and finished["stopped_by"] == "session_end"
    assert [e["type"] for e in lines].index("task_finished") < [e["type"] for e in lines].index("result")
    assert finished["message"].startswith(f"Background task 1 (`{server_command(port)}`) was stopped at the end")
    assert lines[-1]["background_tasks_stopped"] == [{"task_id": "1", "command": server_command(port)}]
    assert group_alive(started["pid"]) == []


def test_text_and_json_output_say_what_the_end_stopped(workspace):
    with FakeLLMServer(
        [tool_calls([call("c1", "terminal-execute", command="sleep 600", background=True)]), text("Started.")]
    ) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "start it", "--output-format", "json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["background_tasks_stopped"] == [{"task_id": "1", "command": "sleep 600"}]
    (message,) = [m for m in result["messages"] if m["role"] == "tool"]
    assert group_alive(message["meta"]["pid"]) == []
    assert "Note: Background task 1 (`sleep 600`) was stopped at the end of the session" in out.stderr
