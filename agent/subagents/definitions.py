"""Which subagents exist: the two built in, and Markdown definitions in Claude Code's format.

A definition is a `.md` file with front matter `name`, `description`, `tools` (a list, or
comma-separated; omitted: the parent's tools), `model` (omitted or `inherit`: the parent's;
a family alias or a model id: agent/subagents/models.py) and a body that instructs the agent.
As in Claude Code, each description reaches the model whole; a collection over the listing's
budget keeps every agent reachable (named, counted, found by the tool's `query`, run by name:
agent/skills/listing.py). The folders are looked at again before each turn (`stamp`: a
stat per file), so an agent added while cairn runs is offered at the next turn.

Read from the user's folders (their own files) and the project's `.cairn/agents/` and
`.claude/agents/` (a cloned repository's: read through agent/fs/repo_files.py like AGENTS.md).
Later folders win a name: built-in < user < project, as in Claude Code.

A project's definition is instructions, never power: its tools are cut to what the parent
has, and in a folder the user has not trusted (its project config trusted as it is now,
agent/settings/trust.py) to the tools that only read, with every command and edit refused
(`mode = "plan"`), and its `model` is ignored: the model decides which provider, and so which
of the user's keys, gets the conversation, as the project config's `model` key does (a trust
key there too). The user's own definitions and a trusted folder's keep their model (held to
the user's endpoint by agent/subagents/models.py). What a definition lists never skips an
approval: the child asks the user through the same permissions as the parent.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from agent.fs import front_matter
from agent.fs.repo_files import FileMissing, RepoFileError, list_repo_folder, read_own_file, read_repo_file
from agent.skills.listing import Entry, listing

log = logging.getLogger("agent.subagents")

MAX_DEFINITION_BYTES = 256 * 1024
# The agents' list rides in the `subagent` tool's description, in every request: the same
# budget as the skills' catalog (about 4,000 tokens). Past it, agents are named only.
CATALOG_MAX_CHARS = 16_000
REACH = (
    "Call subagent with `query` (a few words) and no task to search every agent's name and description; "
    "any agent runs by its exact name, listed here or not."
)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

# The tools a research agent gets: they read files, the session's context files and the web
# (web-fetch still asks per host), and nothing they do changes anything.
READ_ONLY_TOOLS = (
    "filesystem-read",
    "filesystem-find",
    "filesystem-search",
    "context-list",
    "context-read",
    "context-tail",
    "context-grep",
    "web-fetch",
)
COMMAND_TOOL = "terminal-execute"

# Claude Code's tool names in a definition's `tools`, as cairn's.
CLAUDE_CODE_TOOLS = {
    "read": "filesystem-read",
    "notebookread": "filesystem-read",
    "write": "filesystem-create",
    "edit": "filesystem-edit",
    "multiedit": "filesystem-edit",
    "notebookedit": "filesystem-edit",
    "bash": "terminal-execute",
    "grep": "filesystem-search",
    "glob": "filesystem-find",
    "ls": "filesystem-find",
    "webfetch": "web-fetch",
    "todowrite": "todo-write",
    "bashoutput": "terminal-execute",
}

EXPLORE_PROMPT = """\
You are an explorer: you research the codebase (and the web, when the task says so) to answer
the task you were given. Find the relevant files, read what matters, run read-only commands
(git log, ls, rg) when they help. You cannot change anything: edits and commands that write
are refused. Be thorough but stop when you can answer."""

GENERAL_PROMPT = """\
You are a general-purpose agent: you carry out the task you were given with the same tools
as the agent that sent you. Work autonomously until the task is done or you are blocked."""


@dataclass
class AgentDefinition:
    name: str
    description: str
    prompt: str = ""  # the body: what the agent is told beyond the task
    tools: list[str] | None = None  # cairn tool names; None: the parent's tools
    model: str | None = None  # None: the parent's model
    source: str = "built-in"  # built-in | user | project
    path: str = ""
    mode: str | None = None  # "plan": commands and edits refused whatever the parent allows
    notes: list[str] = field(default_factory=list)  # what was dropped, for /agents


def built_in() -> list[AgentDefinition]:
    return [
        AgentDefinition(
            name="explore",
            description=(
                "Read-only research in a context of its own: finds and reads files, searches, runs "
                "read-only commands, and returns only its findings. Use it for questions that need "
                "many reads (where is X handled, how does Y work) to keep your own context small."
            ),
            prompt=EXPLORE_PROMPT,
            tools=[*READ_ONLY_TOOLS, COMMAND_TOOL],
            mode="plan",
        ),
        AgentDefinition(
            name="general",
            description=(
                "A general-purpose agent with your tools and permissions, in a context of its own: "
                "for a self-contained multi-step task whose details you do not need afterwards."
            ),
            prompt=GENERAL_PROMPT,
        ),
    ]


def user_folders() -> list[Path]:
    """The user's definitions: cairn's config folder, with no CAIRN_HOME (which relocates
    cairn's own files, tests included) also `~/.cairn/agents`, and Claude Code's
    `~/.claude/agents` (or `$CLAUDE_CONFIG_DIR/agents`, as Claude Code reads it)."""
    from agent.paths import claude_dir, config_dir, home_dir

    folders = [config_dir() / "agents"]
    if home_dir() is None:
        folders.append(Path.home() / ".cairn" / "agents")
    folders.append(claude_dir() / "agents")
    return list(dict.fromkeys(folders))


PROJECT_FOLDERS = (Path(".claude") / "agents", Path(".cairn") / "agents")  # the later wins a name


def load_definitions(
    workspace: Path, *, trusted: bool | None = None, notices: list[str] | None = None
) -> dict[str, AgentDefinition]:
    """Every definition by name (built-in < user < project). `trusted`: whether the project
    folder is trusted (None: looked up)."""
    found = {d.name: d for d in built_in()}
    for folder in user_folders():
        for definition in _read_user_folder(folder, notices):
            found[definition.name] = definition
    project = [d for rel in PROJECT_FOLDERS for d in _read_project_folder(workspace, rel, notices)]
    if project:
        if trusted is None:
            trusted = folder_trusted(workspace)
        for definition in project:
            found[definition.name] = _as_project(definition, trusted)
    return found


def folder_trusted(workspace: Path) -> bool:
    """The user trusted this folder (`cairn trust`): its project config, or its agents, commands
    and skills, as they are now (agent/settings/prompt_files.py)."""
    from agent.settings.prompt_files import folder_trusted as trusted

    return trusted(workspace)


def _as_project(definition: AgentDefinition, trusted: bool) -> AgentDefinition:
    definition.source = "project"
    if trusted:
        return definition
    listed = definition.tools
    definition.tools = [t for t in (listed if listed is not None else READ_ONLY_TOOLS) if t in READ_ONLY_TOOLS]
    dropped = sorted(set(listed or []) - set(definition.tools))
    definition.mode = "plan"
    if dropped:
        definition.notes.append(
            f"{', '.join(dropped)} left out: the folder is not trusted (run `cairn trust` to trust its config)"
        )
    if definition.model is not None:
        definition.notes.append(
            f"model {definition.model[:80]} ignored (the agent runs on yours): the folder is not trusted"
        )
        definition.model = None
    return definition


def _read_user_folder(folder: Path, notices: list[str] | None) -> list[AgentDefinition]:
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for name in names:
        if not name.endswith(".md"):
            continue
        try:
            raw = read_own_file(folder / name, max_bytes=MAX_DEFINITION_BYTES)
        except RepoFileError as exc:
            _say(notices, f"Skipping the agent definition {exc.path}: it {exc.reason}")
            continue
        definition = _parse(raw, folder / name, "user", notices)
        if definition is not None:
            out.append(definition)
    return out


def _read_project_folder(workspace: Path, relative: Path, notices: list[str] | None) -> list[AgentDefinition]:
    try:
        names = list_repo_folder(workspace, relative)
    except RepoFileError:
        return []  # no such folder (or one that is a symlink: not read)
    out = []
    for name in names:
        if not name.endswith(".md"):
            continue
        try:
            raw = read_repo_file(workspace, relative / name, max_bytes=MAX_DEFINITION_BYTES)
        except FileMissing:
            continue
        except RepoFileError as exc:
            _say(notices, f"Skipping the agent definition {exc.path}: it {exc.reason}")
            continue
        definition = _parse(raw, Path(workspace) / relative / name, "project", notices)
        if definition is not None:
            out.append(definition)
    return out


def _parse(raw: bytes, path: Path, source: str, notices: list[str] | None) -> AgentDefinition | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        _say(notices, f"Skipping the agent definition {path}: it is not UTF-8 text")
        return None
    fields, body = front_matter.split(text)
    name = str(fields.get("name") or path.stem).strip()
    description = " ".join(str(fields.get("description") or "").split())
    if not _NAME.fullmatch(name):
        _say(notices, f"Skipping the agent definition {path}: its name {name[:40]!r} is not a plain name")
        return None
    if not description:
        _say(notices, f"Skipping the agent definition {path}: it has no description")
        return None
    tools, notes = _tools(fields.get("tools"))
    model = str(fields.get("model") or "").strip() or None
    if model is not None and model.lower() == "inherit":
        model = None
    return AgentDefinition(
        name=name,
        description=description,
        prompt=body.strip(),
        tools=tools,
        model=model,
        source=source,
        path=str(path),
        notes=notes,
    )


def _tools(value: object) -> tuple[list[str] | None, list[str]]:
    """cairn's tool names for a definition's `tools` (None: inherit), and what was not known."""
    if value is None or value in ("", "*", ["*"]):
        return None, []  # Claude Code: omitted (or every tool) is the parent's
    items = value if isinstance(value, list) else str(value).split(",")
    names: list[str] = []
    unknown: list[str] = []
    for item in items:
        raw = str(item).strip()
        if not raw:
            continue
        mapped = CLAUDE_CODE_TOOLS.get(raw.lower().split("(", 1)[0], raw)
        if mapped in CLAUDE_CODE_TOOLS.values() or "-" in mapped or mapped.startswith("mcp__"):
            names.append(mapped)
        else:
            unknown.append(raw)
    notes = [f"unknown tools left out: {', '.join(unknown)}"] if unknown else []
    return list(dict.fromkeys(names)), notes


def _say(notices: list[str] | None, text: str) -> None:
    log.warning("%s", text)
    if notices is not None:
        notices.append(text)


def entries(definitions: dict[str, AgentDefinition]) -> list[Entry]:
    """The agents in the listing's order: the built-in ones, the project's, then the user's
    (a repository's own agents are the ones about this code when the list is cut)."""
    rank = {"built-in": 0, "project": 1}
    ordered = sorted(definitions.values(), key=lambda d: rank.get(d.source, 2))  # stable: by name within
    return [Entry(d.name, d.description) for d in ordered]


def catalog(definitions: dict[str, AgentDefinition], max_chars: int = CATALOG_MAX_CHARS) -> str:
    """The agents as the model reads them in the `subagent` tool's description, each
    description whole; past `max_chars` the rest named, counted and searchable."""
    return listing(entries(definitions), max_chars=max_chars, noun="agent", reach=REACH)


Stamp = tuple[tuple[str, int, int], ...]


def stamp(workspace: Path) -> Stamp:
    """What the definition folders look like now (each folder's and each `.md`'s modification
    time and size: a stat each, nothing read); a definition added, removed or edited changes it."""
    seen: list[tuple[str, int, int]] = []
    for folder in [*user_folders(), *(Path(workspace) / rel for rel in PROJECT_FOLDERS)]:
        try:
            info = os.stat(folder)
            names = sorted(n for n in os.listdir(folder) if n.endswith(".md"))
        except OSError:
            continue
        seen.append((str(folder), info.st_mtime_ns, 0))
        for name in names:
            try:
                info = os.stat(folder / name)
            except OSError:
                continue
            seen.append((name, info.st_mtime_ns, info.st_size))
    return tuple(seen)
