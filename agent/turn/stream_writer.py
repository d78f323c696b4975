"""The assistant message as it streams: written on its first token, flushed while it grows,
finalised with its tool calls, usage and cost (or kept partial when the stream fails).

The agent (agent/turn/loop.py) owns the writes; this object only decides what they hold and when.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from agent.llm.reasoning import META_THINKING, META_THINKING_BLOCKS, complete_blocks
from agent.llm.result import StreamResult
from agent.llm.server_search import META_SERVER_BLOCKS, paired
from agent.session.models import Message, Status, ToolCall
from agent.turn.events import AssistantFinished, AssistantStarted, Event, TextDelta, ThinkingDelta
from agent.turn.writer import SessionWriter

STREAM_FLUSH_SECONDS = 0.5
# litellm's: where a Gemini tool-call id carries the model's thought signature.
THOUGHT_SIGNATURE_SEPARATOR = "__thought__"


class StreamWriter:
    """Writes the assistant message on its first token and flushes it as it streams."""

    def __init__(
        self,
        writer: SessionWriter,
        emit: Callable[[Event], None],
        *,
        model: str,
        history: Callable[[], list[Message]],
        meta: dict[str, Any],
    ) -> None:
        self.writer = writer
        self.emit = emit
        self.model = model
        self.history = history  # the active path (tool call ids must stay unique in it)
        self.meta = meta  # what the request recorded (the builder's `sent_record`)
        self.message: Message | None = None
        self.text = ""
        self.thinking = ""
        self.partial = StreamResult()  # what streamed so far (stream_chat fills it)
        self._last_flush = 0.0

    async def _start(self, *, announce: bool = True) -> Message:
        loop = asyncio.get_running_loop()
        self._last_flush = loop.time()
        # Set before the write so an interrupt during it cannot lead to a second row.
        self.message = Message(
            role="assistant", content=self.text, status="interrupted", meta={"model": self.model, **self.meta}
        )
        await self.writer.append(self.message)
        if announce:  # a message without text (only a half-sent tool call) gets no chat bubble
            self.emit(AssistantStarted(message_id=self.message.id))
        return self.message

    async def on_text(self, chunk: str) -> None:
        self.text += chunk
        message = await self._piece(TextDelta, chunk)
        if self._flush_due():
            message.content = self.text
            await self.writer.persist(self.writer.store.update_message(message))

    async def on_thinking(self, chunk: str) -> None:
        """Reasoning before the answer: the message is written on its first piece (so a turn
        interrupted while the model thinks keeps what it thought) and shown as it streams."""
        self.thinking += chunk
        message = await self._piece(ThinkingDelta, chunk)
        if self._flush_due():
            message.meta = {**message.meta, META_THINKING: self.thinking}
            await self.writer.persist(self.writer.store.update_message(message))

    async def _piece(self, event: type[TextDelta] | type[ThinkingDelta], chunk: str) -> Message:
        """The message a streamed piece belongs to (written on the first one), the piece shown."""
        message = self.message if self.message is not None else await self._start()
        self.emit(event(message_id=message.id, text=chunk))
        return message

    def _flush_due(self) -> bool:
        """Whether STREAM_FLUSH_SECONDS passed since the last write (and start the next wait)."""
        now = asyncio.get_running_loop().time()
        if now - self._last_flush < STREAM_FLUSH_SECONDS:
            return False
        self._last_flush = now
        return True

    async def finish(
        self,
        result: StreamResult | None,
        *,
        status: Status,
        error: str | None = None,
        estimated_tokens: int | None = None,
        cut_at: int | None = None,
    ) -> Message | None:
        """Finalise: the full text, tool calls, usage and cost; or the partial on failure.
        `cut_at`: the output limit the answer was cut at (finish_reason "length")."""
        await self.writer.settle()
        text = result.content if result is not None else self.text
        message = self.message
        if message is None:
            calls = bool(result and (result.tool_calls or result.partial_tool_calls))
            if not text and not calls and status != "ok":
                return None  # nothing streamed: nothing to keep
            message = await self._start(announce=bool(text) or status == "ok")
        message.content = text or None
        message.status = status
        meta = dict(message.meta)
        thinking = result.thinking if result is not None and result.thinking else self.thinking
        if thinking:
            meta[META_THINKING] = thinking
        blocks = complete_blocks(result.thinking_blocks) if result is not None else []
        if blocks and status == "ok":  # signed: what Anthropic wants back in this tool loop
            meta[META_THINKING_BLOCKS] = blocks
        searches = paired(result.server_blocks) if result is not None and status == "ok" else []
        if searches:  # Claude's server-side searches, sent back as they came
            meta[META_SERVER_BLOCKS] = searches
        if result is not None and status == "ok":
            renamed = unique_tool_call_ids(result.tool_calls, self.history())
            if renamed:
                meta["renamed_tool_call_ids"] = renamed  # new id → the id the model sent
            message.tool_calls = result.tool_calls
            meta.update(
                usage={
                    "prompt_tokens": result.prompt_tokens,
                    "completion_tokens": result.completion_tokens,
                    "cache_read_tokens": result.cache_read_tokens,
                    "cache_write_tokens": result.cache_write_tokens,
                    **({"reasoning_tokens": result.reasoning_tokens} if result.reasoning_tokens else {}),
                    **({"web_search_requests": result.web_search_requests} if result.web_search_requests else {}),
                },
                cost=result.cost,
                finish_reason=result.finish_reason,
            )
            if estimated_tokens is not None:
                meta["estimated_prompt_tokens"] = estimated_tokens
            if cut_at is not None:
                meta["max_output_tokens"] = cut_at  # with finish_reason "length": cut off there
        elif result is not None and result.partial_tool_calls:
            meta["partial_tool_calls"] = result.partial_tool_calls
        if error:
            meta["error"] = error
        message.meta = meta
        await self.writer.persist(self.writer.store.update_message(message))
        self.emit(AssistantFinished(message=message))
        return message


def unique_tool_call_ids(calls: list[ToolCall], history: list[Message]) -> dict[str, str]:
    """Give each call an id no earlier call of this message or of `history` has (in place):
    a model that repeats an id would otherwise get a request whose results answer the wrong
    call, or one a provider refuses. A repeat becomes `<id>_2` (`_3`, …: the first free
    one), deterministic, and its result refers to the new id. Returns {new id: sent id}."""
    used = {call.id for m in history for call in m.tool_calls}
    used.update(m.tool_call_id for m in history if m.tool_call_id)
    renamed: dict[str, str] = {}
    for call in calls:
        if call.id in used:
            # Gemini's thought signature rides at the end of the id (litellm's `__thought__`
            # separator): the suffix goes on the id part so the signature stays the model's.
            base, separator, signature = call.id.partition(THOUGHT_SIGNATURE_SEPARATOR)
            n = 2
            while f"{base}_{n}{separator}{signature}" in used:
                n += 1
            new = f"{base}_{n}{separator}{signature}"
            renamed[new] = call.id
            call.id = new
        used.add(call.id)
    return renamed
