"""The one way in (issue 44): every op of agent/runtime/ops.py has a handler, an op that takes
effect at once is done (or refused) before `submit` returns, the others run as tasks."""

from __future__ import annotations

import asyncio
import dataclasses
import inspect

import pytest

from agent.runtime import ops
from agent.runtime.errors import RuntimeBusy
from agent.runtime.ops import Fork, Interrupt, Prompt, Rename, SetMode
from tests.fakes.llm_server import hang, text
from tests.loop.conftest import of_type
from tests.loop.test_interrupts import wait_for

ALL_OPS = [cls for _, cls in inspect.getmembers(ops, inspect.isclass) if issubclass(cls, ops.Op) and cls is not ops.Op]


def test_the_vocabulary_is_plain_frozen_data():
    assert len(ALL_OPS) >= 17
    for cls in ALL_OPS:
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, cls  # type: ignore[attr-defined]


async def test_every_op_has_exactly_one_handler(open_runtime):
    runtime = await open_runtime()
    try:
        handled = set(runtime._handlers) | set(runtime._immediate)
        assert set(runtime._handlers).isdisjoint(runtime._immediate)
        assert handled == set(ALL_OPS)
        with pytest.raises(TypeError, match="not an op"):
            runtime.submit(ops.Op())
    finally:
        await runtime.close()


async def test_immediate_ops_are_done_or_refused_before_submit_returns(open_runtime):
    runtime = await open_runtime()
    try:
        done = runtime.submit(SetMode("plan"))
        assert done.done() and runtime.mode == "plan"
        with pytest.raises(ValueError, match="unknown mode"):
            runtime.submit(SetMode("everything"))
        assert runtime.submit(Interrupt()).result() is False  # nothing ran
        renamed = await runtime.submit(Rename("  a   title "))
        assert renamed.title == "a title" == runtime.session.title
    finally:
        await runtime.close()


async def test_a_turn_is_a_task_an_interrupt_stops_and_a_session_change_waits_for(server, open_runtime):
    server.add(hang(60, text="half"), text("the rest"))
    runtime = await open_runtime()
    try:
        turn = runtime.submit(Prompt("wait for it"))
        await wait_for(lambda: of_type(runtime.events, "text_delta"), what="the first chunk")
        assert runtime.busy
        with pytest.raises(RuntimeBusy):
            await runtime.submit(Fork())
        assert runtime.submit(Interrupt()).result() is True
        await asyncio.wait_for(turn, 15)
        assert not runtime.busy
        assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["interrupted"]
        await runtime.submit(Prompt("go on"))  # the next turn takes the second step
    finally:
        await runtime.close()
