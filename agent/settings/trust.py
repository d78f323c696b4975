"""Folder trust: what a project's `.cairn/config.toml` may decide only once the user agreed.

A cloned repository brings its own `.cairn/config.toml`. Most of it is harmless (limits,
context tuning), but some keys widen what cairn may do or where the user's data goes:
`yolo` (every command runs unasked), `permission_mode = "acceptEdits"` (edits run unasked),
`api_base` / `api_key` / `model` / `context.condense_model` (where the conversation, and the provider key from the
environment, are sent), `[permissions]` (commands granted without asking), MCP servers and
`[[hooks.EVENT]]` commands (they run on the user's machine at each event).
Those are taken from the project file only when the user trusted that folder *with that
file's content*: the record, in the user's data folder (`paths.trust_path()`, moved by
CAIRN_HOME), maps the resolved folder to the SHA-256 of the file's bytes, so a changed
file (a `git pull`) is untrusted again. Anything else in the file applies either way.
A project's `.mcp.json` is trusted on its own, in a record of its own kind (MCP_JSON), keyed
the same way: by the folder and the file's content, never by where a symlink points.

Trust is pinned to what runs, not only to the text that names it: the digest of a file whose
hooks or MCP servers execute files of the workspace (`sh .claude/hooks/format.sh`, `python
tools/mcp_server.py`; agent/settings/run_files.py) covers those files' content too
(agent/settings/pins.py), so editing the script asks again like editing the config. Each such
hook or server carries a `Pin` and checks it before every run, so an edit made during the
session (an edit the model made unasked in acceptEdits) stops it at once.
Resource limits a project raises above cairn's defaults are widening keys too
(agent/settings/raised_limits.py), and so is the choice of the LLM client.

When cairn itself rewrites the project file ("always for this project" in the approval
dialog, `agent.settings.config_write.add_project_permissions`), the new content is trusted if what it
replaced was trusted or needed no trust (no file, or no widening keys): the only widening
content then added is the rule the user just approved.

Standard library only: this runs on every settings load, on the path to the first screen.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
import shlex
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent.fs.terminal_text import inert
from agent.hooks.names import EVENTS as HOOK_EVENTS
from agent.paths import trust_path
from agent.settings import pins, raised_limits, run_files

TOP_KEYS = ("yolo", "api_base", "api_key", "model", "permission_mode")
# Values of a top key that narrow (or keep) what cairn may do: they need no trust.
TOP_NARROWING: dict[str, tuple[Any, ...]] = {"yolo": (False,), "permission_mode": ("default", "plan")}
TABLE_KEYS = ("permissions", "mcp", "mcp_servers", "hooks")  # each entry of these tables is named on its own
NESTED_KEYS = (
    ("context", "condense_model"),
    ("web", "allow_private"),
    ("web", "search_url"),
    ("web", "native_search"),
    ("sandbox", "rules"),
    ("sandbox", "approved"),
    ("sandbox", "env_passthrough"),
    ("llm", "client"),
    ("lsp", "servers"),
    ("lsp", "unsandboxed"),
)
# Values of a nested key that narrow (or keep) what cairn may do: they need no trust.
NARROWING: dict[tuple[str, str], tuple[Any, ...]] = {
    ("sandbox", "rules"): ("workspace-write",),
    ("sandbox", "approved"): ("workspace-write",),
    ("sandbox", "env_passthrough"): ([],),
    ("llm", "client"): ("auto",),
    ("lsp", "servers"): ({},),
}
SECRET_KEYS = frozenset({"api_key"})
UNCHECKABLE = "uncheckable-"  # the start of a digest that never matches (see Source.digest)
FILES_ITEM = "files run"  # the trust question's line for the files the config's commands execute
MAX_RECORD_BYTES = 4 * 1024 * 1024  # thousands of folders; a bigger file is not ours
MAX_SHOWN_CHARS = 200

# What each key lets the file decide, for the trust question and `cairn trust`.
EFFECTS = {
    "yolo": "every command and file change runs without asking",
    "permission_mode": "sessions start in this mode (acceptEdits: file edits run without asking)",
    "api_base": "requests, with your provider key from the environment, go to this address",
    "api_key": "this key is sent with every request",
    "model": "this model, and so its provider, receives the conversation",
    "context.condense_model": "summaries of the conversation go to this model",
    "web.allow_private": "web-fetch may reach loopback and private addresses (local services, an intranet)",
    "web.search_url": "the model's web searches (what it looks for) are sent to this address",
    "web.native_search": "Claude searches the web on Anthropic's servers, billed per search",
    "sandbox.rules": "commands allowed by a rule run outside the sandbox (writes anywhere, network)",
    "sandbox.approved": "commands you approve run unconfined even where your own config sandboxes them",
    "permissions.allow_commands": "these commands run without asking",
    "permissions.allow": "these actions run without asking",
    "sandbox.env_passthrough": "these environment variables (tokens, keys) stay visible to sandboxed commands: "
    "to the repository's own code",
    "llm.client": "this client carries your requests and keys (litellm also takes provider addresses and keys "
    "from the environment and from .env files)",
    **{f"hooks.{event}": f"these commands run on your machine at each {event} event" for event in HOOK_EVENTS},
    **{f"{table}.{key}": raised_limits.effect(f"{table}.{key}") for table, key in raised_limits.RESOURCE_LIMITS},
    "lsp.servers": "these language servers run on your machine when a file of their language is edited",
    "lsp.unsandboxed": "language servers, and the repository code they load, run outside the sandbox",
    FILES_ITEM: "the commands above run these files of the folder: a change to any of them asks again",
}


@dataclass(eq=False)
class ProjectTrust:
    """A project config with widening keys the user has not trusted (as it is now)."""

    folder: Path  # the resolved workspace: the record's key
    config: Path
    sha256: str  # what trust records: the bytes that were read (whose keys are shown) and the files they run
    items: list[tuple[str, str]]  # (key, value as shown; secrets masked)
    notice: str  # the one line for the load's warnings (LoadedConfig.warnings) / stderr
    # The flags settings were loaded with, to load them again once trusted.
    flags: dict[str, Any] = field(default_factory=dict, repr=False)


def digest(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


def folder_key(folder: Path) -> str:
    return str(Path(folder).expanduser().resolve())


# -- which keys widen ------------------------------------------------------------------------


def _name(parts: tuple[str, ...]) -> str:
    name = ".".join(str(p) for p in parts)
    return name if name.isprintable() else ascii(name)


def _narrowing_top(key: str, value: Any) -> bool:
    """`yolo = false`, `permission_mode = "plan"`: a value that cannot widen anything (a
    boolean compares by identity: `yolo = 0` is not `false` to TOML)."""
    return any(value is v if isinstance(v, bool) else value == v for v in TOP_NARROWING.get(key, ()))


def widening(data: dict[str, Any]) -> list[tuple[tuple[str, ...], Any]]:
    """The (key path, value) pairs of a parsed project config that need trust.

    Values that cannot widen anything are left out: `yolo = false`, an empty allow list."""
    found: list[tuple[tuple[str, ...], Any]] = []
    for key in TOP_KEYS:
        if key in data and not _narrowing_top(key, data[key]):
            found.append(((key,), data[key]))
    for key in TABLE_KEYS:
        if key not in data:
            continue
        table = data[key]
        if isinstance(table, dict):
            found.extend(((key, str(sub)), value) for sub, value in table.items() if value != [])
        else:
            found.append(((key,), table))
    for table_name, key in NESTED_KEYS:
        table = data.get(table_name)
        if isinstance(table, dict) and key in table and table[key] not in NARROWING.get((table_name, key), (False,)):
            found.append(((table_name, key), table[key]))
    found.extend(where for where in raised_limits.raised(data) if where[0][0] not in TABLE_KEYS)  # [mcp]: above
    return found


def without_widening(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of `data` without the keys `widening` names (the rest of the file applies)."""
    out = dict(data)
    for parts, _ in widening(data):
        if len(parts) == 1:
            out.pop(parts[0], None)
            continue
        table = out.get(parts[0])
        if isinstance(table, dict):
            out[parts[0]] = {k: v for k, v in table.items() if k != parts[1]}
    for key in TABLE_KEYS:  # an emptied table is no table at all
        if out.get(key) == {}:
            out.pop(key)
    return out


def show_value(name: str, value: Any) -> str:
    """A value as TOML-like text that is safe on a terminal (ASCII escapes), secrets masked."""
    if name.split(".")[-1] in SECRET_KEYS:
        return "******** (hidden)" if isinstance(value, str) and value else "(hidden)"
    if isinstance(value, bool):
        text = "true" if value else "false"
    else:
        try:
            text = json.dumps(value, ensure_ascii=True, default=str)
        except (TypeError, ValueError, RecursionError):
            text = ascii(str(value))
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def shown_items(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(_name(parts), show_value(_name(parts), value)) for parts, value in widening(data)]


def one_line(text: str) -> str:
    """A repository's text (a command, a path) on one terminal line: inert (agent/fs/terminal_text.py),
    its line breaks shown as `\\n` so it cannot pass for lines of cairn's own."""
    return inert(text.replace("\r\n", "\n").replace("\n", "\\n"))


def notice(config: Path, folder: Path, names: list[str], changed: bool = False) -> str:
    """`changed`: the user trusted another content of it (the file, or a file its commands run)."""
    shown = ", ".join(names[:8]) + (f" and {len(names) - 8} more" if len(names) > 8 else "")
    since = " (it, or a file its commands run, changed since you trusted it)" if changed else ""
    return (
        f"Not using {shown} from {config}: this folder's config is not trusted{since}. "
        f"Trust it with `cairn trust {folder}` (or when cairn asks on start); "
        f"everything else in it applies."
    )


def pending(
    folder: Path, config: Path, raw: bytes, data: dict[str, Any], flags: dict[str, Any] | None = None
) -> ProjectTrust | None:
    """What needs the user's trust in this config, or None when it may apply as it is."""
    items = shown_items(data)
    if not items:
        return None
    source = config_source(folder, raw, data)
    try:
        files: list[Path] | None = source.files()
    except run_files.UncheckableCommand as exc:
        files = None
        items.append((FILES_ITEM, f"cannot tell: a command is {exc} (it can never be trusted)"))
    sha = source.digest(files)
    if is_trusted(folder, sha):
        return None
    names = [name for name, _ in items if name != FILES_ITEM]
    if files:
        items.append((FILES_ITEM, show_value(FILES_ITEM, [source.relative(path) for path in files])))
    return ProjectTrust(
        folder=Path(folder_key(folder)),
        config=config,
        sha256=sha,
        items=items,
        notice=notice(config, Path(folder_key(folder)), names, changed=recorded(folder)),
        flags=dict(flags or {}),
    )


# -- what runs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Program:
    """One command a trusted file runs: `what` names it (`hooks.PostToolUse`, `mcp.servers.x`),
    `command` is a shell line (a hook) or an argument vector (an MCP server), run in `cwd`."""

    what: str
    command: str | tuple[str, ...]
    cwd: Path

    @property
    def shown(self) -> str:
        """The command as one line that is safe on a terminal."""
        return one_line(self.command if isinstance(self.command, str) else shlex.join(self.command))


@dataclass(frozen=True)
class Source:
    """A file trust is about, as read now: whose (`folder`), which (`kind`), the digest of its
    content, and the programs it runs."""

    folder: Path
    kind: str
    content_sha256: str
    programs: tuple[Program, ...] = ()

    def files(self) -> list[Path]:
        """The workspace files its programs execute (agent/settings/run_files.py; raises
        run_files.UncheckableCommand when a command is too big to tell)."""
        return run_files.files_of(((p.command, p.cwd) for p in self.programs), self.folder)

    def digest(self, files: list[Path] | None = None) -> str:
        """What trusting it records: its content pinned with the files its programs run. When
        those cannot be told, a digest nothing recorded can match: it is never trusted."""
        try:
            found = self.files() if files is None else files
        except run_files.UncheckableCommand:
            return UNCHECKABLE + secrets.token_hex(16)
        return pins.pinned_digest(self.content_sha256, found, self.folder)

    def trusted(self) -> bool:
        return is_trusted(self.folder, self.digest(), self.kind)

    def relative(self, path: Path) -> str:
        root = Path(folder_key(self.folder))
        return one_line(str(path.relative_to(root)) if path.is_relative_to(root) else str(path))


@dataclass(frozen=True)
class Pin:
    """How a hook or MCP server from a trusted file makes sure, right before it runs, that what
    it would run is still what the user trusted: `read` reads its file again (None: gone); the
    program named `what` (with this `command`, when given) must still be in it, and the file
    as it is now, with the files its programs execute, must be trusted."""

    read: Callable[[], Source | None]
    what: str
    command: str | tuple[str, ...] | None = None

    def holds(self) -> bool:
        source = self.read()
        if source is None:
            return False
        listed = any(p.what == self.what and self.command in (None, p.command) for p in source.programs)
        return listed and source.trusted()


def config_programs(data: dict[str, Any], folder: Path) -> tuple[Program, ...]:
    """The hooks and MCP servers of a parsed project config, as written (`${VAR}` and a relative
    `cwd` are resolved where the files they run are looked for)."""
    ws = Path(folder_key(folder))
    found: list[Program] = []
    hooks = data.get("hooks")
    for event in HOOK_EVENTS:
        entries = hooks.get(event) if isinstance(hooks, dict) else None
        for entry in entries if isinstance(entries, list) else ():
            command = entry.get("command") if isinstance(entry, dict) else None
            if isinstance(command, str):
                found.append(Program(f"hooks.{event}", command, ws))
    for key in ("mcp", "mcp_servers"):
        table = data.get(key)
        servers = table.get("servers") if key == "mcp" and isinstance(table, dict) else table
        for name, entry in servers.items() if isinstance(servers, dict) else ():
            if isinstance(entry, dict):  # with no command: it overrides the arguments of the user's server
                found.append(Program(f"mcp.servers.{name}", server_argv(entry), ws / str(entry.get("cwd") or ".")))
    return tuple(found)


def server_argv(entry: dict[str, Any] | Any) -> tuple[str, ...]:
    """An MCP server's command, its arguments and its environment's values (an `env` value such
    as NODE_OPTIONS="--require ./x.js" runs a file too), as the words a file is looked for in."""
    get = entry.get if isinstance(entry, dict) else lambda key: getattr(entry, key, None)
    args, env = get("args"), get("env")
    words = [str(get("command") or "")]
    words += [str(a) for a in args] if isinstance(args, list) else []
    words += [str(v) for v in env.values()] if isinstance(env, dict) else []
    return tuple(words)


def config_source(folder: Path, raw: bytes, data: dict[str, Any]) -> Source:
    """The project config (its bytes and what they parse to) as trust sees it."""
    return Source(Path(folder_key(folder)), FOLDERS, digest(raw), config_programs(data, folder))


def config_digest(folder: Path, raw: bytes, data: dict[str, Any]) -> str:
    """What `cairn trust` records for this project config and what `pending` compares."""
    return config_source(folder, raw, data).digest()


# -- the record ------------------------------------------------------------------------------

# What a record is about: each kind is its own table, keyed by the resolved folder, so
# trusting a folder's config.toml trusts nothing of its .mcp.json and the other way round.
# (Older versions keyed a .mcp.json by its own path in FOLDERS: such a record matches only a
# folder of that path whose config.toml has those very bytes, so in effect it trusts
# nothing and the user is asked again.)
FOLDERS = "folders"  # the project config, .cairn/config.toml
MCP_JSON = "mcp_json"  # the project's .mcp.json (agent/mcp/servers.py)
CLAUDE_HOOKS = "claude_hooks"  # the hooks of the project's .claude/settings*.json (agent/hooks/sources.py)
PROMPT_FILES = "prompt_files"  # the folder's agents, commands and skills (agent/settings/prompt_files.py)
KINDS = (FOLDERS, MCP_JSON, CLAUDE_HOOKS, PROMPT_FILES)


def _all_records() -> dict[str, dict[str, Any]]:
    """{kind: {folder: {"sha256", "trusted_at"}}} for every kind in KINDS; unreadable or
    foreign content trusts nothing."""
    empty: dict[str, dict[str, Any]] = {kind: {} for kind in KINDS}
    path = trust_path()
    try:
        with path.open("rb") as f:
            raw = f.read(MAX_RECORD_BYTES + 1)
        if len(raw) > MAX_RECORD_BYTES:
            return empty
        data = json.loads(raw.decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return empty
    if not isinstance(data, dict):
        return empty
    for kind in KINDS:
        table = data.get(kind)
        if isinstance(table, dict):
            empty[kind] = {k: v for k, v in table.items() if isinstance(v, dict)}
    return empty


def _records(kind: str = FOLDERS) -> dict[str, Any]:
    return _all_records()[kind]


def is_trusted(folder: Path, sha256: str, kind: str = FOLDERS) -> bool:
    """Whether the user trusted `folder`'s file of this `kind` with exactly this content."""
    entry = _records(kind).get(folder_key(folder))
    return entry is not None and entry.get("sha256") == sha256


def trust(folder: Path, sha256: str, kind: str = FOLDERS) -> Path:
    """Record that the user trusts `folder`'s file of this `kind` (its project config, or
    with MCP_JSON its `.mcp.json`) with this content, replacing what was trusted there
    before. Written atomically; raises OSError when it cannot be."""
    from agent.fs.atomic import atomic_write  # the project's one atomic-write helper

    records = _all_records()
    records[kind][folder_key(folder)] = {"sha256": sha256, "trusted_at": int(time.time())}
    path = trust_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps({"version": 1, **records}, indent=1, sort_keys=True) + "\n"
    atomic_write(path, payload.encode("utf-8"), 0o600)
    return path


def trusted_after_write(folder: Path, before: bytes | None, before_data: dict[str, Any], after: bytes) -> None:
    """cairn rewrote the project config (from `before` to `after`): keep it trusted when what it
    replaced was trusted or needed no trust. Best effort: a failure only means asking again."""
    if (
        before is not None
        and widening(before_data)
        and not is_trusted(folder, config_digest(folder, before, before_data))
    ):
        return
    try:  # the rewrite only added a rule: what it runs is what it ran (read again to be exact)
        after_data = tomllib.loads(after.decode("utf-8"))
    except (ValueError, RecursionError):
        after_data = before_data
    with contextlib.suppress(OSError):
        trust(folder, config_digest(folder, after, after_data))


def recorded(folder: Path, kind: str = FOLDERS) -> bool:
    """Whether the user trusted some content of `folder`'s file of this kind (so a mismatch
    now means it changed since)."""
    return folder_key(folder) in _records(kind)
