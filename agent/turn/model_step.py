"""One model request of a turn: build, send, stream into the session, retry, finish.

The request is built by the budget step (which condenses or truncates to fit), saved beside
the stream (`/context` shows the last one) and streamed into an assistant message written on
its first token. Two failures are tried again: a provider that counts more tokens than we do
(the context is managed again with its count, once), and a retryable error before anything of
the answer arrived (agent/turn/retry.py: the countdown shown, then the same request again).
What streamed before any other failure is kept, marked interrupted, and the turn ends with the
error; an interrupt keeps it the same way, finishing the write even if Esc comes again.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from agent.context.budget import Budget
from agent.context.manage import manage_context
from agent.context.pipeline import BuildResult, TokenBreakdown
from agent.llm.client import ChatRequest, stream_chat
from agent.llm.errors import ContextTooLongError, LLMError
from agent.llm.result import StreamResult
from agent.session.models import Message, now_ms
from agent.settings.schema import ContextSettings
from agent.turn.budget_step import TurnContextHost
from agent.turn.events import Event, Notice, TurnError, Usage
from agent.turn.policies import TurnPolicies
from agent.turn.retry import RetryPolicy
from agent.turn.state import TurnState
from agent.turn.stream_writer import StreamWriter
from agent.turn.tool_steps import uninterruptible
from agent.turn.writer import SessionWriter

log = logging.getLogger("agent.turn.loop")


class ModelStep:
    """An agent's model requests: its `state` (builder, model, history, cost), `writer`, budget
    step (`host`), `retry` policy and turn `policies` (the tools a request may carry);
    `offered_tools`, `budget` and `window` are the current model's."""

    def __init__(
        self,
        *,
        state: TurnState,
        writer: SessionWriter,
        host: TurnContextHost,
        retry: RetryPolicy,
        policies: TurnPolicies,
        emit: Callable[[Event], None],
        context: ContextSettings,
        offered_tools: Callable[[], list[dict[str, Any]]],
        budget: Callable[[], Budget],
        window: Callable[[], int],
    ) -> None:
        self.state = state
        self.writer = writer
        self.host = host
        self.retry = retry
        self.policies = policies
        self.emit = emit
        self.context = context
        self.offered_tools = offered_tools
        self.budget = budget
        self.window = window

    async def run(self) -> Message | None:
        """One request (with retries). Returns the final assistant message, or None on error."""
        build = await self._build()
        overflowed = False
        attempts = self.retry.attempts()
        while True:
            self.emit(
                Usage(
                    context_tokens=build.tokens.total,
                    context_window=self.window(),
                    session_cost=self.state.session_cost,
                )
            )
            request = self.state.builder.chat_request(build, self.policies.offered_tools(self.offered_tools()))
            saved = self._save_request(request, build)
            stream = self._stream(build)
            try:
                result = await stream_chat(
                    request, on_text=stream.on_text, into=stream.partial, on_thinking=stream.on_thinking
                )
            except ContextTooLongError as exc:
                if stream.message is None and not overflowed:
                    # The provider counts more than we do: condense (or truncate) and retry once.
                    overflowed = True
                    log.warning("context too long at %d tokens (our count): %s", build.tokens.total, exc)
                    build = await self._build(rejected=build.tokens)
                    continue
                await stream.finish(exc.partial, status="interrupted", error=str(exc))
                self.emit(TurnError(message=str(exc)))
                return None
            except LLMError as exc:
                partial: StreamResult | None = exc.partial
                # Only a failure before any of the answer arrived is retried: what streamed
                # (text on screen, or a half-sent tool call) is kept and the turn ends instead.
                streamed = stream.message is not None or bool(partial and partial.partial_tool_calls)
                if not streamed and await attempts.again(exc):  # the wait: an interrupt cancels it
                    continue
                kept = await stream.finish(partial, status="interrupted", error=str(exc))
                note = " What arrived is kept; send a message to continue." if kept is not None else ""
                self.emit(TurnError(message=f"{exc}{note}{attempts.gave_up()}"))
                return None
            except asyncio.CancelledError:
                await uninterruptible(stream.finish(stream.partial, status="interrupted"))
                raise
            finally:
                await uninterruptible(_settled(saved))
            return await self._finish(stream, request, build, result)

    async def _build(self, rejected: TokenBreakdown | None = None) -> BuildResult:
        """The request as the budget step makes it fit; `rejected`: the count of the one the
        provider found too long."""
        history = await self.writer.history()
        managed = await manage_context(history, self.host, budget=self.budget(), cfg=self.context, rejected=rejected)
        return managed.build

    def _stream(self, build: BuildResult) -> StreamWriter:
        return StreamWriter(
            self.writer,
            self.emit,
            model=self.state.model,
            history=lambda: self.state.history or [],
            meta=self.state.builder.sent_record(build),
        )

    async def _finish(
        self, stream: StreamWriter, request: ChatRequest, build: BuildResult, result: StreamResult
    ) -> Message | None:
        cut = result.finish_reason == "length"
        message = await stream.finish(
            result, status="ok", estimated_tokens=build.tokens.total, cut_at=request.max_tokens if cut else None
        )
        if cut:
            self.emit(Notice(message=cut_off_text(request.max_tokens)))
        self.state.session_cost += result.cost
        self.emit(
            Usage(
                context_tokens=build.tokens.total,
                context_window=self.window(),
                prompt_tokens_reported=result.prompt_tokens,
                completion_tokens=result.completion_tokens or 0,
                cache_read_tokens=self._cache_reads(result),
                session_cost=self.state.session_cost,
            )
        )
        return message

    def _cache_reads(self, result: StreamResult) -> int | None:
        """The answer's prompt-cache reads for the status bar; None (nothing shown) for a
        model whose provider does not cache, rather than a meaningless "cache 0%"."""
        caches = self.state.builder.policy.mode == "auto" or result.cache_read_tokens or result.cache_write_tokens
        return result.cache_read_tokens if caches else None

    def _save_request(self, request: ChatRequest, build: BuildResult) -> asyncio.Future[None]:
        """Keep the request as it goes out (`/context` shows it), written beside the stream.

        Serialised now: the provider adapter may edit the dicts while it sends them. The
        messages' JSON is the request's own (`ChatRequest.messages_json`), which the fast path
        sends too: a long session's messages are encoded once per request, not twice."""
        rest = json.dumps(
            {
                "tools": request.tools,
                "params": {
                    "temperature": request.temperature,
                    "timeout": request.timeout,
                    "max_tokens": request.max_tokens,
                },
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )
        body = '{"messages":' + request.messages_json() + "," + rest[1:]
        sent_at = build.cache.at if build.cache is not None else now_ms()
        store = self.writer.store
        write = store.save_request(self.state.session.id, sent_at=sent_at, model=request.model, request_json=body)
        return asyncio.ensure_future(write)


def cut_off_text(max_tokens: int | None) -> str:
    """The notice for an answer that stopped at the output limit (finish_reason "length")."""
    limit = f" (llm.max_output_tokens = {max_tokens})" if max_tokens is not None else ""
    return f"the answer was cut off at the model's output limit{limit}."


async def _settled(write: asyncio.Future[None]) -> None:
    """Wait for a write that only serves display (the last request): its failure is logged."""
    try:
        await write
    except Exception:
        log.exception("could not keep the last request")
