"""Permission modes (SPEC §13.4): what each lets through, their names, what the model is told.

`Permissions.mode` (agent/tools/permissions.py) asks `plan_reads` at its first step and
`accepts_edit` at its fourth; the words around the modes live here too, so the refusal a
tool result carries, the reminder a user message carries (rendered by
agent/context/rendered.py), the status bar and the ACP session modes agree.
A mode belongs to the running session in memory: a new launch starts in `--permission-mode`
(or the `permission_mode` config key), not in the mode the session was left in.

Standard library only: the status bar imports it on the way to the first screen.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal, Protocol

Mode = Literal["default", "acceptEdits", "plan"]
MODES: tuple[Mode, ...] = ("default", "acceptEdits", "plan")  # Shift+Tab's order

# (name, description) for the ACP session modes; the TUI names the mode it switched to.
MODE_INFO: dict[Mode, tuple[str, str]] = {
    "default": ("Default", "File changes and commands ask for approval"),
    "acceptEdits": ("Accept edits", "File edits in the workspace run without asking; commands still ask"),
    "plan": ("Plan", "Read-only: the agent explores and presents a plan; nothing changes until you approve it"),
}
# What the status bar shows (nothing in the default mode).
MODE_BADGES: dict[str, str] = {"default": "", "acceptEdits": "⏵⏵ accept edits", "plan": "⏸ plan mode"}

# The result of a tool call plan mode refused, in place of the tool's own "denied" text: the
# model must learn it is planning, not that a user said no.
PLAN_REFUSAL = (
    "Error: not run: {title}. You are in plan mode: only read-only tools run (no file changes, "
    "no commands that may change anything, no MCP tools). Do not retry it. Keep exploring with "
    "read-only tools, then present your plan with exit-plan-mode for the user to approve."
)

# Added to the first user message sent in a mode other than the previous one's.
REMINDERS: dict[Mode, str] = {
    "default": (
        "[The user switched cairn to the default mode: plan mode is off; file changes and commands "
        "ask the user for approval.]"
    ),
    "acceptEdits": (
        "[The user switched cairn to accept-edits mode: file edits in the workspace run without "
        "asking; commands still ask.]"
    ),
    "plan": (
        "[The user switched cairn to plan mode: only read-only tools run. Explore and think; change "
        "nothing. When the plan is ready, present it with exit-plan-mode for the user to approve.]"
    ),
}
MODE_META = "permission_mode"  # a user message's meta: the mode it was sent in (absent: default)
REMINDER_META = "mode_reminder"  # and the reminder it carries to the model


def is_mode(value: object) -> bool:
    return value in MODES


def next_mode(mode: str) -> Mode:
    """Shift+Tab: default → acceptEdits → plan → default."""
    return MODES[(MODES.index(mode) + 1) % len(MODES)] if mode in MODES else MODES[0]


def plan_reads(kind: str, *, writes: bool) -> bool:
    """What plan mode leaves to the other steps (they ask as usual): a fetch, and reading a
    path outside the workspace. Everything else must be a command proven read-only."""
    return kind == "fetch" or (kind == "outside" and not writes)


class PreparedRequest(Protocol):
    """What `accepts_edit` reads of a prepared `agent.tools.permissions.ApprovalRequest`
    (named, not imported: permissions.py imports this module)."""

    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str | None: ...
    @property
    def reason(self) -> str: ...


def accepts_edit(mode: str, request: PreparedRequest, *, workspace_known: bool) -> bool:
    """The accept-edits mode covers a prepared file edit whose target is known to be in the
    workspace and not protected (the "outside" question before it still asks)."""
    return (
        mode == "acceptEdits"
        and request.kind == "edit"
        and bool(request.path)
        and workspace_known
        and not request.reason
    )


def user_meta(history: list, mode: str) -> dict[str, str]:
    """The meta a new user message gets: its mode, and a reminder when the mode differs from
    the one the previous user message was sent in (stored, so every build renders the same)."""
    previous = next((m.meta.get(MODE_META, "default") for m in reversed(history) if m.role == "user"), "default")
    meta: dict[str, str] = {MODE_META: mode} if mode != "default" else {}
    if mode != previous and mode in REMINDERS:
        meta[REMINDER_META] = REMINDERS[mode]
    return meta


@dataclass(frozen=True)
class PlanReview:
    """The user's answer to exit-plan-mode: approved (and the mode to work in), or not yet."""

    approved: bool
    mode: Mode = "default"  # approved: "default" or "acceptEdits"
    feedback: str = ""  # not approved: what the user wants changed ("" when they said nothing)


PlanReviewer = Callable[[str], Awaitable[PlanReview]]
