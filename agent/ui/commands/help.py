"""/help: the commands (built-in, then the project's own) and key bindings."""

from __future__ import annotations

from agent.ui.commands import Command

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
    ("Ctrl+O", "expand / collapse the tool output, long prompt or thinking in view"),
    ("PageUp / PageDown", "scroll the chat a page (Shift+PageUp / Shift+PageDown too)"),
    ("Ctrl+Home / Ctrl+End", "top of the chat / bottom, following new output again"),
    ("y / a / n", "approve once / always this session / deny"),
]


def help_text(app=None) -> str:
    from agent.ui.commands import commands, project_commands

    builtin = commands()
    project = project_commands(app) if app is not None else []
    names = {c.name: "/" + c.name + (" " + c.usage if c.usage else "") for c in builtin + project}
    width = max(18, *(len(n) for n in names.values()))
    lines = ["Commands"]
    for c in builtin:
        alias = f" (also /{', /'.join(c.aliases)})" if c.aliases else ""
        lines.append(f"  {names[c.name]:<{width}} {c.description}{alias}")
    if project:
        lines += ["", "Project commands (.cairn/commands/*.md)"]
        lines += [f"  {names[c.name]:<{width}} {c.description}" for c in project]
    skipped = _skipped_commands(app)
    if skipped:
        lines += ["", "Project command files not used"] + [f"  {text}" for text in skipped]
    lines.append("")
    lines.append("Keys")
    for key, what in KEYS:
        lines.append(f"  {key:<22} {what}")
    return "\n".join(lines)


def _skipped_commands(app) -> list[str]:
    """Command files cairn refused to read (a symlink out of the workspace, a FIFO…), said here."""
    workspace = getattr(getattr(app, "settings", None), "workspace", None)
    if workspace is None:
        return []
    from agent.settings.project_commands import command_notices

    return command_notices(workspace)


async def run(app, args: str) -> None:
    app.chat.add_notice(help_text(app), kind="help")


COMMAND = Command("help", "list commands and key bindings", run)
