"""/help: the commands (built-in, then command files and skills) and key bindings.

It opens at its top: longer than a screen at 80×24, it left the view at its end (the keys),
the commands two PageUps away. The keys listed are every dialog's (approval, plan review,
trust), as their bindings are (agent/ui/screens/).

/help is one of the registry's commands (agent/ui/commands/__init__.py), so it cannot import
the registry back: the registry hands it what to list (`command(rows_for)`), and
`listing_rows` lays out the commands it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host

KEYS: list[tuple[str, str]] = [
    ("Enter", "send the prompt"),
    ("Ctrl+J / Shift+Enter", "new line in the prompt"),
    ("Esc", "interrupt the running turn; close the command list"),
    ("Esc Esc", "rewind: back to an earlier prompt (and its files), or another branch"),
    ("Ctrl+C", "interrupt the running turn; twice when idle to quit"),
    ("Tab", "complete a slash command or an @path"),
    ("@path", "complete a workspace path (fuzzy); the file's text goes with the prompt"),
    ("!command", "run the command in your shell, unasked; its output goes to the model next turn"),
    ("Shift+Tab", "switch mode: default → accept edits → plan (shown in the status bar)"),
    ("Ctrl+T", "collapse / expand the todo list"),
    ("Ctrl+O", "expand / collapse the selected block, else the newest output or thinking in view"),
    ("Ctrl+Up / Ctrl+Down", "select an older / newer folded block (Enter or Ctrl+O opens it, Esc lets go)"),
    ("PageUp / PageDown", "scroll the chat a page (Shift+PageUp / Shift+PageDown too)"),
    ("Ctrl+Home / Ctrl+End", "top of the chat / bottom, following new output again"),
    ("y / a / p", "in an approval: yes once / always this session / always in this project"),
    ("n / t / Esc", "in an approval: no / no, and tell the model what to do instead / no"),
    ("a / y / n", "in a plan review: approve, edits auto-accepted / approve, ask before edits / keep planning"),
    ("PageDown / Down", "in an approval or plan review: scroll the diff or plan (PageUp, Up, Home, End)"),
    ("t / n", "in the trust question: trust this project's config / not now"),
]


KEY_WIDTH = 22


def listing_rows(builtin: Sequence[Command], project: Sequence[Command], skipped: list[str]) -> list[tuple[str, int]]:
    """Each line of /help and the column its description starts at (where it wraps to)."""
    names = {c.name: "/" + c.name + (" " + c.usage if c.usage else "") for c in [*builtin, *project]}
    width = max(18, *(len(n) for n in names.values()))
    column = 2 + width + 1
    rows = [("Commands", 0)]
    for c in builtin:
        alias = f" (also /{', /'.join(c.aliases)})" if c.aliases else ""
        rows.append((f"  {names[c.name]:<{width}} {c.description}{alias}", column))
    if project:
        rows += [("", 0), ("Your commands and skills (.claude/commands, .cairn/commands, skills)", 0)]
        rows += [(f"  {names[c.name]:<{width}} {c.description}", column) for c in project]
    if skipped:
        rows += [("", 0), ("Command files not used", 0)] + [(f"  {text}", 4) for text in skipped]
    rows += [("", 0), ("Keys", 0)]
    rows += [(f"  {key:<{KEY_WIDTH}} {what}", 2 + KEY_WIDTH + 1) for key, what in KEYS]
    return rows


def skipped_commands(app: object | None) -> list[str]:
    """Command files cairn refused to read (a symlink out of the workspace, a FIFO…), said here."""
    workspace = getattr(getattr(app, "settings", None), "workspace", None)
    if workspace is None:
        return []
    from agent.commands.catalog import command_notices

    return command_notices(workspace)


def command(rows_for: Callable[[Host], list[tuple[str, int]]]) -> Command:
    """/help, showing `rows_for(app)` (the registry's `help_rows`)."""

    async def run(app: Host, args: str) -> None:
        from agent.ui.widgets.chat import Notice
        from agent.ui.widgets.hanging import Hanging

        shown = rows_for(app)
        notice = Notice("\n".join(line for line, _ in shown), "help")
        notice.update(Hanging(shown))  # a long description wraps under its column, not at the left edge
        chat = app.chat
        chat.add_block(notice)
        # Read from its top (the commands), not its end (the keys): the chat stops following the
        # bottom until the next prompt, and scrolls the list's first line to the top of the view.
        chat.release_anchor()
        chat.call_after_refresh(lambda: chat.scroll_to_widget(notice, animate=False, top=True))

    return Command("help", "list commands and key bindings", run)
