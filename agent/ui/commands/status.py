"""/status: what this cairn runs with: model, session, folder, mode, and what is wrong with
the config (a broken config.toml is named here for as long as it stays broken, not only in
a notice that scrolls away)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent.ui.commands.command import Command
from agent.ui.commands.listing import show_list

if TYPE_CHECKING:
    from agent.lsp.manager import LanguageServerStatus
    from agent.ui.host import Host

NO_FILE = "  (none there)"  # a config path with no file: nothing read from it


def status_text(app: Host) -> str:
    settings = app.settings
    if settings is None:
        return "Status\n  still starting: the settings are not loaded yet"
    from agent.paths import config_dir
    from agent.settings.config import project_config_path

    runtime = app.runtime
    lines = ["Status", f"  model      {settings.model or '(none: set one with /model <name>)'}"]
    if runtime is not None:
        title = runtime.session.title or "(untitled)"
        lines.append(f"  session    {title} · {runtime.session.id}")
    lines.append(f"  folder     {settings.workspace}")
    mode = runtime.mode if runtime is not None else settings.permission_mode
    lines.append(f"  mode       {mode}{' · yolo' if settings.yolo else ''}")
    user, project = config_dir() / "config.toml", project_config_path(settings.workspace)
    lines.append(f"  config     {user}{'' if user.is_file() else NO_FILE}")
    lines.append(f"             {project}{'' if project.is_file() else NO_FILE}")
    lines += instruction_lines(settings.workspace)
    if runtime is not None:
        lines += language_server_lines(runtime.language_servers())
    if app.config_warnings:
        lines += ["", "Config problems"] + [f"  {warning}" for warning in app.config_warnings]
    return "\n".join(lines)


def instruction_lines(workspace: Path) -> list[str]:
    """A line per instruction file a session here starts with (agent/instructions/)."""
    from agent.instructions import load_instructions

    files = load_instructions(workspace).files
    if not files:
        return ["", "Instructions", "  (none: no CLAUDE.md or AGENTS.md here, above it in the repository, or yours)"]
    return ["", "Instructions"] + [f"  {f.shown} ({len(f.text):,} chars, {f.description})" for f in files]


def language_server_lines(servers: list[LanguageServerStatus]) -> list[str]:
    """A line per language server found or configured (agent/lsp/), those not found in one line."""
    if not servers:
        return []
    lines = ["", "Language servers (diagnostics after edits)"]
    for server in servers:
        if server.state != "not found":
            lines.append(f"  {server.name:<14} {server.state}{f' · {server.detail}' if server.detail else ''}")
    missing = [server.name for server in servers if server.state == "not found"]
    if missing:
        lines.append(f"  not found: {', '.join(missing)}")
    return lines


async def run(app: Host, args: str) -> None:
    show_list(app, status_text(app))  # a long value wraps under its column, not at column 2


COMMAND = Command("status", "model, session, folder, mode, instruction files and config problems", run)
