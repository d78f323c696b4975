"""Running one event's matching hooks with Claude Code's payload: the base of `Hooks`.

Which hooks an event selects (a tool matcher by the tool's name, Claude Code's or cairn's; a
SessionStart, SessionEnd, PreCompact, Notification or Subagent matcher by the field Claude
Code matches), the payload every hook is given (`session_id`, `transcript_path`, `cwd`,
`hook_event_name`, `permission_mode`, the event's fields, a tool call in Claude Code's names),
and the answers combined. agent/hooks/lifecycle.py and agent/hooks/dispatch.py say what each
event's answer does.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.hooks.acted import HookAction, actions_of, short_name
from agent.hooks.answer import HookAnswer, Verdict, combine, read_answer
from agent.hooks.claude_shape import cairn_input, claude_call
from agent.hooks.matcher import matches
from agent.hooks.names import EVENTS, MATCHED_FIELD, TOOL_EVENTS
from agent.hooks.runner import run_hook
from agent.hooks.sources import HookSpec, load_specs
from agent.hooks.transcript import Transcript

if TYPE_CHECKING:
    from agent.session.models import Message

# Events only the user's own conversation runs (a subagent's child has no prompt, no stop of
# its own, no session to start or end, and its questions go through its parent's approver,
# whose hooks ask PermissionRequest and tell Notification).
TURN_EVENTS = frozenset({"UserPromptSubmit", "Stop", "SessionStart", "SessionEnd", "Notification", "PermissionRequest"})
Warn = Callable[[str, str], None]  # (message, "info" | "warning")
Acted = Callable[[HookAction], None]  # what a hook did, for the user (agent/hooks/acted.py)


class HookRuns:
    """Running one event's matching hooks with Claude Code's payload; the base of `Hooks`."""

    def __init__(
        self,
        settings: Any,
        *,
        session_id: Callable[[], str],
        permissions: Callable[[], Any],
        warn: Warn,
        acted: Acted | None = None,
        turn_events: bool = True,
    ) -> None:
        specs, self.problems = load_specs(settings)
        self.workspace = Path(settings.workspace)
        self.session_id = session_id
        self.permissions = permissions  # the agent's Permissions (agent/tools/permissions.py), read per run
        self.warn = warn
        self.acted: Acted = acted or (lambda action: None)
        self.sidechain = not turn_events  # a subagent's child: its transcript is a sidechain
        self.by_event: dict[str, list[HookSpec]] = {
            event: [s for s in specs if s.event == event and (turn_events or event not in TURN_EVENTS)]
            for event in EVENTS
        }
        self._background: set[asyncio.Future] = set()
        self.transcript = Transcript()
        self.calls: dict[str, dict[str, Any]] = {}  # call id → its arguments while it runs (PermissionRequest's)
        # The conversation the transcript is written from (the agent's active path) and the
        # names of the tools it offers (a matcher naming none is told): given by whoever
        # holds the agent (agent/runtime/opening.py, agent/turn/children.py) through `attach`.
        self._history: Callable[[], Sequence[Message] | None] = lambda: None
        self._tools: Callable[[], Iterable[str]] | None = None
        self._model: Callable[[], str] = lambda: ""

    def attach(
        self,
        *,
        history: Callable[[], Sequence[Message] | None],
        tools: Callable[[], Iterable[str]] | None = None,
        model: Callable[[], str] | None = None,
        parent: HookRuns | None = None,
    ) -> None:
        """What the hooks read of the agent that holds them: its active path (the transcript),
        the names of its tools (a matcher naming none is told), its model (SessionStart's).
        `parent`: a subagent's parent's hooks, whose transcript writer (one per file) and calls
        in flight (its approvals are the parent's) the child's share."""
        self._history, self._tools = history, tools
        if model is not None:
            self._model = model
        if parent is not None:
            self.transcript, self.calls = parent.transcript, parent.calls

    def has(self, event: str) -> bool:
        return bool(self.by_event.get(event))

    def transcript_path(self, session_id: str | None = None) -> str:
        """The session's transcript, with every stored message of the active path written."""
        session = session_id or self.session_id()
        messages = self._history() if session_id is None else None
        return str(self.transcript.sync(session, messages or (), self.workspace, sidechain=self.sidechain))

    # -- running -------------------------------------------------------------------------
    def _selected(self, event: str, fields: dict[str, Any], tool: str | None) -> list[HookSpec]:
        specs = self.by_event.get(event) or []
        if event in TOOL_EVENTS and tool is not None:
            specs = [s for s in specs if matches(s.matcher, tool)]
        elif event in MATCHED_FIELD:
            value = str(fields.get(MATCHED_FIELD[event], ""))
            specs = [s for s in specs if matches(s.matcher, value)]
        return list({(s.command, s.claude): s for s in specs}.values())

    async def _run(
        self, event: str, fields: dict[str, Any], tool: str | None = None, env: dict[str, str] | None = None
    ) -> Verdict:
        """Run the event's hooks that match; `env`: variables the event adds to theirs."""
        unique = self._selected(event, fields, tool)
        if not unique:
            return Verdict()
        session = fields.get("session_id")
        payload = {
            "session_id": session or self.session_id(),
            "transcript_path": self.transcript_path(session),
            "cwd": str(self.workspace),
            "hook_event_name": event,
            "permission_mode": claude_mode(self.permissions()),
            **fields,
        }
        if tool is not None:  # as Claude Code shows its tools, whichever file configured the hook (SPEC §13 item 9)
            payload["tool_name"], payload["tool_input"] = claude_call(tool, fields["tool_input"], self.workspace)
        data = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", errors="replace")
        answers = await asyncio.gather(*(self._one(spec, data, fields, tool, env) for spec in unique))
        names = [short_name(spec.command) for spec in unique]
        blockers = tuple(n for n, a in zip(names, answers, strict=True) if a.block is not None or a.stop is not None)
        verdict = dataclasses.replace(combine(list(answers)), blockers=blockers)
        for warning in verdict.warnings:
            self.warn(warning, "warning")
        for message in verdict.messages:
            self.warn(message, "info")
        for name, answer in zip(names, answers, strict=True):
            for action in actions_of(event, name, answer, tool, fields.get("tool_input")):
                self.acted(action)
        return verdict

    async def _one(
        self, spec: HookSpec, data: bytes, fields: dict[str, Any], tool: str | None, env: dict[str, str] | None
    ) -> HookAnswer:
        refused = spec.refusal(self.workspace)  # a project's hook whose script changed since it was trusted
        if refused is not None:  # a guard that cannot run fails closed: its call does not run either
            return HookAnswer(warning=refused, block=refused if spec.event == "PreToolUse" else None)
        timeout = self.timeout(spec)
        run = await run_hook(spec.command, data, cwd=self.workspace, timeout=timeout, env=env)
        if run.timed_out:
            return HookAnswer(
                warning=f"{spec.event} hook {spec.label} timed out after {timeout:g} s and was killed; "
                f"cairn went on without it."
            )
        answer = read_answer(spec.event, run.exit_code, run.stdout, run.stderr or run.error, label=spec.label)
        if answer.updated_input is not None and tool is not None:
            original = fields["tool_input"]
            updated = cairn_input(tool, answer.updated_input, original)
            answer = dataclasses.replace(answer, updated_input={**original, **updated})
        return answer

    def timeout(self, spec: HookSpec) -> float:
        """How long `spec` may run, in seconds."""
        return spec.timeout

    def _later(self, work: Awaitable[Any]) -> asyncio.Future:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def close(self) -> None:
        """Stop what still runs in the background (its process groups are killed)."""
        pending = list(self._background)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


def claude_mode(permissions: Any) -> str:
    """The permission mode as Claude Code names it (`bypassPermissions` for --yolo)."""
    mode = getattr(permissions, "mode", "default")
    return "bypassPermissions" if getattr(permissions, "yolo", False) and mode != "plan" else str(mode)
