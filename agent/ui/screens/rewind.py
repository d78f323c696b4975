"""Rewind modals (ESC twice): pick a user turn or another branch, then what to restore.

`RewindScreen` lists the active path's user turns newest first ("HH:MM  preview · N files
changed") and, below them, the other branches of the session. It dismisses with
("turn", message_id), ("branch", leaf_id) or None. `RestoreScreen` is the second step for
a turn after which the agent changed files: it shows what restoring would do to each file
and dismisses with "files", "conversation" or None (cancel). Neither touches the runtime.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.fs.terminal_text import inert
from agent.ui.screens.picker import relative_age

if TYPE_CHECKING:
    from agent.session.branches import SessionBranch
    from agent.session.rewind import FileRestore, RewindPoint

# action -> (label, note after the path, style)
ACTIONS = {
    "restore": ("restore", "", "bold"),
    "delete": ("delete", "  (cairn created it)", "bold"),
    "unchanged": ("unchanged", "  (already as it was)", "dim"),
    "conflict": ("conflict", "  changed outside cairn — will be left as it is", "bold $warning"),
}

RESTORE_CHOICES = [
    ("files", "Conversation and files  (f)"),
    ("conversation", "Conversation only  (c)"),
    ("cancel", "Cancel  (esc)"),
]
# Switching back to a branch: its changes were undone by a rewind, so "restore" means re-apply.
REAPPLY_CHOICES = [
    ("files", "Switch and re-apply its file changes  (f)"),
    ("conversation", "Switch, leave the files as they are  (c)"),
    ("cancel", "Cancel  (esc)"),
]
REAPPLY_LABEL = "re-apply"


def clock(ms: int, now: float | None = None) -> str:
    """'HH:MM' today, 'Mon DD HH:MM' on other days."""
    now = time.time() if now is None else now
    when = time.localtime(ms / 1000)
    if time.strftime("%Y-%m-%d", when) == time.strftime("%Y-%m-%d", time.localtime(now)):
        return time.strftime("%H:%M", when)
    return time.strftime("%b %d %H:%M", when)


def turn_row(point: RewindPoint, now: float | None = None) -> Content:
    parts: list[tuple[str, str] | str] = [
        (clock(point.created_at, now).rjust(5) + "  ", "dim"),
        inert(point.preview) or "(empty)",
    ]
    if point.files_changed:
        n = point.files_changed
        parts.append((f" · {n} file{'s' if n != 1 else ''} changed", "dim italic"))
    return Content.assemble(*parts)


def plan_line(item: FileRestore, reapply: bool = False) -> Content:
    label, note, style = ACTIONS[item.action]
    if reapply and item.action == "restore":
        label = REAPPLY_LABEL
    return Content.assemble(
        (label.ljust(10), style), inert(item.display), (note, "$warning" if item.action == "conflict" else "dim")
    )


def branch_row(branch: SessionBranch, now: float | None = None) -> Content:
    return Content.assemble(
        ("↳ ", "dim"),
        inert(branch.preview) or "(no prompt)",
        (f" · {branch.messages} messages · {relative_age(branch.created_at, now)}", "dim"),
    )


class RewindScreen(ModalScreen[tuple[str, str] | None]):
    AUTO_FOCUS = "#rewind-list"
    BINDINGS = [Binding("escape", "close", "Close", show=False)]

    def __init__(self, points: list[RewindPoint], branches: list[SessionBranch]) -> None:
        super().__init__()
        self.points = points
        self.branches = branches

    def compose(self):
        now = time.time()
        options: list[Option | None] = [Option(turn_row(p, now), id=f"turn:{p.message_id}") for p in self.points]
        if self.branches:
            if options:
                options.append(None)
            options.append(Option(Content.styled("Other branches", "bold"), id="header:branches", disabled=True))
            options.extend(Option(branch_row(b, now), id=f"branch:{b.leaf_id}") for b in self.branches)
        with Vertical(id="rewind-box"):
            yield Static("Rewind the conversation to before…", id="rewind-title", markup=False)
            yield OptionList(*options, id="rewind-list")
            yield Static(
                "↑↓ move · Enter choose · Esc close  (the branch you leave is kept)", id="rewind-hint", markup=False
            )

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        first = next((i for i, o in enumerate(options.options) if not o.disabled), None)
        options.highlighted = first

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        kind, _, ident = (event.option_id or "").partition(":")
        if kind in ("turn", "branch"):
            self.dismiss((kind, ident))

    def action_close(self) -> None:
        self.dismiss(None)


class RestoreScreen(ModalScreen[str | None]):
    """Second step: conversation and files, conversation only, or cancel. With `branch`
    (switching to another branch) the files go to where that branch left them."""

    AUTO_FOCUS = "#restore-choices"
    BINDINGS = [
        Binding("f", "choose('files')", show=False),
        Binding("c", "choose('conversation')", show=False),
        Binding("escape", "choose('cancel')", show=False),
    ]

    def __init__(
        self, point: RewindPoint | None, plan: list[FileRestore], *, branch: SessionBranch | None = None
    ) -> None:
        super().__init__()
        self.point = point
        self.plan = plan
        self.branch = branch

    def compose(self):
        reapply = self.branch is not None
        lines = (
            Content("\n").join(plan_line(f, reapply) for f in self.plan)
            if self.plan
            else Content("(no files to restore)")
        )
        if self.branch is not None:
            title = Content.assemble("Switch to the branch “", inert(self.branch.preview) or "(no prompt)", "”")
            subtitle, choices = "A rewind undid this branch's file changes:", REAPPLY_CHOICES
        else:
            assert self.point is not None
            title = Content.assemble("Rewind to before “", inert(self.point.preview), "”")
            subtitle, choices = "Files the agent changed since then:", RESTORE_CHOICES
        with Vertical(id="restore-box"):
            yield Static(title, id="restore-title")
            yield Static(subtitle, id="restore-subtitle", markup=False)
            with VerticalScroll(id="restore-scroll"):
                yield Static(lines, id="restore-files")
            yield OptionList(*(Option(label, id=value) for value, label in choices), id="restore-choices")

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_choose(event.option_id or "cancel")

    def action_choose(self, choice: str) -> None:
        self.dismiss(None if choice == "cancel" else choice)
