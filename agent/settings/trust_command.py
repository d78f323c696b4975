"""`cairn trust [DIR]`: show what the folder's files would run, then trust them as they are.

What a folder brings is trusted here, each as its own record (agent/settings/trust.py): its
`.cairn/config.toml`, its `.mcp.json`, the hooks of its `.claude/settings*.json`, and its
agents, commands and skills (`.claude/` and `.cairn/`, agent/settings/prompt_files.py), so a
repository with only Claude Code's files is trusted as one with cairn's config is.
Before anything is recorded, every command they make cairn run on the user's machine is
printed (each hook with its event, each MCP server's command line, with the file it comes
from), and then the workspace files those commands execute: trust covers those files'
content too (agent/settings/pins.py), so this is what the user is agreeing to. The digest
recorded is of the very file list printed. Everything printed comes from the repository and
is escaped for the terminal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from agent.settings import prompt_files, trust
from agent.settings.run_files import UncheckableCommand

Say = Callable[[str], None]
MAX_LISTED = 100  # prompt files named one by one; the rest are counted


def _err(text: str) -> None:
    print(text, file=sys.stderr)


def trust_folder(folder: Path, say: Say = print, err: Say = _err) -> int:
    """The command's work: 0 done, 1 not recorded, 2 not a folder."""
    from agent.hooks.sources import claude_hooks_source, claude_specs, project_claude_hooks
    from agent.mcp.servers import mcp_json_source, read_mcp_json
    from agent.settings.config import project_config_path, read_project_config

    if not folder.is_dir():
        err(f"Error: {_shown(str(folder))} is not a folder.")
        return 2
    folder = folder.resolve()
    warnings: list[str] = []
    data, raw = read_project_config(folder, warnings)
    config = trust.config_source(folder, raw, data) if raw is not None else None
    tables = project_claude_hooks(folder, warnings)
    claude = claude_hooks_source(folder, tables) if tables else None
    mcp_state = read_mcp_json(folder)
    mcp = None
    if mcp_state is not None:
        warnings += mcp_state.problems
        if mcp_state.content_sha256 is not None and mcp_state.servers:
            mcp = mcp_json_source(folder, mcp_state.content_sha256, mcp_state.servers)
    for warning in warnings:
        err(f"Warning: {_shown(warning)}")
    try:
        prompts = prompt_files.files(folder)
    except (prompt_files.TooManyFiles, OSError) as exc:
        err(f"Error: not trusting this folder's agents, commands and skills: {_shown(str(exc))}.")
        return 1

    listed: list[tuple[str, trust.Program]] = [(".cairn/config.toml", p) for p in config.programs] if config else []
    for name, table in tables.items():
        listed += [(name, trust.Program(f"hooks.{s.event}", s.command, folder)) for s in claude_specs(table, name, [])]
    listed += [(".mcp.json", p) for p in mcp.programs] if mcp else []
    files: dict[str, list[Path]] = {}
    for source, name in ((config, ".cairn/config.toml"), (claude, " and ".join(tables)), (mcp, ".mcp.json")):
        try:
            files.update({source.kind: source.files()} if source is not None else {})
        except UncheckableCommand as exc:
            err(f"Error: not trusting {name}: one of its commands is {exc}, so which files it runs cannot be told.")
            return 1
    _show_programs(folder, listed, sorted({f for found in files.values() for f in found}), say)
    _show_prompt_files(folder, prompts, say)

    try:
        if claude is not None:
            trust.trust(folder, claude.digest(files[trust.CLAUDE_HOOKS]), trust.CLAUDE_HOOKS)
            say(
                f"Trusted the hooks in {' and '.join(tables)} as they are now (they run unless your config "
                f"sets [hooks] read_claude_settings = false)."
            )
        if mcp is not None:
            trust.trust(folder, mcp.digest(files[trust.MCP_JSON]), trust.MCP_JSON)
            say(f"Trusted .mcp.json as it is now: its {len(mcp.programs)} MCP server command(s) may start.")
        if prompts:
            trust.trust(folder, prompt_files.digest(folder, prompts), trust.PROMPT_FILES)
            say(f"Trusted {len(prompts)} agent, command and skill file(s) as they are now.")
        if config is None or raw is None:
            if raw is None and any(str(project_config_path(folder)) in w for w in warnings):
                err(f"Error: nothing trusted of {_shown(str(project_config_path(folder)))}: it could not be read.")
                return 1
            if claude is None and mcp is None and not prompts:
                path = _shown(str(project_config_path(folder)))
                say(
                    f"{_shown(str(folder))} has no project config ({path}), .mcp.json, Claude Code hooks, agents, "
                    f"commands or skills: nothing to trust."
                )
            return 0
        record = trust.trust(folder, config.digest(files[trust.FOLDERS]))
    except OSError as exc:
        err(f"Error: cannot record the trust in {trust.trust_path()}: {exc.strerror or exc}")
        return 1
    _show_config(project_config_path(folder), raw, data, record, say)
    return 0


def _show_programs(folder: Path, listed: list[tuple[str, trust.Program]], files: list[Path], say: Say) -> None:
    if not listed:
        return
    say("Once trusted, these commands run on your machine, outside the sandbox:")
    for source, program in listed:
        say(f"  {_shown(program.what)} ({source}): {program.shown}")
    if files:
        say("They run these files of the folder (trusted as they are now; a change to any asks again):")
        for path in files:
            say(f"  {_shown(str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path))}")
    else:
        say("They run no file of this folder.")


def _show_prompt_files(folder: Path, found: list[Path], say: Say) -> None:
    if not found:
        return
    say(
        "Its agents, commands and skills may then use the tools and models they name (an agent's tools and "
        "model, a command's allowed-tools and model); a change to any of these files asks again:"
    )
    for path in found[:MAX_LISTED]:
        say(f"  {_shown(str(path.relative_to(folder)) if path.is_relative_to(folder) else str(path))}")
    if len(found) > MAX_LISTED:
        say(f"  … and {len(found) - MAX_LISTED} more")


def _show_config(config: Path, raw: bytes, data: dict, record: Path, say: Say) -> None:
    items = trust.shown_items(data)
    say(f"Trusted {_shown(str(config))} as it is now (sha256 {trust.digest(raw)[:16]}…; recorded in {record}).")
    if items:
        say("It may now set:")
        for name, shown in items:
            effect = trust.EFFECTS.get(name, "")
            say(f"  {name} = {shown}" + (f"  ({effect})" if effect else ""))
    else:
        say("It sets nothing that needed trust.")
    say("If the file or a file its commands run changes, it is untrusted again until you trust it again.")


def _shown(text: str) -> str:
    """Text from the repository (a path, a warning quoting it) as it is safe on a terminal."""
    return trust.one_line(text)
