"""Interrupts through the Runtime API: the turn stops, the command's whole process group
dies (children included), what was produced is stored, and the next request is valid.

No test here asserts how fast anything happens; the waits only bound a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

import pytest

from agent.runtime.ops import Interrupt, Prompt
from tests.fakes.llm_server import hang, rate_limited, text, tool_calls
from tests.loop.conftest import of_type
from tests.loop.test_provider_faults import assert_well_formed

GROUP_COMMAND = "echo $$ > {pgid}; sh -c 'sleep 300 & sleep 300'"


@pytest.fixture(params=["auto", "litellm"])
def llm_client(request) -> str:
    """Interrupts close the provider's stream through both clients (agent/llm/fast.py, litellm)."""
    return request.param


async def mash_interrupt(runtime, turn: asyncio.Task) -> int:
    """Interrupt again and again until the turn ends (a user hammering Esc): later interrupts
    land while the first one is still cleaning up. Returns how many were sent."""
    sent = 0
    while not turn.done() and sent < 10_000:
        sent += runtime.submit(Interrupt()).result()
        await asyncio.sleep(0)
    return sent


async def wait_for(predicate, timeout=90.0, what="condition"):
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, f"{what} not reached in time"
        await asyncio.sleep(0.02)


# -- processes -------------------------------------------------------------------------------


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, process group) of a live process, None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None
    return fields[0], int(fields[2])


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes in a process group."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat and stat[1] == pgid and stat[0] != "Z":
                out.append(int(entry))
    return out


def command_names(pids: list[int]) -> list[str]:
    names = []
    for pid in pids:
        with contextlib.suppress(OSError):
            names.append(Path(f"/proc/{pid}/comm").read_text().strip())
    return names


def alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def read_pgid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


async def start_group_command(server, runtime, workspace: Path) -> tuple[asyncio.Task, int, list[int]]:
    """Run GROUP_COMMAND as the model's tool call; return the turn, its pgid and its live pids."""
    pgid_file = workspace / "pgid"
    server.add(
        tool_calls(
            [
                ("c1", "terminal-execute", {"command": GROUP_COMMAND.format(pgid=pgid_file)}),
                ("c2", "terminal-execute", {"command": "echo never runs"}),
            ]
        )
    )
    turn = asyncio.ensure_future(runtime.submit(Prompt("run the sleepers")))
    await wait_for(lambda: read_pgid(pgid_file), what="the command to start")
    pgid = read_pgid(pgid_file)
    await wait_for(lambda: command_names(group_members(pgid)).count("sleep") == 2, what="both sleeps")
    return turn, pgid, group_members(pgid)


# -- a running command ------------------------------------------------------------------------


async def test_interrupt_kills_the_whole_process_group(server, open_runtime, workspace):
    runtime = await open_runtime()
    try:
        turn, pgid, pids = await start_group_command(server, runtime, workspace)
        assert len(pids) >= 3  # the shell(s) and both sleeps
        assert runtime.submit(Interrupt()).result()
        await asyncio.wait_for(turn, 15)
        await wait_for(lambda: not group_members(pgid), what="the group to die")
        assert not [pid for pid in pids if alive(pid)]  # no child survives, background ones included
        assert of_type(runtime.events, "turn_finished")[-1].status == "interrupted"

        history = await runtime.history()
        assert [m.role for m in history] == ["user", "assistant", "tool", "tool"]
        first, second = history[2:]
        assert (first.tool_call_id, second.tool_call_id) == ("c1", "c2")
        assert first.status == second.status == "error"
        assert "interrupted" in first.content and "not run" in second.content

        server.add(text("it was stopped"))
        await runtime.submit(Prompt("what happened?"))
    finally:
        await runtime.close()
    request = server.requests[-1]["messages"]
    assert_well_formed(request)
    assert [m.get("tool_call_id") for m in request if m["role"] == "tool"] == ["c1", "c2"]


async def test_interrupting_twice_still_cleans_up(server, open_runtime, workspace):
    """Esc pressed again and again: later interrupts land while the first one cleans up."""
    runtime = await open_runtime()
    try:
        turn, pgid, pids = await start_group_command(server, runtime, workspace)
        assert await mash_interrupt(runtime, turn) > 1
        await asyncio.wait_for(turn, 15)
        await wait_for(lambda: not group_members(pgid), what="the group to die")
        assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["interrupted"]
        history = await runtime.history()
        assert [m.tool_call_id for m in history if m.role == "tool"] == ["c1", "c2"]
    finally:
        await runtime.close()


# -- a streaming answer -------------------------------------------------------------------------


async def test_interrupting_a_stream_twice_keeps_the_partial_and_finishes_once(server, open_runtime):
    server.add(hang(60, text="half of an answer"), text("the rest"))
    runtime = await open_runtime()
    try:
        turn = asyncio.ensure_future(runtime.submit(Prompt("slow")))
        await wait_for(lambda: of_type(runtime.events, "text_delta"), what="the first chunk")
        assert await mash_interrupt(runtime, turn) > 1
        await asyncio.wait_for(turn, 15)
        assert [e.status for e in of_type(runtime.events, "turn_finished")] == ["interrupted"]
        (finished,) = of_type(runtime.events, "assistant_finished")
        assert finished.message.status == "interrupted"
        last = (await runtime.history())[-1]
        assert (last.role, last.status, last.content) == ("assistant", "interrupted", "half of an answer")
        assert server.wait_idle(10)  # the server saw the client go away
        await runtime.submit(Prompt("continue"))
    finally:
        await runtime.close()
    request = server.requests[-1]["messages"]
    assert_well_formed(request)
    assert request[-2:] == [
        {"role": "assistant", "content": "half of an answer"},
        {"role": "user", "content": "continue"},
    ]


async def test_interrupt_before_the_first_token_stores_nothing_but_the_prompt(server, open_runtime):
    server.add(hang(60), text("answer"))
    runtime = await open_runtime()
    try:
        turn = asyncio.ensure_future(runtime.submit(Prompt("slow start")))
        await wait_for(lambda: server.active_streams, what="the request")
        assert runtime.submit(Interrupt()).result()
        await asyncio.wait_for(turn, 15)
        assert of_type(runtime.events, "turn_finished")[-1].status == "interrupted"
        assert [m.role for m in await runtime.history()] == ["user"]
        await runtime.submit(Prompt("again"))
    finally:
        await runtime.close()
    request = server.requests[-1]["messages"]
    assert_well_formed(request)
    assert [m["content"] for m in request if m["role"] == "user"] == ["slow start", "again"]


# -- the retry wait --------------------------------------------------------------------------


async def test_interrupt_during_the_retry_wait_cancels_the_turn(server, open_runtime):
    server.add(rate_limited(retry_after=300), text("answer to the next prompt"))
    runtime = await open_runtime(flags={"llm": {"retry_max_delay": 600}})
    try:
        turn = asyncio.ensure_future(runtime.submit(Prompt("hi")))
        await wait_for(lambda: of_type(runtime.events, "retrying"), what="the retry")
        assert of_type(runtime.events, "retrying")[0].delay == 300
        assert runtime.submit(Interrupt()).result()
        await asyncio.wait_for(turn, 15)
        assert of_type(runtime.events, "turn_finished")[-1].status == "interrupted"
        assert len(server.requests) == 1  # the retry never went out
        assert not runtime.busy
        await runtime.submit(Prompt("try again"))
    finally:
        await runtime.close()
    assert of_type(runtime.events, "assistant_finished")[-1].message.content == "answer to the next prompt"
    assert_well_formed(server.requests[-1]["messages"])


# -- quitting mid-turn, resuming at once ---------------------------------------------------------


async def test_resume_right_after_an_interrupted_turn(server, open_runtime):
    server.add(hang(60, text="partial words"), text("resumed fine"))
    runtime = await open_runtime()
    turn = asyncio.ensure_future(runtime.submit(Prompt("long job")))
    await wait_for(lambda: of_type(runtime.events, "text_delta"), what="the first chunk")
    runtime.submit(Interrupt()).result()
    await asyncio.wait_for(turn, 15)
    await runtime.close()

    again = await open_runtime(resume_id=runtime.session.id)
    try:
        history = await again.history()
        assert [(m.role, m.status) for m in history] == [("user", "ok"), ("assistant", "interrupted")]
        await again.submit(Prompt("go on"))
    finally:
        await again.close()
    request = server.requests[-1]["messages"]
    assert_well_formed(request)
    assert [m["role"] for m in request[1:]] == ["user", "assistant", "user"]
    assert of_type(again.events, "assistant_finished")[-1].message.content == "resumed fine"


# -- an interrupt at any moment of a command's start ---------------------------------------------


def processes_with(marker: str) -> list[int]:
    """Live processes whose command line holds `marker`."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and alive(int(entry)):
            out.append(int(entry))
    return out


@pytest.mark.parametrize("ticks", range(10))
async def test_interrupt_at_any_moment_of_a_command_start_kills_its_group(server, open_runtime, ticks):
    """The interrupt lands `ticks` event-loop turns after the tool starts, after the loop
    stalled a moment (a loaded machine): before the spawn, while asyncio still wires the
    pipes (the command already runs and has started its children), or once it runs."""
    marker = f"{os.getpid()}{ticks:03d}"  # a sleep length no other process uses
    server.add(tool_calls([("c1", "terminal-execute", {"command": f"sh -c 'sleep {marker} & sleep {marker}'"})]))
    runtime = await open_runtime()
    try:
        turn = asyncio.ensure_future(runtime.submit(Prompt("start something")))
        await wait_for(lambda: of_type(runtime.events, "tool_started"), timeout=90, what="the tool call")
        for _ in range(ticks):
            await asyncio.sleep(0)
        time.sleep(0.3)  # the event loop stalls: a command already forked starts its children
        runtime.submit(Interrupt()).result()
        await asyncio.wait_for(turn, 15)
        assert of_type(runtime.events, "turn_finished")[-1].status == "interrupted"
        await wait_for(lambda: not processes_with(f"sleep {marker}"), what="every sleep to die")
        history = await runtime.history()
        assert [m.role for m in history] == ["user", "assistant", "tool"]
    finally:
        await runtime.close()


async def test_close_during_a_turn_waits_for_its_clean_up(server, open_runtime):
    """Closing mid-stream (headless Ctrl-C, a front end quitting) keeps the partial answer."""
    import asyncio
    import sqlite3

    from agent.paths import db_path
    from tests.fakes.llm_script import hang

    server.add(hang(30, text="Partial answer"))
    runtime = await open_runtime()
    turn = asyncio.ensure_future(runtime.submit(Prompt("tell me")))
    for _ in range(6000):  # litellm may still be loading on a busy machine
        await asyncio.sleep(0.01)
        if any(e.type == "text_delta" for e in runtime.events):
            break
    assert any(e.type == "text_delta" for e in runtime.events), "the answer never started streaming"
    await runtime.close()
    await asyncio.gather(turn, return_exceptions=True)
    assert not [e for e in runtime.events if e.type == "turn_error"]  # e.g. "closed database"
    assert [e.status for e in runtime.events if e.type == "turn_finished"] == ["interrupted"]
    rows = sqlite3.connect(db_path()).execute("SELECT role, status, content FROM messages ORDER BY seq").fetchall()
    assert rows[0][:2] == ("user", "ok")
    assert rows[1][:2] == ("assistant", "interrupted") and rows[1][2].startswith("Partial")
