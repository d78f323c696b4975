"""Subagents end to end (issue 29): litellm ↔ the fake server, real tools, a real SQLite file.

The fake serves several conversations at once; each step below picks its answer by the
conversation's first user message (the parent's prompt, or the task a child was given).
"""

from __future__ import annotations

import json
import threading

from agent.runtime.ops import Prompt
from agent.session.store import Store
from tests.fakes.llm_server import text, tool_calls
from tests.loop.conftest import of_type

PARENT = "where is the config loaded?"


def _first_user(request: dict) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def _in(conversation: str, step):
    """A step only the conversation starting with `conversation` may take (else the test fails)."""

    def pick(request: dict):
        first = _first_user(request)
        assert first.startswith(conversation), f"expected a request of {conversation!r}, got one of {first[:60]!r}"
        return step

    return pick


def _reads(count: int) -> list:
    return [(f"r{i}", "filesystem-read", {"filePath": f"src/mod{i}.py"}) for i in range(count)]


async def test_explore_runs_in_its_own_conversation_and_only_its_answer_returns(server, open_runtime, workspace):
    (workspace / "src").mkdir()
    for i in range(3):
        (workspace / "src" / f"mod{i}.py").write_text(f"SECRET_MARKER_{i} = 'x' * 100\n")
    task = "Find where the config is loaded; report file and line."
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "explore", "task": task})])),
        _in(task, tool_calls(_reads(3))),
        _in(task, text("It is loaded in src/mod1.py line 1.")),
        _in(PARENT, text("The config is loaded in src/mod1.py.")),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()

    parent_first, child_first, child_second, parent_last = server.requests
    # The child is a separate conversation that starts with the task and reads with its tools.
    assert [m["role"] for m in child_first["messages"]] == ["system", "user"]
    assert child_first["messages"][1]["content"] == task
    assert "You are a subagent" in child_first["messages"][0]["content"]
    child_tools = {t["function"]["name"] for t in child_first["tools"]}
    assert "filesystem-read" in child_tools
    assert not child_tools & {"subagent", "filesystem-edit", "filesystem-create"}
    assert sum("SECRET_MARKER_" in (m.get("content") or "") for m in child_second["messages"]) == 3
    # The parent's next request carries the child's answer as the result, none of its reads.
    body = json.dumps(parent_last["messages"])
    assert "SECRET_MARKER_" not in body
    result = parent_last["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "s1"
    assert result["content"] == "It is loaded in src/mod1.py line 1."
    assert "subagent" in {t["function"]["name"] for t in parent_first["tools"]}
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    # Stored: the child session, linked to the parent's call, and only the parent listed on top.
    store = await Store.open()
    try:
        parent = (await store.list_summaries())[0].session
        children = await store.subagent_sessions(parent.id)
        assert [(c.agent, c.parent_call_id) for c in children] == [("explore", "s1")]
        child_messages = await store.active_path(children[0].id)
        assert [m.role for m in child_messages] == ["user", "assistant", "tool", "tool", "tool", "assistant"]
        assert [s.session.id for s in await store.list_summaries()] == [parent.id]
        assert (await store.latest_session(parent.cwd)).id == parent.id
        tool_message = [m for m in await store.active_path(parent.id) if m.role == "tool"][0]
        assert tool_message.meta["subagent"]["session_id"] == children[0].id
        assert tool_message.meta["subagent"]["agent"] == "explore"
    finally:
        await store.close()


async def test_two_subagent_calls_in_one_message_run_at_the_same_time(server, open_runtime, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    (workspace / "b.txt").write_text("beta\n")
    both_started = threading.Barrier(2, timeout=30)  # each child's first request waits for the other's

    def first_request(task: str, path: str):
        def step(request: dict):
            assert _first_user(request) == task
            both_started.wait()  # raises BrokenBarrierError (the test fails) if they ran one after the other
            return tool_calls([(f"{path}-read", "filesystem-read", {"filePath": path})])

        return step

    def answer(task: str, reply: str):
        def step(request: dict):
            return _in(task, text(reply))(request)

        return step

    server.add(
        _in(
            PARENT,
            tool_calls(
                [
                    ("s1", "subagent", {"agent": "explore", "task": "task A: read a.txt"}),
                    ("s2", "subagent", {"agent": "explore", "task": "task B: read b.txt"}),
                ]
            ),
        ),
    )
    # Which child asks first is up to the scheduler: each step routes by the request itself.
    routes = {
        "task A: read a.txt": [
            first_request("task A: read a.txt", "a.txt"),
            answer("task A: read a.txt", "A says alpha"),
        ],
        "task B: read b.txt": [
            first_request("task B: read b.txt", "b.txt"),
            answer("task B: read b.txt", "B says beta"),
        ],
    }
    lock = threading.Lock()

    def route(request: dict):
        with lock:
            step = routes[_first_user(request)].pop(0)
        return step(request)

    server.add(route, route, route, route)
    server.add(_in(PARENT, text("A and B done.")))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()

    starts = [_first_user(r) for r in server.requests[1:5]]
    assert set(starts[:2]) == {"task A: read a.txt", "task B: read b.txt"}  # interleaved, not A, A, B, B
    results = {m["tool_call_id"]: m["content"] for m in server.requests[-1]["messages"] if m["role"] == "tool"}
    assert results == {"s1": "A says alpha", "s2": "B says beta"}
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"


async def test_explore_cannot_change_anything_even_with_yolo(server, open_runtime, workspace):
    (workspace / "keep.txt").write_text("original\n")
    task = "try to change keep.txt"
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "explore", "task": task})])),
        _in(task, tool_calls([("t1", "terminal-execute", {"command": "echo changed > keep.txt"})])),
        _in(task, text("I could not change it.")),
        _in(PARENT, text("done")),
    )
    runtime = await open_runtime(yolo=True)
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    assert (workspace / "keep.txt").read_text() == "original\n"
    refusal = server.requests[2]["messages"][-1]
    assert refusal["role"] == "tool" and refusal["content"].startswith("Error:")
    assert "plan" in refusal["content"].lower()


async def test_an_unknown_agent_is_an_error_the_model_can_act_on(server, open_runtime):
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "nobody", "task": "x"})])),
        _in(PARENT, text("ok")),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    result = server.requests[-1]["messages"][-1]["content"]
    assert result.startswith("Error: no agent named 'nobody'") and "explore" in result and "general" in result
