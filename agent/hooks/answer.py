"""What a finished hook said, read as Claude Code reads it: its exit code, then its stdout.

Exit 0 is "go on"; its stdout may be a JSON object (`continue`, `stopReason`,
`systemMessage`, `decision` + `reason`, `hookSpecificOutput` with `permissionDecision`,
`permissionDecisionReason`, `updatedInput`, `additionalContext`; PermissionRequest's `decision`
with `behavior` and `message`), or plain text that becomes
context for the model where Claude Code makes it so (UserPromptSubmit, SessionStart).
Exit 2 blocks, with stderr as the reason; its stdout is ignored, as Claude Code ignores it.
Any other code, a timeout, or a command that could not start is a warning for the user and
never stops anything. Pure: the runner and the dispatcher decide what each answer does.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

Permission = Literal["allow", "deny", "ask"]
BLOCK_EXIT = 2
# Events whose plain stdout (exit 0, not JSON) is context for the model.
STDOUT_IS_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
MAX_REASON_CHARS = 20_000  # what one hook may put before the model or on screen


@dataclass(frozen=True)
class HookAnswer:
    """One hook's answer. `block` is the reason when it blocked ("" never: a default is given)."""

    block: str | None = None
    permission: Permission | None = None
    context: str = ""  # for the model (additionalContext, or plain stdout where it counts)
    stop: str | None = None  # `continue: false`: the stopReason ("" when it gave none)
    message: str = ""  # systemMessage: for the user
    warning: str = ""  # a failure the user should see; nothing was decided
    updated_input: dict[str, Any] | None = None


def clip(text: str, limit: int = MAX_REASON_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} characters cut]"


def _text(value: Any) -> str:
    return clip(value) if isinstance(value, str) else ""


def json_object(stdout: str) -> dict[str, Any] | None:
    """The stdout as a JSON object, or None when it is not one (then it is plain text)."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def read_answer(event: str, exit_code: int | None, stdout: str, stderr: str, *, label: str) -> HookAnswer:
    """The answer of one run. `exit_code` None: it never finished (timeout, could not start),
    and `stderr` says why. `label` names the hook in a warning."""
    if exit_code == BLOCK_EXIT:
        return HookAnswer(block=clip(stderr) or f"blocked by a {event} hook ({label})")
    if exit_code != 0:
        why = clip(stderr, 2_000) or "no message"
        code = f"exit code {exit_code}" if exit_code is not None else "did not finish"
        return HookAnswer(warning=f"{event} hook {label} failed ({code}): {why}")
    data = json_object(stdout)
    if data is None:
        return HookAnswer(context=clip(stdout) if event in STDOUT_IS_CONTEXT else "")
    return _json_answer(event, data)


def _json_answer(event: str, data: dict[str, Any]) -> HookAnswer:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    reason = _text(data.get("reason"))
    block: str | None = None
    permission: Permission | None = None
    decision = data.get("decision")
    if decision == "block":
        block = reason or f"blocked by a {event} hook"
    elif decision == "approve" and event == "PreToolUse":
        permission = "allow"
    chosen = specific.get("permissionDecision")
    if event == "PreToolUse" and chosen in ("allow", "deny", "ask"):
        permission = chosen  # the newer field wins over the older `decision`
        why = _text(specific.get("permissionDecisionReason")) or reason
        block = (why or "denied by a PreToolUse hook") if chosen == "deny" else None
    asked = specific.get("decision")  # PermissionRequest: {"behavior": "allow" | "deny", "message": …}
    if event == "PermissionRequest" and isinstance(asked, dict) and asked.get("behavior") in ("allow", "deny"):
        permission = asked["behavior"]
        block = (_text(asked.get("message")) or "denied by a PermissionRequest hook") if permission == "deny" else None
    stop: str | None = None
    if data.get("continue") is False:
        stop = _text(data.get("stopReason"))
    updated = specific.get("updatedInput")
    if event == "PermissionRequest" and isinstance(asked, dict):
        updated = asked.get("updatedInput")
    return HookAnswer(
        block=block,
        permission=permission,
        context=_text(specific.get("additionalContext")),
        stop=stop,
        message=_text(data.get("systemMessage")),
        updated_input=updated if isinstance(updated, dict) and event in ("PreToolUse", "PermissionRequest") else None,
    )


@dataclass(frozen=True)
class Verdict:
    """The answers of every hook one event ran, taken together: any block blocks, a deny
    beats an ask beats an allow, contexts and messages add up."""

    block: str | None = None
    permission: Permission | None = None
    context: str = ""
    stop: str | None = None
    messages: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    updated_input: dict[str, Any] | None = None
    blockers: tuple[str, ...] = ()  # the short names of the hooks that blocked or stopped (runs.py fills it)


_PERMISSION_RANK: dict[str | None, int] = {None: 0, "allow": 1, "ask": 2, "deny": 3}


def combine(answers: list[HookAnswer]) -> Verdict:
    blocks = [a.block for a in answers if a.block is not None]
    stops = [a.stop for a in answers if a.stop is not None]
    permission = max((a.permission for a in answers), key=lambda p: _PERMISSION_RANK[p], default=None)
    return Verdict(
        block="\n".join(blocks) if blocks else None,
        permission=permission,
        context="\n\n".join(a.context for a in answers if a.context),
        stop="\n".join(s for s in stops if s) if stops else None,
        messages=tuple(a.message for a in answers if a.message),
        warnings=tuple(a.warning for a in answers if a.warning),
        updated_input=next((a.updated_input for a in answers if a.updated_input is not None), None),
    )
