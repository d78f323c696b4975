"""The loop's tool step: run an assistant message's tool calls and store every result.

Calls run in order, one at a time, except a run of consecutive `subagent` calls, which run
together (each child is a whole conversation; waiting for one before starting the next would
only add their times). Every call gets a result in the stored history whatever happens — a
run limit answers the calls it stops, an interrupt answers the open ones with what the
running command printed until then — so the next request is always valid.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agent.instructions import call_paths, instructions_for
from agent.process.process_group import kill_group
from agent.session.models import Message, ToolCall
from agent.subagents.tool import NAME as SUBAGENT_TOOL
from agent.tools.base import ToolContext, ToolResult
from agent.turn.events import Event, ToolFinished, ToolOutput, ToolStarted
from agent.turn.policies import TurnPolicies
from agent.turn.state import TurnState
from agent.turn.writer import SessionWriter

INTERRUPTED_TOOL_TEXT = "Error: interrupted by the user before this tool finished."
SKIPPED_TOOL_TEXT = "Error: not run; the user interrupted the turn."
PARTIAL_OUTPUT_CHARS = 30_000  # of an interrupted command's output, kept as its result
PARTIAL_CHUNKS = 64
LIMIT_TOOL_TEXT = "Error: not run; {message}"
T = TypeVar("T")


class ToolSteps:
    """An agent's tool step: its tools (the registry in `state`, run with `ctx`), its `writer`,
    the `policies` asked before each call. `partial` is what the call running alone has
    printed so far."""

    def __init__(
        self,
        *,
        state: TurnState,
        ctx: ToolContext,
        writer: SessionWriter,
        policies: TurnPolicies,
        emit: Callable[[Event], None],
    ) -> None:
        self.state = state
        self.ctx = ctx
        self.writer = writer
        self.policies = policies
        self.emit = emit
        self.partial: list[str] = []
        self.instructions_given: set[str] = set()  # a subfolder's instruction files given so far

    async def run(self, assistant: Message) -> bool:
        """Run the calls; True when a run limit stopped them (every call answered)."""
        calls = assistant.tool_calls
        index = 0
        while index < len(calls):
            batch = parallel_run(calls, index)
            for offset, call in enumerate(batch):
                limit = self.policies.before_tool(call)
                if limit is not None:
                    await self._run_batch(batch[:offset])
                    await self._answer_unrun(calls[index + offset :], LIMIT_TOOL_TEXT.format(message=limit.message))
                    self.emit(limit)
                    return True
            await self._run_batch(batch)
            index += len(batch)
        return False

    async def _run_one(self, call: ToolCall) -> None:
        self.emit(ToolStarted(call=call))
        self.partial = []  # what the call printed so far: kept as its result if interrupted
        self.ctx.progress = functools.partial(self._tool_output, call.id)
        result = await self.state.registry.execute(call, self.ctx)
        self.ctx.progress = None
        await self._store_result(call, result)

    async def _run_batch(self, calls: list[ToolCall]) -> None:
        """Subagents asked for in one message run at the same time (at most
        `[agents] max_parallel`, the runner's slots); each result is stored as it arrives."""
        if len(calls) <= 1:
            for call in calls:
                await self._run_one(call)
            return
        self.partial = []  # several run: none's output is "the" partial of an interrupt
        tasks: dict[asyncio.Future[ToolResult], ToolCall] = {}
        for call in calls:
            self.emit(ToolStarted(call=call))
            ctx = dataclasses.replace(self.ctx, progress=functools.partial(self._call_output, call.id))
            tasks[asyncio.ensure_future(self.state.registry.execute(call, ctx))] = call
        pending = set(tasks)
        try:
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in [t for t in tasks if t in done]:  # in call order when several end at once
                    await self._store_result(tasks[task], task.result())
        except asyncio.CancelledError:
            for task in pending:
                task.cancel()
            await uninterruptible(asyncio.gather(*pending, return_exceptions=True))
            raise

    async def _store_result(self, call: ToolCall, result: ToolResult) -> None:
        state = self.state
        if result.meta.get("subagent"):  # the child's requests are this session's bill
            state.session_cost += float(result.meta.get("cost") or 0.0)
        content, meta = result.content, dict(result.meta)
        paths = [] if result.is_error else call_paths(call.name, call.arguments)
        nested = instructions_for(self.ctx.workspace, paths, self.instructions_given) if paths else None
        if nested is not None:  # a subfolder's CLAUDE.md, once, after what the tool returned
            content, meta["instructions"] = content + nested[0], nested[1]
        message = Message(
            role="tool",
            tool_call_id=call.id,
            tool_name=call.name,
            content=content,
            status="error" if result.is_error else "ok",
            meta=meta,
        )
        state.builder.counter.remember_count(message)
        images = state.builder.images.keep(result.blobs, self.writer.store.put_blobs)
        await self.writer.persist(images)  # before it is named
        # With the checkpoints rewind restores from, in one transaction.
        message = await self.writer.append(message, [(e.path, e.before, e.after) for e in result.edits])
        self.emit(ToolFinished(call=call, message=message))

    async def _answer_unrun(self, calls: list[ToolCall], text: str) -> None:
        """Answer calls that will not run (a run limit), so the stored history stays valid."""
        for call in calls:
            message = await self.writer.append(
                Message(
                    role="tool",
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=text,
                    status="error",
                    meta={"limit": True},
                )
            )
            self.emit(ToolFinished(call=call, message=message))

    def _tool_output(self, call_id: str, text: str) -> None:
        self.partial.append(text)
        if len(self.partial) > PARTIAL_CHUNKS:  # bounded, however much the command prints
            self.partial[:] = ["".join(self.partial)[-PARTIAL_OUTPUT_CHARS:]]
        self.emit(ToolOutput(call_id=call_id, text=text))

    def _call_output(self, call_id: str, text: str) -> None:
        """Output of one of several calls running together: shown, not kept as a partial."""
        self.emit(ToolOutput(call_id=call_id, text=text))

    async def after_interrupt(self) -> None:
        """Kill what still runs and answer every open tool call, so history stays valid."""
        for process in list(self.ctx.processes):
            kill_group(process.pid)
        await self.writer.settle()
        history = await self.writer.history()
        answered = {m.tool_call_id for m in history if m.role == "tool"}
        last_assistant = next((m for m in reversed(history) if m.role == "assistant"), None)
        if last_assistant is None:
            return
        first_open = True
        for call in last_assistant.tool_calls:
            if call.id in answered:
                continue
            text = INTERRUPTED_TOOL_TEXT if first_open else SKIPPED_TOOL_TEXT
            if first_open and self.partial:
                text += "\nIts output until then:\n" + "".join(self.partial)[-PARTIAL_OUTPUT_CHARS:]
            first_open = False
            message = await self.writer.append(
                Message(
                    role="tool",
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=text,
                    status="error",
                    meta={"interrupted": True},
                )
            )
            self.emit(ToolFinished(call=call, message=message))


def parallel_run(calls: list[ToolCall], start: int) -> list[ToolCall]:
    """The calls from `start` that run together: consecutive `subagent` calls, else one call."""
    end = start + 1
    if calls[start].name == SUBAGENT_TOOL:
        while end < len(calls) and calls[end].name == SUBAGENT_TOOL:
            end += 1
    return calls[start:end]


async def uninterruptible(cleanup: Awaitable[T]) -> T:
    """Run clean-up after an interrupt to the end, even if the user interrupts again meanwhile
    (Esc pressed twice): a half-done clean-up would lose the partial answer's last text."""
    task = asyncio.ensure_future(cleanup)
    while True:
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                return task.result()
