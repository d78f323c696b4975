"""The hooks of a session's life: it starts and ends, it asks the user, it waits for them.

SessionStart runs in the background when a session opens (`startup`, `resume`), after `/new`
(`clear`) and after a compaction (`compact`); its context waits for the next prompt. When a
session gives way to another (`/new`, a resume) or the runtime closes, SessionEnd runs for it
with Claude Code's `reason`. Before cairn asks the user to approve a call, the
PermissionRequest hooks may answer for them (Claude Code's `decision.behavior`: allow or
deny; exit 2 denies), and the Notification hooks are told (`permission_prompt`); when a turn
ends and the user has not written for IDLE_SECONDS, they are told again (`idle_prompt`). The
problems found loading the hooks, and matchers that name a tool cairn lacks, are told once,
as the first session starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from pathlib import Path
from typing import Any

from agent.hooks.claude_shape import claude_call
from agent.hooks.matcher import unmapped
from agent.hooks.names import DEFAULT_TIMEOUT, TOOL_EVENTS
from agent.hooks.runs import HookRuns
from agent.hooks.sources import HookSpec

IDLE_SECONDS = 60.0  # as Claude Code's: how long a finished turn waits before `idle_prompt`
# As Claude Code's: SessionEnd hooks hold the exit 1.5 s (CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS
# changes it), or the hook's own `timeout` when it sets one, up to a minute.
SESSION_END_SECONDS = 1.5
SESSION_END_MAX_SECONDS = 60.0
SESSION_END_VARIABLE = "CLAUDE_CODE_SESSIONEND_HOOKS_TIMEOUT_MS"
IDLE_MESSAGE = "cairn is waiting for your input"
TITLE = "cairn"


class SessionHooks(HookRuns):
    """SessionStart, SessionEnd, PermissionRequest and Notification, over `HookRuns`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.idle_after = IDLE_SECONDS
        self._idle: asyncio.Future | None = None
        self._starting: asyncio.Future | None = None  # the SessionStart hooks, until a prompt takes their context
        self._session: str | None = None  # the session SessionStart last ran for (SessionEnd's, when it changes)
        self._ending: set[asyncio.Future] = set()  # SessionEnd of sessions given up, which closing waits for

    def _tell_problems(self) -> None:
        problems, self.problems = self.problems, []
        if self._tools is not None:
            names = list(self._tools())
            for event in sorted(TOOL_EVENTS):
                for spec in self.by_event.get(event) or []:
                    why = unmapped(spec.matcher, names)
                    if why is not None:
                        problems.append(f"{event} hook {spec.label}: {why}")
            self._tools = None  # told once
        for problem in problems:
            self.warn(problem, "warning")

    def session_started(self, source: str) -> None:
        """SessionStart (`startup`, `resume`, `clear`, `compact`), in the background: its
        context waits for the next prompt. A session this replaces gets its SessionEnd."""
        self._tell_problems()
        session = self.session_id()
        previous, self._session = self._session, session
        if previous is not None and previous != session and self.has("SessionEnd"):
            reason = "clear" if source == "clear" else "other"
            ending = self._later(self._run("SessionEnd", {"reason": reason, "session_id": previous}))
            self._ending.add(ending)
            ending.add_done_callback(self._ending.discard)
        if self.has("SessionStart"):
            if self._starting is not None:
                self._starting.cancel()
            self._starting = self._later(self._session_context(source))

    async def _session_context(self, source: str) -> str:
        env_file = _env_file(self.session_id())
        fields = {"source": source, "model": self._model()}
        verdict = await self._run("SessionStart", fields, env={"CLAUDE_ENV_FILE": str(env_file)})
        if verdict.block is not None:  # exit 2 cannot stop a session: the user sees why
            self.warn(f"SessionStart hook: {verdict.block}", "warning")
        names = _exported(env_file)
        if names:
            self.warn(
                f"A SessionStart hook set {', '.join(names)} in CLAUDE_ENV_FILE; cairn does not pass those "
                "variables to the model's commands: set them in the shell you start cairn from.",
                "warning",
            )
        return verdict.context

    async def started_context(self) -> str:
        """What the SessionStart hooks said for the model, once ("" nothing, or already taken)."""
        starting, self._starting = self._starting, None
        return await starting if starting is not None else ""

    async def session_ended(self, reason: str) -> None:
        """SessionEnd (`clear`, `logout`, `prompt_input_exit`, `other`): told, never asked;
        waited for (each hook within its timeout), as Claude Code waits before it exits."""
        self.stop_waiting()
        await asyncio.gather(*self._ending, return_exceptions=True)  # each within its own timeout
        if self.has("SessionEnd"):
            verdict = await self._run("SessionEnd", {"reason": reason})
            if verdict.block is not None:
                self.warn(f"SessionEnd hook: {verdict.block}", "warning")

    def timeout(self, spec: HookSpec) -> float:
        if spec.event != "SessionEnd":
            return spec.timeout
        if spec.timeout != DEFAULT_TIMEOUT:  # its own: honoured, up to the bound
            return min(spec.timeout, SESSION_END_MAX_SECONDS)
        try:
            budget = float(os.environ.get(SESSION_END_VARIABLE, "")) / 1000
        except ValueError:
            budget = SESSION_END_SECONDS
        return min(budget, SESSION_END_MAX_SECONDS) if budget > 0 else SESSION_END_SECONDS

    # -- notifications -------------------------------------------------------------------
    def notify(self, message: str, kind: str = "permission_prompt") -> None:
        """Notification, in the background: the user is asked or waited for; nothing waits
        for the hooks. `kind`: Claude Code's `notification_type`, which matchers select."""
        if self.has("Notification"):
            fields = {"message": message, "title": TITLE, "notification_type": kind}
            self._later(self._notification(fields))

    async def _notification(self, fields: dict[str, Any]) -> None:
        verdict = await self._run("Notification", fields)
        if verdict.block is not None:
            self.warn(f"Notification hook: {verdict.block}", "warning")

    def waiting(self) -> None:
        """The turn ended: after `idle_after` seconds with no prompt, `idle_prompt`."""
        self.stop_waiting()
        if self.has("Notification"):
            self._idle = self._later(self._idle_notice())

    async def _idle_notice(self) -> None:
        await asyncio.sleep(self.idle_after)
        self._idle = None
        await self._notification({"message": IDLE_MESSAGE, "title": TITLE, "notification_type": "idle_prompt"})

    def stop_waiting(self) -> None:
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None

    # -- questions -----------------------------------------------------------------------
    async def permission_request(self, request: Any) -> str | None:
        """PermissionRequest: "once" or "deny" when a hook answered for the user, else None.
        `request`: the ApprovalRequest (agent/tools/permissions.py). A hook's allow does not
        answer for a protected target (`request.reason`): the user still decides there, as a
        PreToolUse hook's allow does not either."""
        if not self.has("PermissionRequest"):
            return None
        from agent.tools.permissions import current_call

        call = current_call.get()
        arguments = self.calls.get(call.call_id or "", {}) if call is not None else {}
        fields = {"tool_name": request.tool, "tool_input": arguments, "permission_suggestions": []}
        verdict = await self._run("PermissionRequest", fields, request.tool)
        updated = verdict.updated_input
        if updated is not None and _changed(request.tool, updated, arguments, self.workspace):
            self.warn(
                "A PermissionRequest hook sent updatedInput; cairn does not change a call at its approval "
                "(a PreToolUse hook's updatedInput does). The call runs as the model sent it, if allowed.",
                "warning",
            )
        if verdict.block is not None or verdict.permission == "deny":
            self.warn(f"A PermissionRequest hook denied {request.title}: {verdict.block or 'no reason given'}", "info")
            return "deny"
        if verdict.permission == "allow" and not request.reason:
            return "once"
        return None

    def notifying(self, approver: Any) -> Any:
        """`approver`, asking the PermissionRequest hooks first and telling the Notification
        hooks whenever the user is about to be asked. With no approver (`cairn -p`) the
        PermissionRequest hooks still answer, as Claude Code's do in `-p`; what they leave
        unanswered is denied, as it would be refused."""
        if approver is None:
            return self._hooks_only if self.has("PermissionRequest") else None
        if not (self.has("Notification") or self.has("PermissionRequest")):
            return approver

        async def ask(request: Any) -> Any:
            decided = await self.permission_request(request)
            if decided is not None:
                return decided
            self.notify(f"cairn needs your permission: {getattr(request, 'title', 'a tool call')}")
            return await approver(request)

        return ask

    async def _hooks_only(self, request: Any) -> str:
        return await self.permission_request(request) or "deny"

    async def close(self) -> None:
        self.stop_waiting()
        await super().close()
        self._starting = None


_EXPORT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=", re.M)


def _env_file(session_id: str) -> Path:
    """SessionStart's `CLAUDE_ENV_FILE`: in the data folder, empty before the hooks run (a hook
    that appends to it, as Claude Code's documentation shows, must find a file it may write)."""
    from agent.paths import data_dir

    path = data_dir() / "hook-env" / f"{session_id}.sh"
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text("")
        path.chmod(0o600)
    return path


def _exported(path: Path) -> list[str]:
    """The variables a hook wrote to `path` (`export NAME=…` or `NAME=…` lines); the file goes
    (nothing reads it later)."""
    try:
        text = path.read_text(errors="replace")[:100_000]
    except OSError:
        return []
    with contextlib.suppress(OSError):
        path.unlink()
    return sorted(set(_EXPORT.findall(text)))


def _changed(tool: str, updated: dict[str, Any], arguments: dict[str, Any], workspace: Path) -> bool:
    """Whether a hook's `updatedInput` asks for other arguments than the call has (a hook that
    echoes the input back, as the Agent SDK's allow does, changes nothing)."""
    return claude_call(tool, updated, workspace) != claude_call(tool, arguments, workspace)
