"""The loop's side of the budget step (agent/context/manage.py's ContextHost).

manage.py decides when to condense or truncate; this module does what that needs from a
running session: builds requests the way the loop sends them, calls the summary model,
stores the summary (and marks the originals, writes the history context file), records
each event and tells the front end.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from agent.context.budget import Budget, budget_for
from agent.context.condense import CondenseError, CondenseResult, condense, split_at_last_summary
from agent.context.pipeline import BuildResult, TruncateTo
from agent.context.tokens import TokenCounter
from agent.hooks.dispatch import Hooks
from agent.llm.result import StreamResult
from agent.session.models import ContextEvent, ContextTrigger, Message, now_ms
from agent.settings.schema import Settings
from agent.tools.base import ToolContext
from agent.turn.events import CondenseStarted, ContextManaged, Event
from agent.turn.state import TurnState
from agent.turn.writer import SessionWriter

Send = Callable[[str, list[dict[str, Any]]], Awaitable[StreamResult]]  # (model, messages) → the answer


log = logging.getLogger("agent.context")


def summary_cost(message: Message) -> float:
    """What asking for this condense summary cost (0 for any other message): part of the
    session's cost, as /cost counts it."""
    condensed = message.meta.get("condensed") if message.kind == "summary" else None
    return float(condensed.get("cost") or 0.0) if isinstance(condensed, dict) else 0.0


class TurnContextHost:
    """manage.py's `ContextHost` for one agent: its `state` (session, model, builder, system
    prompt, cost), `writer`, tool context (the context files), hooks (PreCompact) and events;
    `offered_tools` (what a build carries), `budget` (the model's) and `send` (a side request,
    the summary: the agent's `complete`)."""

    def __init__(
        self,
        *,
        settings: Settings,
        state: TurnState,
        writer: SessionWriter,
        ctx: ToolContext,
        hooks: Hooks,
        emit: Callable[[Event], None],
        offered_tools: Callable[[], list[dict[str, Any]]],
        budget: Callable[[], Budget],
        send: Send,
    ) -> None:
        self.settings = settings
        self.state = state
        self.writer = writer
        self.ctx = ctx
        self.hooks = hooks
        self.emit = emit
        self.offered_tools = offered_tools
        self.budget = budget
        self.send = send

    @property
    def session_id(self) -> str:
        return self.state.session.id

    @property
    def _counter(self) -> TokenCounter:
        return self.state.builder.counter

    async def build(self, history: list[Message], truncate: TruncateTo | None, flush: bool = False) -> BuildResult:
        build = functools.partial(
            self.state.builder.build,
            history,
            now_ms=now_ms(),
            tools=self.offered_tools(),
            system_prompt=self.state.system_prompt,
            truncate=truncate,
            flush=flush,
        )
        if truncate is None:
            return build()
        # Truncation folds files (disk reads, tree-sitter parses): off the event loop.
        return await asyncio.to_thread(build)

    def fold(self, paths: list[str]) -> str:
        """Seed 001 file folding of `paths` as they are on disk now."""
        from agent.context.folding import fold_files

        cfg = self.settings.context
        if not paths:
            return ""
        return fold_files(
            paths,
            workspace=self.settings.workspace,
            max_line_span=cfg.fold_max_line_span,
            max_tokens=cfg.fold_max_tokens,
            count_tokens=self._counter.count_text,
        ).text

    def truncate_to(self, max_tokens: int) -> TruncateTo:
        cfg = self.settings.context
        return TruncateTo(
            max_tokens=max_tokens,
            middle_start=cfg.truncation_middle_start,
            middle_end=cfg.truncation_middle_end,
            fold=self.fold,
        )

    def count(self, message: Message) -> int:
        return self._counter.count_stored(message)

    def condense_started(self, trigger: ContextTrigger, tokens: int) -> None:
        self.emit(CondenseStarted(trigger=trigger, tokens=tokens))

    def _summary_budget(self, model: str) -> Budget:
        if model == self.state.model:
            return self.budget()
        from agent.llm.models import model_limits

        limits = model_limits(self.settings, model)
        return budget_for(
            self.settings, model, window=limits.context_window, max_output_tokens=limits.max_output_tokens
        )

    async def condense(
        self, history: list[Message], trigger: ContextTrigger, instructions: str | None
    ) -> CondenseResult:
        settings = self.settings
        cfg = settings.context
        model = cfg.condense_model or self.state.model
        blocked = await self.hooks.pre_compact("manual" if trigger == "manual" else "auto", instructions)
        if blocked is not None:  # exit 2, as Claude Code's: no summary (an automatic one truncates instead)
            raise CondenseError(f"A PreCompact hook blocked the compaction: {blocked}")
        result = await condense(
            history,
            model=model,
            api_base=settings.api_base,
            api_key=settings.api_key,
            instructions=instructions,
            workspace=settings.workspace,
            automatic=trigger != "manual",
            fold=self.fold,
            keep_recent_user_tokens=cfg.condense_keep_recent_user_tokens,
            count=self.count,
            max_request_tokens=self._summary_budget(model).allowed,
            send=self.send,
        )
        result.summary.meta["condensed"]["trigger"] = trigger  # the chat marker names it on resume
        # The summary's bill is the session's, charged as it happens: a headless run's guard
        # reads session_cost around each request (--max-cost), and a repository whose files
        # fill the window makes cairn summarise again and again.
        self.state.session_cost += summary_cost(result.summary)
        return result

    async def commit(self, result: CondenseResult) -> list[Message]:
        """The summary becomes the head; the originals stay, marked; the range is archived."""
        writer = self.writer
        history = await writer.history()
        _, replaced = split_at_last_summary(history)
        summary = result.summary
        self._counter.remember_count(summary)
        await writer.append(summary)
        # The prompt not yet answered was left out of the summary: it stays undimmed.
        unanswered = {m.meta.get("restated_from") for m in result.restate}
        await writer.persist(
            writer.store.mark_condensed([m.id for m in replaced if m.id not in unanswered], summary.id)
        )
        # The newest user message again, after the summary: the request starts at the summary
        # and must end with the user's prompt, verbatim (condense.restated).
        for message in result.restate:
            await writer.append(message)
        files = self.ctx.context_files
        if files is not None:
            when = datetime.fromtimestamp(summary.created_at / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
            hint = f"conversation archive: {len(replaced)} messages condensed {when}"
            try:
                await files.add_history(
                    result.replaced_first_id, result.replaced_last_id, result.history_text, hint=hint
                )
            except Exception:  # the summary stands; the archive can be rebuilt from the store
                log.exception("could not write the history context file")
        self.hooks.session_started("compact")  # SessionStart `compact`, as after Claude Code's compaction
        return await writer.history()

    async def record(self, event: ContextEvent, summary: Message | None) -> None:
        log.info(
            "%s (%s, %s): %d → %d tokens in %d ms%s",
            event.action,
            event.trigger,
            event.outcome,
            event.tokens_before,
            event.tokens_after,
            event.duration_ms,
            f" — {event.error}" if event.error else "",
        )
        try:
            await self.writer.persist(self.writer.store.record_context_event(event))
        except Exception:  # a metric must never break a turn
            log.exception("could not record the context event")
        self.emit(ContextManaged(event=event, summary=summary))
