"""The hooks of one agent: which run for an event, what they are told, what their answers do.

The loop (agent/turn/), the tool registry (through `ToolContext.hooks`) and the runtime ask
this object at each point Claude Code runs hooks; it answers in their terms (a refusal, a
context to add, a reason to go on) and shows the user every warning as a notice through
`warn`. Matching hooks of one event run at the same time, each once per distinct command.
Nothing here keeps per-call state: a message's subagent calls run their hooks concurrently.
This package imports neither turn/ nor a front end; they call it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.hooks.answer import HookAnswer, Permission, Verdict, clip, combine, json_object, read_answer
from agent.hooks.claude_shape import cairn_input, claude_call
from agent.hooks.matcher import matches
from agent.hooks.names import EVENTS
from agent.hooks.runner import run_hook
from agent.hooks.sources import HookSpec, load_specs

# How often one turn's Stop hooks may send the model back to work (Claude Code leaves the
# guard to the hook, through `stop_hook_active`; a hook that ignores it must not loop for ever).
MAX_STOP_CONTINUES = 3
# Events only the user's own conversation runs (a subagent's child has no prompt, no stop of
# its own and no session to start).
TURN_EVENTS = frozenset({"UserPromptSubmit", "Stop", "SessionStart", "Notification"})
Warn = Callable[[str, str], None]  # (message, "info" | "warning")


class HookBlocked(Exception):
    """A UserPromptSubmit hook refused the prompt; the text is for the user."""


@dataclass(frozen=True)
class ToolGate:
    """What the PreToolUse hooks decided about one call. `refusal`: the call does not run and
    this is its result for the model. `arguments`: the hooks' `updatedInput`, in cairn's names."""

    refusal: str | None = None
    permission: Permission | None = None
    arguments: dict[str, Any] | None = None


class Hooks:
    def __init__(
        self,
        settings: Any,
        *,
        session_id: Callable[[], str],
        permissions: Callable[[], Any],
        warn: Warn,
        turn_events: bool = True,
    ) -> None:
        specs, self.problems = load_specs(settings)
        self.workspace = Path(settings.workspace)
        self.session_id = session_id
        self.permissions = permissions  # the agent's Permissions (agent/tools/permissions.py), read per run
        self.warn = warn
        self.by_event: dict[str, list[HookSpec]] = {
            event: [s for s in specs if s.event == event and (turn_events or event not in TURN_EVENTS)]
            for event in EVENTS
        }
        self._background: set[asyncio.Future] = set()
        self._starting: asyncio.Future | None = None  # the SessionStart hooks, until a prompt takes their context

    def has(self, event: str) -> bool:
        return bool(self.by_event.get(event))

    # -- running -------------------------------------------------------------------------
    async def _run(self, event: str, fields: dict[str, Any], tool: str | None = None) -> Verdict:
        specs = self.by_event.get(event) or []
        if tool is not None:
            specs = [s for s in specs if matches(s.matcher, tool)]
        unique = list({(s.command, s.claude): s for s in specs}.values())
        if not unique:
            return Verdict()
        answers = await asyncio.gather(*(self._one(spec, fields, tool) for spec in unique))
        verdict = combine(list(answers))
        for warning in verdict.warnings:
            self.warn(warning, "warning")
        for message in verdict.messages:
            self.warn(message, "info")
        return verdict

    async def _one(self, spec: HookSpec, fields: dict[str, Any], tool: str | None) -> HookAnswer:
        refused = spec.refusal(self.workspace)  # a project's hook whose script changed since it was trusted
        if refused is not None:  # a guard that cannot run fails closed: its call does not run either
            return HookAnswer(warning=refused, block=refused if spec.event == "PreToolUse" else None)
        payload = {
            "session_id": self.session_id(),
            "cwd": str(self.workspace),
            "hook_event_name": spec.event,
            "permission_mode": claude_mode(self.permissions()),
            **fields,
        }
        if tool is not None:  # as Claude Code shows its tools, whichever file configured the hook (SPEC §13 item 9)
            payload["tool_name"], payload["tool_input"] = claude_call(tool, fields["tool_input"], self.workspace)
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", errors="replace")
        run = await run_hook(spec.command, data, cwd=self.workspace, timeout=spec.timeout)
        if run.timed_out:
            return HookAnswer(
                warning=f"{spec.event} hook {spec.label} timed out after {spec.timeout:g} s and was killed; "
                f"cairn went on without it."
            )
        answer = read_answer(spec.event, run.exit_code, run.stdout, run.stderr or run.error, label=spec.label)
        if answer.updated_input is not None and tool is not None:
            original = fields["tool_input"]
            updated = cairn_input(tool, answer.updated_input, original)
            answer = dataclasses.replace(answer, updated_input={**original, **updated})
        return answer

    def _later(self, work: Awaitable[Any]) -> asyncio.Future:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    # -- the events ----------------------------------------------------------------------
    async def pre_tool(self, tool: str, arguments: dict[str, Any], call_id: str) -> ToolGate | None:
        """PreToolUse: None when no hook matched (the usual case, at no cost)."""
        if not self.has("PreToolUse"):
            return None
        fields = {"tool_name": tool, "tool_input": arguments, "tool_use_id": call_id}
        verdict = await self._run("PreToolUse", fields, tool)
        refusal = verdict.block
        if verdict.stop is not None:
            refusal = "\n".join(t for t in (refusal, verdict.stop or "stopped by a PreToolUse hook") if t)
        return ToolGate(refusal=refusal, permission=verdict.permission, arguments=verdict.updated_input)

    async def post_tool(self, tool: str, arguments: dict[str, Any], content: str, is_error: bool, call_id: str) -> str:
        """PostToolUse: what the hooks have to tell the model about the result ("" nothing)."""
        if not self.has("PostToolUse"):
            return ""
        fields = {
            "tool_name": tool,
            "tool_input": arguments,
            "tool_response": tool_response(content, is_error),
            "tool_use_id": call_id,
        }
        verdict = await self._run("PostToolUse", fields, tool)
        said = [t for t in (verdict.block, verdict.stop, verdict.context) if t]
        return "[PostToolUse hook]\n" + "\n\n".join(said) if said else ""

    async def user_prompt(self, prompt: str) -> str:
        """UserPromptSubmit (after the SessionStart hooks finished): the context for the model
        that goes with this prompt ("" none). Raises HookBlocked when a hook refused it."""
        context = []
        if self._starting is not None:
            starting, self._starting = self._starting, None
            started = await starting
            if started:
                context.append(f"[SessionStart hook]\n{started}")
        if self.has("UserPromptSubmit"):
            verdict = await self._run("UserPromptSubmit", {"prompt": prompt})
            if verdict.block is not None or verdict.stop is not None:
                why = verdict.block if verdict.block is not None else verdict.stop or "no reason given"
                raise HookBlocked(f"A UserPromptSubmit hook blocked the prompt: {why}")
            if verdict.context:
                context.append(f"[UserPromptSubmit hook]\n{verdict.context}")
        return "\n\n".join(context)

    async def stop(self, active: bool) -> str | None:
        """Stop: the reason the hooks give for the model to go on, or None to end the turn.
        `active`: this turn already went on for a Stop hook (`stop_hook_active`)."""
        if not self.has("Stop"):
            return None
        verdict = await self._run("Stop", {"stop_hook_active": active})
        if verdict.stop is not None:  # `continue: false` wins: the turn ends
            return None
        return verdict.block

    def session_started(self, source: str) -> None:
        """SessionStart (`startup`, `resume`, `clear`), in the background: its context waits
        for the next prompt. The problems found loading the hooks are told here, once."""
        for problem in self.problems:
            self.warn(problem, "warning")
        self.problems = []
        if self.has("SessionStart"):
            previous = self._starting
            if previous is not None:
                previous.cancel()
            self._starting = self._later(self._session_context(source))

    async def _session_context(self, source: str) -> str:
        verdict = await self._run("SessionStart", {"source": source})
        if verdict.block is not None:  # exit 2 cannot stop a session: the user sees why
            self.warn(f"SessionStart hook: {verdict.block}", "warning")
        return verdict.context

    async def pre_compact(self, trigger: str, instructions: str | None) -> None:
        """PreCompact (`manual` or `auto`): told, never asked: the condense goes ahead."""
        if not self.has("PreCompact"):
            return
        fields = {"trigger": trigger, "custom_instructions": instructions or ""}
        verdict = await self._run("PreCompact", fields)
        if verdict.block is not None:
            self.warn(f"PreCompact hook: {verdict.block}", "warning")

    def notify(self, message: str) -> None:
        """Notification, in the background: an approval waits; the dialog does not wait for it."""
        if self.has("Notification"):
            self._later(self._notification(message))

    async def _notification(self, message: str) -> None:
        verdict = await self._run("Notification", {"message": message})
        if verdict.block is not None:
            self.warn(f"Notification hook: {verdict.block}", "warning")

    def notifying(self, approver: Any) -> Any:
        """`approver`, telling the Notification hooks whenever it is about to ask the user."""
        if approver is None or not self.has("Notification"):
            return approver

        async def ask(request: Any) -> Any:
            self.notify(f"cairn needs your permission: {getattr(request, 'title', 'a tool call')}")
            return await approver(request)

        return ask

    async def close(self) -> None:
        """Stop what still runs in the background (its process groups are killed)."""
        pending = list(self._background)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        self._starting = None


def tool_response(content: str, is_error: bool) -> dict[str, Any]:
    """A result as PostToolUse hooks read it: the tool's JSON object when its text is one (a
    command's `stdout`, `stderr`, `exitCode`), else its text as `content`; `success` either way."""
    data = json_object(content) if content.startswith("{") else None
    out: dict[str, Any] = dict(data) if data is not None else {"content": clip(content, 1_000_000)}
    out.setdefault("success", not is_error)
    return out


def claude_mode(permissions: Any) -> str:
    """The permission mode as Claude Code names it (`bypassPermissions` for --yolo)."""
    mode = getattr(permissions, "mode", "default")
    return "bypassPermissions" if getattr(permissions, "yolo", False) and mode != "plan" else str(mode)
