"""A subagent under a headless run's limits (issue 43, class 4), through the installed `cairn -p`
against the scripted server: the child is a narrower parent, never a way around the flags.

Each script holds exactly the requests the run may send: a child that went on past a limit
would find the script empty, and the `server` fixture fails the test.
"""

from __future__ import annotations

from tests.fakes.llm_server import tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn
from tests.subagents.test_subagent_e2e import _in

pytestmark = needs_cairn
STREAM = ("--output-format", "stream-json")
PARENT = "do the job"


def _subagent(agent: str, task: str):
    return _in(PARENT, tool_calls([("s1", "subagent", {"agent": agent, "task": task})]))


def _limit_and_result(out) -> tuple[dict, dict, dict]:
    lines = events(out.stdout)
    limit = next(e for e in lines if e["type"] == "limit")
    child_result = next(e for e in lines if e["type"] == "tool_result" and e["id"] == "s1")
    return limit, child_result, lines[-1]


def test_a_child_under_disallowed_terminal_and_yolo_runs_no_command(server, workspace):
    """`--disallowed-tools terminal-execute --yolo`: the child is not offered the tool, and its
    call to it anyway stops the run as the parent's would (exit 6), the command never run."""
    task = "create the file pwned.txt"
    server.add(
        _subagent("general", task),
        _in(task, tool_calls([("t1", "terminal-execute", {"command": "touch pwned.txt"})])),
    )
    out = cairn(
        *base_args(server, workspace), "--yolo", "-p", PARENT, "--disallowed-tools", "terminal-execute", *STREAM
    )
    assert out.returncode == 6, out.stderr
    assert not (workspace / "pwned.txt").exists()
    parent_tools = {t["function"]["name"] for t in server.requests[0]["tools"]}
    child_tools = {t["function"]["name"] for t in server.requests[1]["tools"]}
    assert "terminal-execute" not in parent_tools | child_tools
    assert "filesystem-read" in child_tools
    limit, child_result, final = _limit_and_result(out)
    assert limit["limit"] == "tool_disallowed" and final["limit"] == "tool_disallowed" and final["exit_code"] == 6
    assert "the general agent called terminal-execute, which --disallowed-tools does not permit" in limit["message"]
    assert child_result["status"] == "error" and "did not finish: Stopped:" in child_result["content"]
    assert "Stopped: the general agent called terminal-execute" in out.stderr


def test_max_turns_counts_the_childs_requests(server, workspace):
    """`--max-turns 2`: the parent's request and the child's first are the two; the child's
    second is never sent, and the run ends with the parent's limit (exit 3)."""
    (workspace / "a.txt").write_text("a\n")
    task = "read a.txt twice"
    server.add(
        _subagent("explore", task),
        _in(task, tool_calls([("r1", "filesystem-read", {"filePath": "a.txt"})])),
    )
    out = cairn(*base_args(server, workspace), "-p", PARENT, "--max-turns", "2", *STREAM)
    assert out.returncode == 3, out.stderr
    assert len(server.requests) == 2
    limit, child_result, final = _limit_and_result(out)
    assert limit["limit"] == "max_turns" and final["status"] == "limit" and final["exit_code"] == 3
    assert final["requests"] == 2  # the result's count is the run's, the child's request included
    assert "--max-turns 2 (2 model requests) and the explore agent wanted to go on" in limit["message"]
    assert child_result["status"] == "error" and "--max-turns 2" in child_result["content"]
    assert "Stopped: the run reached --max-turns 2 (2 model requests)" in out.stderr
    assert "Error" not in out.stderr  # a limit the user asked for is not an error


def test_max_cost_counts_the_childs_cost_as_it_happens(server, workspace):
    """gpt-4o has a price: the parent's request costs next to nothing, the child's first passes
    `--max-cost`, so its second is never sent (exit 4)."""
    (workspace / "a.txt").write_text("a\n")
    task = "read a.txt, at length"
    server.add(
        _in(
            PARENT,
            tool_calls(
                [("s1", "subagent", {"agent": "explore", "task": task})], prompt_tokens=10, completion_tokens=10
            ),
        ),
        _in(
            task,
            tool_calls([("r1", "filesystem-read", {"filePath": "a.txt"})], prompt_tokens=200_000, completion_tokens=10),
        ),
    )
    args = base_args(server, workspace, model="openai/gpt-4o")
    out = cairn(*args, "-p", PARENT, "--max-cost", "0.01", *STREAM)
    assert out.returncode == 4, out.stderr
    assert len(server.requests) == 2
    limit, child_result, final = _limit_and_result(out)
    assert limit["limit"] == "max_cost" and final["limit"] == "max_cost" and final["exit_code"] == 4
    assert "reaching --max-cost 0.01" in limit["message"] and "--max-cost" in child_result["content"]
    assert final["run_cost"] > 0.01  # the child's bill is the run's
