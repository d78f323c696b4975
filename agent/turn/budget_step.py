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
from datetime import UTC, datetime
from typing import Any, Protocol

from agent.context.budget import Budget, budget_for
from agent.context.condense import CondenseResult, condense, split_at_last_summary
from agent.context.pipeline import BuildResult, TruncateTo
from agent.session.models import ContextEvent, ContextTrigger, Message, now_ms
from agent.turn.events import CondenseStarted, ContextManaged
from agent.turn.writer import SessionWriter


class TurnAgent(Protocol):
    """What the budget step uses of the agent hosting it (agent/turn/loop.py), as a shape:
    the loop imports this module, so this module does not import the loop."""

    session: Any
    settings: Any
    builder: Any
    registry: Any
    system_prompt: str
    model: str
    store: Any
    ctx: Any
    writer: SessionWriter
    hooks: Any  # agent.hooks.dispatch.Hooks
    session_cost: float

    @property
    def budget(self) -> Budget: ...

    def emit(self, event: Any) -> None: ...

    def offered_tools(self) -> list[dict[str, Any]]: ...

    async def complete(self, model: str, messages: list[dict[str, Any]]) -> Any: ...

    async def current_history(self) -> list[Message]: ...


log = logging.getLogger("agent.context")


def summary_cost(message: Message) -> float:
    """What asking for this condense summary cost (0 for any other message): part of the
    session's cost, as /cost counts it."""
    condensed = message.meta.get("condensed") if message.kind == "summary" else None
    return float(condensed.get("cost") or 0.0) if isinstance(condensed, dict) else 0.0


class AgentContextHost:
    def __init__(self, agent: TurnAgent) -> None:
        self.agent = agent

    @property
    def session_id(self) -> str:
        return self.agent.session.id

    @property
    def _counter(self):
        return self.agent.builder.counter

    async def build(self, history: list[Message], truncate: TruncateTo | None, flush: bool = False) -> BuildResult:
        agent = self.agent
        build = functools.partial(
            agent.builder.build,
            history,
            now_ms=now_ms(),
            tools=agent.offered_tools(),
            system_prompt=agent.system_prompt,
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

        cfg = self.agent.settings.context
        if not paths:
            return ""
        return fold_files(
            paths,
            workspace=self.agent.settings.workspace,
            max_line_span=cfg.fold_max_line_span,
            max_tokens=cfg.fold_max_tokens,
            count_tokens=self._counter.count_text,
        ).text

    def truncate_to(self, max_tokens: int) -> TruncateTo:
        cfg = self.agent.settings.context
        return TruncateTo(
            max_tokens=max_tokens,
            middle_start=cfg.truncation_middle_start,
            middle_end=cfg.truncation_middle_end,
            fold=self.fold,
        )

    def count(self, message: Message) -> int:
        return self._counter.count_stored(message)

    def condense_started(self, trigger: ContextTrigger, tokens: int) -> None:
        self.agent.emit(CondenseStarted(trigger=trigger, tokens=tokens))

    def _summary_budget(self, model: str) -> Budget:
        agent = self.agent
        if model == agent.model:
            return agent.budget
        from agent.llm.models import model_limits

        limits = model_limits(agent.settings, model)
        return budget_for(
            agent.settings, model, window=limits.context_window, max_output_tokens=limits.max_output_tokens
        )

    async def condense(
        self, history: list[Message], trigger: ContextTrigger, instructions: str | None
    ) -> CondenseResult:
        agent = self.agent
        cfg = agent.settings.context
        model = cfg.condense_model or agent.model
        await agent.hooks.pre_compact("manual" if trigger == "manual" else "auto", instructions)  # told, not asked
        result = await condense(
            history,
            model=model,
            api_base=agent.settings.api_base,
            api_key=agent.settings.api_key,
            instructions=instructions,
            workspace=agent.settings.workspace,
            automatic=trigger != "manual",
            fold=self.fold,
            keep_recent_user_tokens=cfg.condense_keep_recent_user_tokens,
            count=self.count,
            max_request_tokens=self._summary_budget(model).allowed,
            send=agent.complete,
        )
        result.summary.meta["condensed"]["trigger"] = trigger  # the chat marker names it on resume
        # The summary's bill is the session's, charged as it happens: a headless run's guard
        # reads session_cost around each request (--max-cost), and a repository whose files
        # fill the window makes cairn summarise again and again.
        agent.session_cost += summary_cost(result.summary)
        return result

    async def commit(self, result: CondenseResult) -> list[Message]:
        """The summary becomes the head; the originals stay, marked; the range is archived."""
        agent = self.agent
        history = await agent.current_history()
        _, replaced = split_at_last_summary(history)
        summary = result.summary
        self._counter.remember_count(summary)
        await agent.writer.append(summary)
        # The prompt not yet answered was left out of the summary: it stays undimmed.
        unanswered = {m.meta.get("restated_from") for m in result.restate}
        await agent.writer.persist(
            agent.store.mark_condensed([m.id for m in replaced if m.id not in unanswered], summary.id)
        )
        # The newest user message again, after the summary: the request starts at the summary
        # and must end with the user's prompt, verbatim (condense.restated).
        for message in result.restate:
            await agent.writer.append(message)
        files = agent.ctx.context_files
        if files is not None:
            when = datetime.fromtimestamp(summary.created_at / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
            hint = f"conversation archive: {len(replaced)} messages condensed {when}"
            try:
                await files.add_history(
                    result.replaced_first_id, result.replaced_last_id, result.history_text, hint=hint
                )
            except Exception:  # the summary stands; the archive can be rebuilt from the store
                log.exception("could not write the history context file")
        return await agent.current_history()

    async def record(self, event: ContextEvent, summary: Message | None) -> None:
        agent = self.agent
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
            await agent.writer.persist(agent.store.record_context_event(event))
        except Exception:  # a metric must never break a turn
            log.exception("could not record the context event")
        agent.emit(ContextManaged(event=event, summary=summary))
