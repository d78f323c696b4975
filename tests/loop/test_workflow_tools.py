"""The workflow tools (subagent, todo-write, exit-plan-mode, skill-load) are offered where the
window can spare them, and left out of a small local model's requests, which they would fill."""

from __future__ import annotations

from agent.runtime.ops import Prompt
from tests.fakes.llm_server import text

WORKFLOW = {"subagent", "todo-write", "exit-plan-mode"}


def _tools(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request["tools"]}


async def test_a_roomy_window_offers_them(server, open_runtime):
    server.add(text("ok"))
    runtime = await open_runtime(flags={"models": {"openai/fake-model": {"context_window": 128_000}}})
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert _tools(server.requests[0]) >= WORKFLOW


async def test_a_small_window_leaves_them_out_but_plan_mode_keeps_its_exit(server, open_runtime):
    server.add(text("ok"), text("planned"))
    small = {"models": {"openai/fake-model": {"context_window": 8_192}}}
    runtime = await open_runtime(flags=small)
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert not WORKFLOW & _tools(server.requests[0])
    assert "filesystem-read" in _tools(server.requests[0])
    planning = await open_runtime(flags={**small, "permission_mode": "plan"})
    try:
        await planning.submit(Prompt("plan it"))
    finally:
        await planning.close()
    assert WORKFLOW & _tools(server.requests[1]) == {"exit-plan-mode"}
