"""The hooks of one agent: which run for an event, what they are told, what their answers do.

The loop (agent/turn/), the tool registry (through `ToolContext.hooks`), a subagent's runner
(agent/turn/children.py) and the runtime ask this object at each point Claude Code runs hooks;
it answers in their terms (a refusal, a context to add, a reason to go on, a permission) and
shows the user every warning as a notice through `warn`. Matching hooks of one event run at
the same time, each once per distinct command. Every payload carries what Claude Code's does:
`session_id`, `transcript_path` (agent/hooks/transcript.py, brought up to date first), `cwd`,
`hook_event_name`, `permission_mode`, and Claude Code's tool names and arguments whichever
file configured the hook. Nothing here keeps per-turn state beyond the arguments of the calls
in flight (by call id, for a PermissionRequest) and the idle timer: a message's subagent calls
run their hooks concurrently. The events of a session's life (start, end, notifications,
permission questions) are agent/hooks/lifecycle.py's. This package imports neither turn/ nor
a front end; they call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agent.hooks.answer import Permission, clip, json_object
from agent.hooks.lifecycle import SessionHooks
from agent.hooks.names import CLAUDE_AGENTS

if TYPE_CHECKING:
    from agent.session.models import Message

# How often one turn's Stop hooks (or a subagent's SubagentStop hooks) may send the model back
# to work: Claude Code's bound (8 consecutive blocks; the hook is asked to guard itself through
# `stop_hook_active`, and one that ignores it must not loop for ever).
MAX_STOP_CONTINUES = 8


class HookBlocked(Exception):
    """A UserPromptSubmit hook refused the prompt; the text is for the user."""


@dataclass(frozen=True)
class ToolGate:
    """What the PreToolUse hooks decided about one call. `refusal`: the call does not run and
    this is its result for the model. `arguments`: the hooks' `updatedInput`, in cairn's names."""

    refusal: str | None = None
    permission: Permission | None = None
    arguments: dict[str, Any] | None = None


class Hooks(SessionHooks):
    """An agent's hooks: the session's (lifecycle.py) and those around a prompt, a tool call,
    a turn's end, a subagent and a compaction."""

    async def pre_tool(self, tool: str, arguments: dict[str, Any], call_id: str) -> ToolGate | None:
        """PreToolUse: None when no hook matched (the usual case, at no cost)."""
        self.calls[call_id] = arguments  # for a PermissionRequest (a child's: its parent's hooks ask)
        if not self.has("PreToolUse"):
            return None
        fields = {"tool_name": tool, "tool_input": arguments, "tool_use_id": call_id}
        verdict = await self._run("PreToolUse", fields, tool)
        refusal = verdict.block
        if verdict.stop is not None:
            refusal = "\n".join(t for t in (refusal, verdict.stop or "stopped by a PreToolUse hook") if t)
        if refusal is not None:
            self.calls.pop(call_id, None)  # it will not run: no question, no PostToolUse
        elif verdict.updated_input is not None and call_id in self.calls:
            self.calls[call_id] = verdict.updated_input
        return ToolGate(refusal=refusal, permission=verdict.permission, arguments=verdict.updated_input)

    async def post_tool(self, tool: str, arguments: dict[str, Any], content: str, is_error: bool, call_id: str) -> str:
        """PostToolUse after a result, PostToolUseFailure after an error, as Claude Code runs
        them: what the hooks have to tell the model about it ("" nothing)."""
        self.calls.pop(call_id, None)
        event = "PostToolUseFailure" if is_error else "PostToolUse"
        if not self.has(event):
            return ""
        fields: dict[str, Any] = {"tool_name": tool, "tool_input": arguments, "tool_use_id": call_id}
        if is_error:
            fields.update(error=clip(content, 1_000_000), is_interrupt=False)
        else:
            fields["tool_response"] = tool_response(content, is_error)
        verdict = await self._run(event, fields, tool)
        said = [t for t in (verdict.block, verdict.stop, verdict.context) if t]
        return f"[{event} hook]\n" + "\n\n".join(said) if said else ""

    async def stop(self, active: bool) -> str | None:
        """Stop: the reason the hooks give for the model to go on, or None to end the turn.
        `active`: this turn already went on for a Stop hook (`stop_hook_active`)."""
        reason = None
        if self.has("Stop"):
            fields = {"stop_hook_active": active, "last_assistant_message": last_answer(self._history() or ())}
            reason = await self._stop("Stop", fields)
        if reason is None:
            self.waiting()
        return reason

    async def _stop(self, event: str, fields: dict[str, Any]) -> str | None:
        verdict = await self._run(event, fields)
        if verdict.stop is not None:  # `continue: false` wins: the turn ends
            return None
        return verdict.block

    async def user_prompt(self, prompt: str) -> str:
        """UserPromptSubmit (after the SessionStart hooks finished): the context for the model
        that goes with this prompt ("" none). Raises HookBlocked when a hook refused it."""
        self.stop_waiting()
        context = []
        started = await self.started_context()
        if started:
            context.append(f"[SessionStart hook]\n{started}")
        if self.has("UserPromptSubmit"):
            verdict = await self._run("UserPromptSubmit", {"prompt": prompt})
            if verdict.block is not None or verdict.stop is not None:
                why = verdict.block if verdict.block is not None else verdict.stop or "no reason given"
                hooks = ", ".join(verdict.blockers) or "a hook"
                raise HookBlocked(f"UserPromptSubmit hook {hooks} blocked the prompt: {why}")
            if verdict.context:
                context.append(f"[UserPromptSubmit hook]\n{verdict.context}")
        return "\n\n".join(context)

    async def subagent_started(self, agent_type: str, agent_id: str) -> str:
        """SubagentStart: the context its hooks add to the child's instructions ("" none)."""
        if not self.has("SubagentStart"):
            return ""
        fields = {"agent_id": agent_id, "agent_type": CLAUDE_AGENTS.get(agent_type, agent_type)}
        verdict = await self._run("SubagentStart", fields)
        return verdict.context

    async def subagent_stopped(
        self, agent_type: str, agent_id: str, messages: Sequence[Message], *, active: bool
    ) -> str | None:
        """SubagentStop: the reason its hooks give for the child to go on, or None to let it
        finish. The child's transcript (its own session's) is `agent_transcript_path`."""
        if not self.has("SubagentStop"):
            return None
        path = self.transcript.sync(agent_id, messages, self.workspace, sidechain=True)
        fields = {
            "stop_hook_active": active,
            "agent_id": agent_id,
            "agent_type": CLAUDE_AGENTS.get(agent_type, agent_type),
            "agent_transcript_path": str(path),
            "last_assistant_message": last_answer(messages),
        }
        return await self._stop("SubagentStop", fields)

    async def pre_compact(self, trigger: str, instructions: str | None) -> str | None:
        """PreCompact (`manual` or `auto`): why a hook blocks the compaction (exit 2 or
        `decision: block`, as Claude Code's), or None to go ahead."""
        if not self.has("PreCompact"):
            return None
        fields = {"trigger": trigger, "custom_instructions": instructions or ""}
        verdict = await self._run("PreCompact", fields)
        return verdict.block


def last_answer(messages: Sequence[Message]) -> str:
    """The text of the last assistant message that has one (`last_assistant_message`)."""
    return next((m.content for m in reversed(messages) if m.role == "assistant" and m.content), "")


def tool_response(content: str, is_error: bool) -> dict[str, Any]:
    """A result as PostToolUse hooks read it: the tool's JSON object when its text is one (a
    command's `stdout`, `stderr`, `exitCode`), else its text as `content`; `success` either way."""
    data = json_object(content) if content.startswith("{") else None
    out: dict[str, Any] = dict(data) if data is not None else {"content": clip(content, 1_000_000)}
    out.setdefault("success", not is_error)
    return out
