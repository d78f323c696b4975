"""`/name args` → what the model gets: the one expansion every front end uses.

The TUI and `cairn -p` (and an editor through ACP) hand the runtime the text as typed; the
runtime (agent/runtime/command_turn.py) asks `resolve` whether it names a command of one of
its sources and, if so, `expand`s it before the turn. Sources, in order (the first that has
the name wins, built-in commands having been handled by the front end already):

1. command files (agent/commands/catalog.py: `.claude/commands/`, `.cairn/commands/`, the
   user's folders);
2. skills (agent/skills/): `/pdf invoice.pdf` loads the skill for the turn, the text the
   `skill-load` tool would have returned, as Claude Code does for a skill the user invokes;
3. whatever else the runtime adds to the list (MCP prompts, `/mcp__server__prompt`).

What a command widens is decided here: its `allowed-tools` (agent/commands/allowed_tools.py)
and its `model` hold for its turn only, and only for the user's own command or one from a
folder the user trusted (agent/settings/trust.py). A repository's command the user has not
trusted still runs as a prompt (its `!` commands ask as the model's would), but grants
nothing and keeps the user's model, and a notice says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agent.commands.allowed_tools import grant_keys
from agent.commands.arguments import substitute, uses_arguments
from agent.commands.catalog import FileCommand, find_command, list_commands
from agent.commands.inline import Runner, inline_files, run_bangs
from agent.skills.catalog import Skill, SkillCatalog, SkillError, other_files, read_body

_INVOCATION = re.compile(r"/(\S+)(?:\s+(.*))?", re.S)


@dataclass
class Listed:
    """A command as /help and the `/` popup show it."""

    name: str
    description: str
    argument_hint: str = ""
    label: str = ""  # where it comes from: `project`, `user:frontend`, `skill`


@dataclass
class Expansion:
    """A command made ready for its turn: its body with the arguments in place (`` !`cmd` ``s
    not run yet: they run with the grants in force), the files it includes, its model (None:
    the session's), the approval keys it grants for the turn, and what the user should be told."""

    name: str
    body: str
    tail: str = ""  # the arguments, when the body has no place for them
    files: str = ""
    model: str | None = None
    grants: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    async def message(self, run: Runner) -> str:
        """The user message: the `!` commands run (through `run`), the files after the body."""
        body = await run_bangs(self.body, run)
        return block(self.name, f"{body}\n\n{self.files}" if self.files else body, self.tail)


@dataclass
class ExpandContext:
    """What an expansion needs from the runtime: the workspace, and whether the project folder
    is trusted (asked only when a command would widen something)."""

    workspace: Path
    trusted: Callable[[], bool]


class Invocable(Protocol):
    @property
    def name(self) -> str: ...

    def expand(self, args: str, ctx: ExpandContext) -> Expansion: ...


class CommandSource(Protocol):
    """One kind of command (files, skills, an MCP server's prompts)."""

    def find(self, name: str, notices: list[str]) -> Invocable | None: ...
    def listing(self, notices: list[str]) -> list[Listed]: ...


def block(name: str, body: str, tail: str = "") -> str:
    """The user message: the body in a `<command>` block (condense carries an active workflow
    forward by these, agent/context/condense.py; the chat shows it as `/name args`)."""
    return f'<command name="{name}">\n{body}\n</command>' + (f"\n\n{tail}" if tail else "")


def expand_body(name: str, body: str, args: str) -> str:
    """The body with its arguments in place, in its block (no `!` run, no file read)."""
    filled, used = substitute(body, args)
    return block(name, filled, "" if used else args.strip())


# -- command files -------------------------------------------------------------------------------
@dataclass
class FileCommandRun:
    command: FileCommand

    @property
    def name(self) -> str:
        return self.command.name

    def expand(self, args: str, ctx: ExpandContext) -> Expansion:
        command = self.command
        own = command.scope == "user"
        filled, used = substitute(command.body, args)
        out = Expansion(name=command.name, body=filled, tail="" if used else args.strip())
        widening = bool(command.allowed_tools or command.model)
        may_widen = own or (widening and ctx.trusted())
        if widening and not may_widen:
            what = [f"allowed-tools ({', '.join(command.allowed_tools)})"] if command.allowed_tools else []
            what += [f"model {command.model}"] if command.model else []
            out.notices.append(
                f"/{command.name}: this folder is not trusted, so the command's {' and '.join(what)} "
                f"is not used (run `cairn trust` to trust it)."
            )
        elif may_widen:
            out.grants, left_out = grant_keys(command.allowed_tools)
            out.model = command.model
            if out.grants:
                out.notices.append(f"/{command.name} allows for this turn: {', '.join(out.grants)}.")
            if left_out:
                out.notices.append(f"/{command.name}: allowed-tools not granted here: {', '.join(left_out)}.")
        out.files = inline_files(filled, ctx.workspace, own=own, notices=out.notices)
        return out


@dataclass
class FileCommands:
    """The command files of a workspace (agent/commands/catalog.py)."""

    workspace: Path

    def find(self, name: str, notices: list[str]) -> Invocable | None:
        found = find_command(self.workspace, name, notices)
        return FileCommandRun(found) if found is not None else None

    def listing(self, notices: list[str]) -> list[Listed]:
        return [
            Listed(c.name, f"{c.description} ({c.label})", c.argument_hint or _hint(c.body), c.label)
            for c in list_commands(self.workspace, notices)
        ]


def _hint(body: str) -> str:
    return "[arguments]" if uses_arguments(body) else ""


# -- skills ---------------------------------------------------------------------------------------
@dataclass
class SkillRun:
    catalog: SkillCatalog
    skill: Skill

    @property
    def name(self) -> str:
        return self.skill.name

    def expand(self, args: str, ctx: ExpandContext) -> Expansion:
        """What `skill-load` returns for it (its folder, its SKILL.md, the files beside it),
        the arguments in place or after it."""
        from agent.skills.tool import loaded_text

        try:
            body = read_body(self.catalog, self.skill)
        except SkillError as exc:
            body = f"(The skill could not be read: {exc})"
        files, total = other_files(self.catalog, self.skill)
        filled, used = substitute(loaded_text(self.skill, body, files, total), args)
        return Expansion(name=self.skill.name, body=filled, tail="" if used else args.strip())


@dataclass
class SkillCommands:
    """Skills as `/name` (Claude Code: a skill is a command the user may invoke)."""

    catalog: SkillCatalog

    def find(self, name: str, notices: list[str]) -> Invocable | None:
        skill = self.catalog.get(name)
        return SkillRun(self.catalog, skill) if skill is not None else None

    def listing(self, notices: list[str]) -> list[Listed]:
        return [Listed(s.name, f"{s.description} (skill)", "", "skill") for s in self.catalog.skills.values()]


# -- the sources, and a typed line ----------------------------------------------------------------
def command_sources(workspace: Path, skills: SkillCatalog | None, *more: CommandSource) -> list[CommandSource]:
    """The sources in order of precedence; `more` (an MCP server's prompts) come last."""
    sources: list[CommandSource] = [FileCommands(Path(workspace))]
    if skills is not None:
        sources.append(SkillCommands(skills))
    return [*sources, *more]


def parse_invocation(text: str) -> tuple[str, str] | None:
    """`/name args` → (name, args); None when the text does not start with a command name."""
    match = _INVOCATION.fullmatch(text.strip())
    if match is None or "/" in match.group(1):
        return None
    return match.group(1), (match.group(2) or "").strip()


def resolve(sources: list[CommandSource], text: str, notices: list[str]) -> tuple[Invocable, str] | None:
    """The command `text` invokes and its arguments; None when it invokes none."""
    parsed = parse_invocation(text)
    if parsed is None:
        return None
    name, args = parsed
    for source in sources:
        found = source.find(name, notices)
        if found is not None:
            return found, args
    return None


def listing(sources: list[CommandSource], notices: list[str] | None = None) -> list[Listed]:
    """Every command once (the first source's of a name), sorted by name."""
    seen: dict[str, Listed] = {}
    for source in sources:
        for listed in source.listing(notices if notices is not None else []):
            seen.setdefault(listed.name, listed)
    return sorted(seen.values(), key=lambda listed: listed.name)
