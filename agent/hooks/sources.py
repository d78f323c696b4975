"""Where hooks come from: cairn's config, and Claude Code's settings (unless the user opts out).

cairn's own hooks are `[[hooks.EVENT]]` tables of its config (agent/settings/config.py
`HooksSettings`; a project's apply once its folder is trusted, agent/settings/trust.py).
Unless the user's config says `[hooks] read_claude_settings = false`, the hooks of Claude Code's
`~/.claude/settings.json` (or `$CLAUDE_CONFIG_DIR/settings.json`) run too (a Claude Code user's
setup works unchanged: those are the user's own files), and so do those of
the project's `.claude/settings.json` and `.claude/settings.local.json` once the user trusted
them as they are (`cairn trust`): a cloned repository's hook is a command it would run on
the user's machine. That trust is its own record (trust.CLAUDE_HOOKS), keyed by the folder
and the hooks' content, so a changed hook is asked about again.

Trust is pinned to what runs: a project's hook (either file) is trusted with the content of
the workspace files its command executes (`sh .claude/hooks/format.sh`; agent/settings/run_files.py),
and each such hook carries a `trust.Pin` it checks right before it runs: a script edited
since (by the model, unasked in acceptEdits) makes the hook refuse to run until the user
trusts the folder again. The user's own hooks need no trust and carry no pin.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.hooks import matcher as matching
from agent.hooks.names import DEFAULT_TIMEOUT, EVENTS, closest_event
from agent.paths import claude_dir
from agent.settings import trust

MAX_SETTINGS_BYTES = 1024 * 1024
PROJECT_FILES = (".claude/settings.json", ".claude/settings.local.json")


@dataclass(frozen=True)
class HookSpec:
    """One command for one event. `claude`: from Claude Code's settings (every hook is shown
    Claude Code's tool names and arguments: agent/hooks/claude_shape.py)."""

    event: str
    command: str
    matcher: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    claude: bool = False
    # A project's hook: what it was trusted with, checked before each run (None: the user's own).
    pin: trust.Pin | None = field(default=None, compare=False, repr=False)

    @property
    def label(self) -> str:
        """How a warning names it: its command, short and on one line."""
        text = " ".join(self.command.split())
        return f"`{text if len(text) <= 80 else text[:79] + '…'}`"

    def refusal(self, workspace: Path) -> str | None:
        """Why it must not run now (its file or a file it executes changed since the user
        trusted them), or None. Asked right before each run."""
        if self.pin is None or self.pin.holds():
            return None
        return (
            f"{self.event} hook {self.label} did not run: it, or a file it runs, changed since you trusted "
            f"this folder. Review the change and trust it again with `cairn trust {workspace}`."
        )


def configured(hooks: Any, workspace: Path | None = None) -> list[HookSpec]:
    """The hooks of cairn's config (`settings.hooks`, a HooksSettings). With `workspace`, those
    the project config lists carry its pin (the user's and the project's lists are merged in
    settings; a hook is the project's when the project config lists that command for that
    event, so a user's identical hook is held to the project's trust too)."""
    from agent.settings.project_source import project_pin, project_programs

    listed = {(p.what, p.command) for p in project_programs(workspace)} if workspace is not None else set()
    specs = []
    for event in EVENTS:
        for entry in getattr(hooks, event, None) or []:
            what = f"hooks.{event}"
            pin = project_pin(workspace, what, entry.command) if (what, entry.command) in listed and workspace else None
            specs.append(HookSpec(event, entry.command, entry.matcher, entry.timeout, pin=pin))
    return specs


def _parsed(raw: bytes, shown: str, problems: list[str]) -> dict[str, Any]:
    """The `hooks` table of a Claude Code settings file ({} when it has none or is broken)."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError):
        problems.append(f"Ignoring the hooks in {shown}: it is not valid JSON")
        return {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    return hooks if isinstance(hooks, dict) else {}


def claude_specs(table: dict[str, Any], shown: str, problems: list[str]) -> list[HookSpec]:
    """Claude Code's `{"EVENT": [{"matcher": …, "hooks": [{"type": "command", "command": …,
    "timeout": …}]}]}` as specs. Events and hook types cairn has not are named once."""
    specs: list[HookSpec] = []
    unknown: list[str] = []
    for event, groups in table.items():
        if event not in EVENTS:
            unknown.append(str(event))
            continue
        for group in groups if isinstance(groups, list) else []:
            if not isinstance(group, dict):
                continue
            found = group.get("matcher")
            for hook in group.get("hooks") or []:
                if not isinstance(hook, dict) or hook.get("type", "command") != "command":
                    continue
                command = hook.get("command")
                timeout = hook.get("timeout")
                if not isinstance(command, str) or not command.strip():
                    continue
                seconds = DEFAULT_TIMEOUT
                if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
                    seconds = float(timeout)
                specs.append(HookSpec(event, command, found if isinstance(found, str) else None, seconds, claude=True))
    if unknown:
        hints = [f"{name}: did you mean {close}?" for name in sorted(unknown)[:8] if (close := closest_event(name))]
        hint = f" ({'; '.join(hints)})" if hints else ""
        problems.append(
            f"{shown}: cairn has no {', '.join(sorted(unknown)[:8])} hook event; those hooks do not run{hint}"
        )
    return specs


def user_claude_specs(problems: list[str]) -> list[HookSpec]:
    from agent.fs.repo_files import FileMissing, RepoFileError, read_own_file

    path = claude_dir() / "settings.json"
    try:
        raw = read_own_file(path, max_bytes=MAX_SETTINGS_BYTES)
    except FileMissing:
        return []
    except RepoFileError as exc:
        problems.append(f"Ignoring the hooks in {path}: it {exc.reason}")
        return []
    return claude_specs(_parsed(raw, str(path), problems), str(path), problems)


def project_claude_hooks(workspace: Path, problems: list[str]) -> dict[str, dict[str, Any]]:
    """{file: its hooks table} of the project's Claude Code settings files that have hooks."""
    from agent.fs.repo_files import FileMissing, RepoFileError, read_repo_file

    found: dict[str, dict[str, Any]] = {}
    for name in PROJECT_FILES:
        try:
            raw = read_repo_file(workspace, name, max_bytes=MAX_SETTINGS_BYTES)
        except FileMissing:
            continue
        except RepoFileError as exc:
            problems.append(f"Ignoring the hooks in {workspace / name}: it {exc.reason}")
            continue
        table = _parsed(raw, str(workspace / name), problems)
        if table:
            found[name] = table
    return found


def claude_hooks_source(workspace: Path, tables: dict[str, dict[str, Any]]) -> trust.Source:
    """The project's Claude Code hooks as trust sees them: their content, nothing else of the
    files (a changed permission list does not ask again; a changed hook does), and the
    commands they run (so a changed script they execute does too)."""
    content = trust.digest(json.dumps(tables, sort_keys=True, ensure_ascii=True).encode())
    ws = Path(trust.folder_key(workspace))
    programs = tuple(
        trust.Program(f"hooks.{spec.event}", spec.command, ws)
        for name, table in tables.items()
        for spec in claude_specs(table, name, [])
    )
    return trust.Source(ws, trust.CLAUDE_HOOKS, content, programs)


def project_claude_source(workspace: Path) -> trust.Source | None:
    """The project's Claude Code hooks as they are now (None: it has none)."""
    tables = project_claude_hooks(workspace, [])
    return claude_hooks_source(workspace, tables) if tables else None


def project_claude_specs(workspace: Path, problems: list[str]) -> list[HookSpec]:
    tables = project_claude_hooks(workspace, problems)
    if not tables:
        return []
    if not claude_hooks_source(workspace, tables).trusted():
        files = " and ".join(tables)
        changed = " (they, or a file they run, changed since you trusted them)"
        problems.append(
            f"Not running the hooks in {files} of {workspace}: they are not trusted"
            f"{changed if trust.recorded(workspace, trust.CLAUDE_HOOKS) else ''}. "
            f"Trust them with `cairn trust {workspace}`."
        )
        return []
    specs: list[HookSpec] = []
    for name, table in tables.items():
        for spec in claude_specs(table, str(workspace / name), problems):
            pin = trust.Pin(lambda: project_claude_source(workspace), f"hooks.{spec.event}", spec.command)
            specs.append(HookSpec(spec.event, spec.command, spec.matcher, spec.timeout, claude=True, pin=pin))
    return specs


def load_specs(settings: Any) -> tuple[list[HookSpec], list[str]]:
    """Every hook that applies in `settings.workspace`, and what the user should be told
    about those that do not (a bad matcher, an untrusted project's Claude Code hooks)."""
    problems: list[str] = []
    hooks = getattr(settings, "hooks", None)
    specs = configured(hooks, Path(settings.workspace)) if hooks is not None else []
    if hooks is not None and hooks.read_claude_settings:
        specs += user_claude_specs(problems)
        specs += project_claude_specs(Path(settings.workspace), problems)
    for spec in specs:
        why = matching.problem(spec.matcher)
        if why is not None:
            problems.append(f"{spec.event} hook {spec.label}: {why}")
    return specs, problems
