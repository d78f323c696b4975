"""The conversation loop: user message → build → stream → tools → repeat until done.

Every message is written the moment it exists. An interrupt (task cancellation) stops
the stream or the running tool, kills its processes, keeps the partial text with
status=interrupted and gives every unanswered tool call a result, so the stored history
always makes a valid next request.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent.context.budget import Budget, budget_for
from agent.context.builder import RequestBuilder
from agent.context.condense import CondenseError
from agent.context.manage import compact, manage_context
from agent.hooks.dispatch import MAX_STOP_CONTINUES, HookBlocked
from agent.hooks.names import HOOK_CONTEXT_META
from agent.llm.client import ChatRequest, stream_chat
from agent.llm.errors import ContextTooLongError, LLMError
from agent.llm.http import ConnectionPool
from agent.llm.models import DiscoveredWindow, ModelLimits, model_limits
from agent.llm.result import StreamResult
from agent.prompt import build_system_prompt
from agent.session.errors import StoreError
from agent.session.loading import load_session_messages
from agent.session.models import Message, Session, now_ms
from agent.session.store import Store
from agent.settings.schema import Settings
from agent.tools.base import ToolContext
from agent.tools.modes import user_meta
from agent.tools.permissions import Approver, Permissions
from agent.tools.registry import default_registry
from agent.turn.attachments import attach_mentioned
from agent.turn.budget_step import AgentContextHost, summary_cost
from agent.turn.events import Event, Notice, Retrying, TurnError, TurnFinished, Usage, UserMessage
from agent.turn.hook_steps import agent_hooks, stop_hook_goes_on
from agent.turn.stream_writer import StreamWriter
from agent.turn.tool_steps import ToolSteps, uninterruptible
from agent.turn.writer import SessionWriter

log = logging.getLogger("agent.turn.loop")

# A model that keeps calling tools without ever answering is stopped here.
MAX_STEPS_PER_TURN = 200
TITLE_CHARS = 60

if TYPE_CHECKING:
    from agent.headless.limits import RunGuard


# Tools for the agent's own workflow (subagents, the todo list, plan mode's exit, skills) cost
# ~1,300 tokens in every request: a window this small (a 4,096-token local model) cannot spare
# them for the conversation, so there they are not offered (plan mode keeps its exit).
WORKFLOW_TOOLS = frozenset({"subagent", "todo-write", "exit-plan-mode", "skill-load"})
WORKFLOW_TOOLS_MIN_WINDOW = 16_000


class Agent:
    def __init__(
        self,
        *,
        settings: Settings,
        store: Store,
        session: Session,
        model: str,
        on_event: Callable[[Event], Any],
        approver: Approver | None,
        subagents: bool = True,
        connections: ConnectionPool | None = None,
        guard: RunGuard | None = None,
    ) -> None:
        self.settings = settings
        # The fast path's pooled HTTP client (agent/llm/http.py): one for the agent and its
        # subagents, so their requests reuse the provider's connection; closed by the runtime.
        self.connections = connections if connections is not None else ConnectionPool()
        self.store = store
        self.session = session
        # The head the session had when this process opened it: its first history load reads
        # up to there, so two processes continuing one session at once each go on from what
        # they opened (two branches), not from whatever the other stored meanwhile.
        self._opened_head = session.head_id
        self.on_event = on_event
        self.registry = default_registry()
        if subagents:  # a subagent's own child runs none (agent/turn/children.py)
            self._offer_subagents()
        # Hooks (agent/hooks/): a subagent's child runs only the tool hooks and PreCompact.
        self.hooks = agent_hooks(self, turn_events=subagents)
        self.permissions = Permissions.from_settings(settings, self.hooks.notifying(approver))
        self._offer_skills()
        self.ctx = ToolContext(
            workspace=settings.workspace,
            permissions=self.permissions,
            command_timeout=settings.tools.command_timeout,
            max_command_timeout=settings.tools.max_command_timeout,
            max_read_lines=settings.tools.max_read_lines,
            max_file_bytes=settings.tools.max_file_bytes,
            web=settings.web,
            hooks=self.hooks,
        )
        self.system_prompt = build_system_prompt(settings.workspace)
        self._attach_context_files()
        # Windows the models' server reported (Runtime asks it once per model; see `use_window`).
        self.discovered_windows: dict[str, DiscoveredWindow] = {}
        # The session's request builder: what its builds remember, its cache policy.
        self.builder = RequestBuilder(settings, model, self.discovered_windows, self.connections)
        self.set_model(model)
        self.history: list[Message] | None = None
        self.session_cost = 0.0
        self.writer = SessionWriter(store, lambda: self.session, self._load_history)
        self.tool_steps = ToolSteps(self)
        self.context_host = AgentContextHost(self)
        # Limits of an unattended run, asked before each request and tool call (headless only).
        self.guard: RunGuard | None = guard
        # Tell the model when the user switched the permission mode (a subagent's is fixed:
        # its brief says what it may do).
        self.announce_mode = True

    # -- configuration ------------------------------------------------------------
    def set_model(self, model: str) -> None:
        self.model = model
        self.builder.set_model(model)
        self._limits: ModelLimits | None = None
        self._budget: Budget | None = None

    @property
    def limits(self) -> ModelLimits:
        """Looked up on first use: litellm's model table is not needed to show a session."""
        if self._limits is None:
            self._limits = model_limits(self.settings, self.model, self.discovered_windows.get(self.model))
        return self._limits

    def use_window(self, model: str, found: DiscoveredWindow) -> None:
        """The window `model`'s server reported (agent/llm/models.py::probe_window): the
        limits and budget of that model are looked up again with it."""
        self.discovered_windows[model] = found
        if model == self.model:
            self._limits = None
            self._budget = None

    @property
    def budget(self) -> Budget:
        """Seed 001's threshold and allowed tokens for the current model."""
        if self._budget is None:
            limits = self.limits
            self._budget = budget_for(
                self.settings, self.model, window=limits.context_window, max_output_tokens=limits.max_output_tokens
            )
        return self._budget

    def offered_tools(self) -> list[dict[str, Any]]:
        """The tool definitions a request carries: the registry's, less the workflow tools in a
        window too small to spare them."""
        tools = self.registry.definitions()
        if self.limits.context_window >= WORKFLOW_TOOLS_MIN_WINDOW:
            return tools
        kept = {"exit-plan-mode"} if self.permissions.mode == "plan" else set()
        return [t for t in tools if t["function"]["name"] not in WORKFLOW_TOOLS - kept]

    def _offer_subagents(self) -> None:
        """The `subagent` tool, listing the agents this workspace defines (agent/subagents/)."""
        from agent.subagents.definitions import load_definitions
        from agent.subagents.tool import SubagentTool
        from agent.turn.children import ChildRunner

        def make_child(**kwargs: Any) -> Agent:
            return Agent(**kwargs, subagents=False, connections=self.connections)

        runner = ChildRunner(self, make_child, max_parallel=self.settings.agents.max_parallel)
        definitions = load_definitions(self.settings.workspace)
        self.registry.set_group("subagents", [SubagentTool(definitions, runner)])

    def _offer_skills(self) -> None:
        """The `skill-load` tool listing this workspace's skills (agent/skills/), found once: its
        description is part of the cached prefix. No skill, no tool: nothing in the request."""
        from agent.skills.catalog import discover
        from agent.skills.tool import SkillLoad

        self.skills = discover(self.settings.workspace)
        self.permissions.read_roots = self.skills.read_roots()
        if self.skills.skills:
            self.registry.set_group("skills", [SkillLoad(self.skills)])

    def _attach_context_files(self) -> None:
        """The context-* tools read this session's large outputs (seed 004)."""
        from agent.context.files.manager import ContextFiles

        self.ctx.context_files = ContextFiles(
            self.store, self.session.id, settings=self.settings.context, tool_definitions=self.registry.definitions
        )

    def switch_session(self, session: Session) -> None:
        self.session = session
        self._opened_head = session.head_id
        self._attach_context_files()
        self.builder = RequestBuilder(self.settings, self.model, self.discovered_windows, self.connections)
        self.history = None
        self.session_cost = 0.0
        self.permissions.always.clear()

    def emit(self, event: Event) -> None:
        try:
            self.on_event(event)
        except Exception:  # a rendering bug must never break the loop or lose data
            log.exception("event handler failed for %s", event.type)

    async def _load_history(self) -> list[Message]:
        if self.history is None:
            head, self._opened_head = self._opened_head, None  # later loads: the database's head
            self.history = await load_session_messages(self.store, self.session.id, head)
            self.session_cost = sum(float(m.meta.get("cost") or 0) + summary_cost(m) for m in self.history)
            await self.builder.images.load(self.history, self.store.get_blob)  # requests carry their bytes
        return self.history

    async def current_history(self) -> list[Message]:
        """A copy of the active path as the loop holds it."""
        return list(await self._load_history())

    # -- one turn -------------------------------------------------------------------
    async def run_turn(self, text: str) -> None:
        await self._load_history()
        status = "ok"
        stops = 0  # times a Stop hook sent the model back to work this turn
        try:
            hooked = await self.hooks.user_prompt(text)  # UserPromptSubmit: may refuse the prompt (HookBlocked)
            mode = user_meta(self.history or [], self.permissions.mode) if self.announce_mode else {}
            meta = {**await self._attach_images(text), **mode, **({HOOK_CONTEXT_META: hooked} if hooked else {})}
            user = await self.writer.append(Message(role="user", content=text, meta=meta))
            self.emit(UserMessage(message=user))
            if not self.session.title:
                title = " ".join(text.split())[:TITLE_CHARS]
                self.session = await self.writer.persist(self.store.update_session(self.session, title=title))
            if not self.session.agent:  # `@path`s (a subagent's task is the model's words, not the user's)
                await attach_mentioned(self, text)
            for _ in range(MAX_STEPS_PER_TURN):
                limit = self.guard.before_request(self.session_cost) if self.guard is not None else None
                if limit is not None:
                    self.emit(limit)
                    status = "limit"
                    break
                assistant = await self._model_step()
                if self.guard is not None:
                    self.guard.after_request(self.session_cost)
                if assistant is None:
                    status = "error"
                    break
                if not assistant.tool_calls:
                    if stops < MAX_STOP_CONTINUES and await stop_hook_goes_on(self, active=stops > 0):
                        stops += 1  # a Stop hook sent the model back to work, with its reason
                        continue
                    break
                if await self._run_tools(assistant):
                    status = "limit"
                    break
            else:
                self.emit(TurnError(message=f"Stopped after {MAX_STEPS_PER_TURN} tool steps in one turn."))
                status = "error"
        except asyncio.CancelledError:
            status = "interrupted"
            await uninterruptible(self._after_interrupt())
        except HookBlocked as exc:  # nothing was stored; the hook's reason is for the user
            self.emit(TurnError(message=str(exc)))
            status = "error"
        except StoreError as exc:  # already a sentence for the user (a full disk, …)
            log.exception("turn failed")
            self.emit(TurnError(message=str(exc)))
            status = "error"
        except Exception as exc:  # never a traceback on screen; the log has it
            log.exception("turn failed")
            self.emit(TurnError(message=f"{type(exc).__name__}: {exc}"))
            status = "error"
        self.emit(TurnFinished(status=status))

    async def _attach_images(self, text: str) -> dict[str, Any]:
        """A prompt's images (agent/images.py), stored before the message that names them."""
        from agent.images import prompt_images

        found = await asyncio.to_thread(
            prompt_images, text, self.settings.workspace, model=self.model, vision=self.builder.sees_images
        )
        for message, kind in found.notices:  # what was attached, and what was not and why
            self.emit(Notice(message=message, kind=kind))
        await self.writer.persist(self.builder.images.keep([a.data for a in found.attachments], self.store.put_blobs))
        return found.meta()

    async def _model_step(self) -> Message | None:
        """One request (with retries). Returns the final assistant message, or None on error."""
        managed = await manage_context(
            await self._load_history(), self.context_host, budget=self.budget, cfg=self.settings.context
        )
        build = managed.build
        overflow_retried = False
        attempt = 0
        while True:
            self.emit(
                Usage(
                    context_tokens=build.tokens.total,
                    context_window=self.limits.context_window,
                    session_cost=self.session_cost,
                )
            )
            tools = self.offered_tools()
            if self.guard is not None:
                tools = self.guard.offered_tools(tools)
            request = self.builder.chat_request(build, tools)
            saved = self._save_request(request, build)
            stream = StreamWriter(
                self.writer,
                self.emit,
                model=self.model,
                history=lambda: self.history or [],
                meta=self.builder.sent_record(build),
            )
            try:
                result = await stream_chat(
                    request, on_text=stream.on_text, into=stream.partial, on_thinking=stream.on_thinking
                )
            except ContextTooLongError as exc:
                if stream.message is None and not overflow_retried:
                    # The provider counts more than we do: condense (or truncate) and retry once.
                    overflow_retried = True
                    log.warning("context too long at %d tokens (our count): %s", build.tokens.total, exc)
                    managed = await manage_context(
                        await self._load_history(),
                        self.context_host,
                        budget=self.budget,
                        cfg=self.settings.context,
                        rejected=build.tokens,
                    )
                    build = managed.build
                    continue
                await stream.finish(exc.partial, status="interrupted", error=str(exc))
                self.emit(TurnError(message=str(exc)))
                return None
            except LLMError as exc:
                partial: StreamResult | None = exc.partial
                # Only a failure before any of the answer arrived is retried: what streamed
                # (text on screen, or a half-sent tool call) is kept and the turn ends instead.
                streamed = stream.message is not None or bool(partial and partial.partial_tool_calls)
                if not streamed and exc.retryable and attempt < self._retry_limit(exc):
                    attempt += 1
                    delay = self._retry_delay(attempt, exc)
                    self.emit(
                        Retrying(attempt=attempt, max_attempts=self._retry_limit(exc), delay=delay, reason=str(exc))
                    )
                    await asyncio.sleep(delay)  # an interrupt cancels the wait (and the turn)
                    continue
                kept = await stream.finish(partial, status="interrupted", error=str(exc))
                note = " What arrived is kept; send a message to continue." if kept is not None else ""
                if attempt:
                    note += f" (Gave up after {attempt} {'retry' if attempt == 1 else 'retries'}.)"
                self.emit(TurnError(message=f"{exc}{note}"))
                return None
            except asyncio.CancelledError:
                await uninterruptible(stream.finish(stream.partial, status="interrupted"))
                raise
            finally:
                await uninterruptible(_settled(saved))
            cut = result.finish_reason == "length"
            message = await stream.finish(
                result, status="ok", estimated_tokens=build.tokens.total, cut_at=request.max_tokens if cut else None
            )
            if cut:
                self.emit(Notice(message=cut_off_text(request.max_tokens)))
            self.session_cost += result.cost
            self.emit(
                Usage(
                    context_tokens=build.tokens.total,
                    context_window=self.limits.context_window,
                    prompt_tokens_reported=result.prompt_tokens,
                    completion_tokens=result.completion_tokens or 0,
                    cache_read_tokens=self._cache_reads(result),
                    session_cost=self.session_cost,
                )
            )
            return message

    def _cache_reads(self, result: StreamResult) -> int | None:
        """The answer's prompt-cache reads for the status bar; None (nothing shown) for a
        model whose provider does not cache, rather than a meaningless "cache 0%"."""
        caches = self.builder.policy.mode == "auto" or result.cache_read_tokens or result.cache_write_tokens
        return result.cache_read_tokens if caches else None

    async def complete(self, model: str, messages: list[dict[str, Any]]) -> StreamResult:
        """One request outside a turn's stream (the condense summary): the same client, key,
        timeout, temperature and retries as a turn, with the countdown shown."""
        side = self.guard.before_side_request() if self.guard is not None else None
        if side is not None:  # a summary is a request too: --max-turns bounds them all
            raise CondenseError(side.message)
        request = self.builder.summary_request(model, messages)
        attempt = 0
        while True:
            try:
                return await stream_chat(request)
            except LLMError as exc:
                if not exc.retryable or attempt >= self._retry_limit(exc):
                    raise
                attempt += 1
                delay = self._retry_delay(attempt, exc)
                self.emit(Retrying(attempt=attempt, max_attempts=self._retry_limit(exc), delay=delay, reason=str(exc)))
                await asyncio.sleep(delay)

    def _save_request(self, request: ChatRequest, build) -> asyncio.Future:
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
        write = self.store.save_request(self.session.id, sent_at=sent_at, model=request.model, request_json=body)
        return asyncio.ensure_future(write)

    async def compact(self, instructions: str | None = None) -> None:
        """`/compact [instructions]`: condense the conversation now (seed 001, manual trigger)."""
        status = "ok"
        try:
            history = await self._load_history()
            build = await self.context_host.build(history, None)
            await compact(history, self.context_host, instructions=instructions or None, tokens=build.tokens.total)
            after = await self.context_host.build(await self._load_history(), None)
            self.emit(
                Usage(
                    context_tokens=after.tokens.total,
                    context_window=self.limits.context_window,
                    session_cost=self.session_cost,
                )
            )
        except CondenseError as exc:
            self.emit(TurnError(message=str(exc)))
            status = "error"
        except asyncio.CancelledError:
            await self.writer.settle()
            status = "interrupted"
        except Exception as exc:  # never a traceback on screen; the log has it
            log.exception("compact failed")
            self.emit(TurnError(message=f"{type(exc).__name__}: {exc}"))
            status = "error"
        self.emit(TurnFinished(status=status))

    def _retry_limit(self, exc: LLMError) -> int:
        """How often `exc` is retried: llm.max_retries, or fewer for an error with its own short
        schedule (a refused connection or an unknown host: at most twice, see UnreachableError)."""
        limit = self.settings.llm.max_retries
        return limit if exc.retry_delays is None else min(limit, len(exc.retry_delays))

    def _retry_delay(self, attempt: int, exc: LLMError) -> float:
        """Seconds before retry number `attempt`: the error's own schedule (never above
        llm.retry_max_delay), else the configured backoff (Retry-After honoured)."""
        if exc.retry_delays:
            return min(exc.retry_delays[min(attempt, len(exc.retry_delays)) - 1], self.settings.llm.retry_max_delay)
        return self._backoff(attempt, getattr(exc, "retry_after", None))

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        llm = self.settings.llm
        if retry_after is not None:
            return min(retry_after, llm.retry_max_delay)
        delay = min(llm.retry_max_delay, llm.retry_base_delay * 2 ** (attempt - 1))
        return delay * random.uniform(0.5, 1.0)

    async def _run_tools(self, assistant: Message) -> bool:
        """Run the message's tool calls (agent/turn/tool_steps.py); True when a run limit stopped them."""
        return await self.tool_steps.run(assistant)

    async def _after_interrupt(self) -> None:
        """Kill what still runs and answer every open tool call, so history stays valid."""
        await self.tool_steps.after_interrupt()


def cut_off_text(max_tokens: int | None) -> str:
    """The notice for an answer that stopped at the output limit (finish_reason "length")."""
    limit = f" (llm.max_output_tokens = {max_tokens})" if max_tokens is not None else ""
    return f"the answer was cut off at the model's output limit{limit}."


async def _settled(write: asyncio.Future) -> None:
    """Wait for a write that only serves display (the last request): its failure is logged."""
    try:
        await write
    except Exception:
        log.exception("could not keep the last request")
