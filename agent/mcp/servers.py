"""Which MCP servers this session may start, and from where each came.

The user's config always applies. A project's servers widen what cairn runs (a command
from a cloned repository), so they apply only once the user trusted them: those in
`.cairn/config.toml` arrive through agent/settings/config.py, which leaves them out of an untrusted
file (agent/settings/trust.py); a `.mcp.json` (Claude Code's format) is trusted on its own, for its
folder and pinned to its bytes like the config (`/mcp trust` or `cairn trust` records it), so a `git pull`
that changes it asks again. It is read as every repository file cairn reads on its own
(agent/fs/repo_files.py); a symlinked `.mcp.json` is refused.

Trust is pinned to what runs: a project's server (either file) is trusted with the content of
the workspace files its command line executes (`python tools/mcp_server.py`;
agent/settings/run_files.py), and each such server carries a `trust.Pin` that
agent/mcp/connection.py checks right before it starts the process: a server script edited since
(by a sandboxed command, by the model) is not started until the user trusts it again.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agent.fs.repo_files import FileMissing, FileTooLarge, RepoFileError, SymlinkRefused, read_repo_file
from agent.settings import trust
from agent.settings.schema import McpServerSettings, Settings

MCP_JSON = ".mcp.json"
EDITOR = "editor"  # the source of the servers an editor passes over ACP (agent/acp/server.py)
MAX_MCP_JSON_BYTES = 1024 * 1024
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ServerSpec(BaseModel):
    """A server ready to start: its values expanded, its transport known."""

    name: str
    transport: Literal["stdio", "http"]
    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    timeout: float
    source: str  # "config.toml", "editor", ".mcp.json"
    # A project's server: what it was trusted with (a trust.Pin), checked before each start.
    pin: Any = Field(default=None, exclude=True, repr=False)

    def __repr__(self) -> str:  # headers and env may hold tokens
        return f"ServerSpec(name={self.name!r}, transport={self.transport!r}, source={self.source!r})"

    def ensure_unchanged(self) -> None:
        """Raise UntrustedChange when this project server, or a file its command runs, changed
        since the user trusted it (asked right before its process starts)."""
        if self.pin is not None and not self.pin.holds():
            raise UntrustedChange(
                "not started: its config, or a file its command runs, changed since you trusted it. Review the "
                "change and trust it again (/mcp trust, or `cairn trust`)"
            )


class UntrustedChange(Exception):
    """A project's MCP server is not what the user trusted any more."""


class McpJsonState(BaseModel):
    """The project's `.mcp.json` as found: its servers, and whether the user trusted it."""

    path: Path
    # What trust records: the bytes read and the files its servers run; None: the file was refused.
    sha256: str | None
    content_sha256: str | None = None  # of the bytes alone
    trusted: bool
    servers: dict[str, McpServerSettings]
    problems: list[str] = []


def expand(value: str, environ: dict[str, str] | None = None) -> str:
    """`${VAR}` and `${VAR:-default}` from cairn's environment (Claude Code's `.mcp.json` rule),
    so a token lives in the environment rather than in a file."""
    env = os.environ if environ is None else environ

    def one(match: re.Match) -> str:
        found = env.get(match.group(1))
        return found if found else (match.group(2) or "")

    return _ENV_REF.sub(one, value)


def _as_given(value: str) -> str:
    return value


def read_mcp_json(workspace: Path) -> McpJsonState | None:
    """The project's `.mcp.json`, or None when there is none.

    Read through agent/fs/repo_files.py: a FIFO cannot block cairn, a huge file is refused,
    and a symlink is refused outright: trust is the folder's and the content's, and a link
    (to another project's trusted `.mcp.json`, to anywhere) is not content of this folder.
    A refused file comes back with no servers, nothing to trust and a problem saying why."""
    path = Path(workspace) / MCP_JSON
    try:
        raw = read_repo_file(workspace, MCP_JSON, max_bytes=MAX_MCP_JSON_BYTES)
    except FileMissing:
        return None
    except RepoFileError as exc:
        return McpJsonState(path=path, sha256=None, trusted=False, servers={}, problems=[_refused(path, exc)])
    problems: list[str] = []
    servers: dict[str, McpServerSettings] = {}
    try:
        data = json.loads(raw.decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        data, problems = {}, [f"{path} is not valid JSON ({exc}): ignored"]
    table = data.get("mcpServers") if isinstance(data, dict) else None
    for name, entry in table.items() if isinstance(table, dict) else []:
        if not isinstance(entry, dict):
            problems.append(f"{path}: server {name!r} is not an object")
            continue
        kind = entry.get("type", "stdio")
        if kind not in ("stdio", "http", "streamable-http"):
            problems.append(f"{path}: server {name!r} uses transport {kind!r}; cairn speaks stdio and http")
            continue
        fields = {
            k: entry[k] for k in ("command", "args", "env", "cwd", "url", "headers", "enabled", "timeout") if k in entry
        }
        try:
            servers[str(name)] = McpServerSettings.model_validate(fields)
        except ValidationError as exc:
            problems.append(f"{path}: server {name!r} ignored ({exc.error_count()} invalid values)")
    source = mcp_json_source(Path(workspace), trust.digest(raw), servers)
    sha = source.digest()
    return McpJsonState(
        path=path,
        sha256=sha,
        content_sha256=source.content_sha256,
        trusted=trust.is_trusted(Path(workspace), sha, trust.MCP_JSON),
        servers=servers,
        problems=problems,
    )


def mcp_json_source(workspace: Path, content_sha256: str, servers: dict[str, McpServerSettings]) -> trust.Source:
    """A `.mcp.json` as trust sees it: its bytes' digest and the servers it starts."""
    ws = Path(trust.folder_key(workspace))
    programs = tuple(
        trust.Program(f"mcp.servers.{name}", trust.server_argv(cfg), ws / (cfg.cwd or "."))
        for name, cfg in servers.items()
        if cfg.command
    )
    return trust.Source(ws, trust.MCP_JSON, content_sha256, programs)


def mcp_json_now(workspace: Path) -> trust.Source | None:
    """The project's `.mcp.json` read again (None: gone or refused), for a server's pin."""
    state = read_mcp_json(workspace)
    if state is None or state.content_sha256 is None:
        return None
    return mcp_json_source(workspace, state.content_sha256, state.servers)


def _refused(path: Path, exc: RepoFileError) -> str:
    if isinstance(exc, SymlinkRefused):
        return (
            f"Not using {path}: it is a symlink. A project's .mcp.json is trusted for its folder and its "
            f"content, so cairn does not follow a link a repository could point anywhere (another "
            f"project's trusted file, a file outside); replace the link with a copy to use it."
        )
    if isinstance(exc, FileTooLarge):
        return f"{path} is larger than {MAX_MCP_JSON_BYTES // 1024} KiB: ignored"
    return f"Not using {path}: it {exc.reason}"


def trust_mcp_json(state: McpJsonState) -> None:
    """The user trusted this `.mcp.json` as it is now: recorded for its folder and these bytes
    (a record of its own kind, so the folder's config.toml trust does not cover it, nor this
    it). A refused file (no content read) records nothing. Raises OSError when the record
    cannot be written.

    The files its servers run are recorded as they are now: when only those changed since
    `state` was read (the user was told a server script changed and trusts it again), the
    file is read again and its servers' files are taken as they are at this moment."""
    if state.sha256 is None:
        return
    sha = state.sha256
    now = read_mcp_json(state.path.parent)
    if now is not None and now.sha256 is not None and now.content_sha256 == state.content_sha256:
        sha = now.sha256
    trust.trust(state.path.parent, sha, trust.MCP_JSON)


def server_specs(
    settings: Settings, *, mcp_json: McpJsonState | None = None, editor: dict[str, McpServerSettings] | None = None
) -> tuple[list[ServerSpec], list[str]]:
    """The enabled servers in a stable order (config first, then those the editor passed over
    ACP, then `.mcp.json`), and one line per problem (an unusable entry, an untrusted
    `.mcp.json`). The editor's are the user's own, from their editor's settings: they need no
    trust, and their values are taken as given (no `${VAR}`)."""
    problems: list[str] = []
    specs: list[ServerSpec] = []
    default_timeout = settings.mcp.call_timeout
    workspace = Path(settings.workspace)
    project_pin = _project_pins(workspace)
    for name, cfg in settings.mcp.servers.items():
        spec = _spec(name, cfg, "config.toml", default_timeout, problems, settings.workspace)
        if spec is not None:
            specs.append(spec.model_copy(update={"pin": project_pin(name, cfg)}))
    for name, cfg in (editor or {}).items():
        if name in {s.name for s in specs}:
            problems.append(f"MCP server {name!r} of the editor ignored: config.toml defines it")
            continue
        spec = _spec(name, cfg, EDITOR, default_timeout, problems, settings.workspace, literal=True)
        if spec is not None:
            specs.append(spec)
    if mcp_json is not None:
        problems.extend(mcp_json.problems)
        if mcp_json.servers and not mcp_json.trusted:
            changed = " (it, or a file its servers run, changed since you trusted it)"
            problems.append(
                f"Not starting the {len(mcp_json.servers)} MCP server(s) of {mcp_json.path}: it is not "
                f"trusted{changed if trust.recorded(workspace, trust.MCP_JSON) else ''}. Review it and run "
                f"/mcp trust in cairn (or `cairn trust {workspace}`)."
            )
        elif mcp_json.trusted:
            taken = {s.name: "the editor" if s.source == EDITOR else s.source for s in specs}
            for name, cfg in mcp_json.servers.items():
                if name in taken:
                    problems.append(f"MCP server {name!r} of {mcp_json.path} ignored: {taken[name]} defines it")
                    continue
                spec = _spec(name, cfg, MCP_JSON, default_timeout, problems, settings.workspace)
                if spec is not None:
                    pin = trust.Pin(lambda: mcp_json_now(workspace), f"mcp.servers.{name}")
                    specs.append(spec.model_copy(update={"pin": pin}))
    return specs, problems


def _project_pins(workspace: Path) -> Callable[[str, McpServerSettings], trust.Pin | None]:
    """Which of the settings' servers are the project config's, and their pin: settings merge
    the user's servers with the project's, so a server is the project's when the project lists
    that name and either its config is trusted now (so it was applied, whatever it overrides)
    or it runs the same command line (it was trusted, and has changed since)."""
    from agent.settings.project_source import project_config_source, project_pin

    project = project_config_source(workspace)
    listed = {p.what: p for p in project.programs} if project is not None else {}
    trusted_now = bool(listed) and project is not None and project.trusted()

    def pin(name: str, cfg: McpServerSettings) -> trust.Pin | None:
        program = listed.get(f"mcp.servers.{name}")
        if program is None:
            return None
        line = (cfg.command or "", *cfg.args)
        return project_pin(workspace, program.what) if trusted_now or program.command[: len(line)] == line else None

    return pin


def _spec(
    name: str,
    cfg: McpServerSettings,
    source: str,
    default_timeout: float,
    problems: list[str],
    workspace: Path,
    *,
    literal: bool = False,
) -> ServerSpec | None:
    expand_ = _as_given if literal else expand
    if not cfg.enabled:
        return None
    if bool(cfg.command) == bool(cfg.url):
        problems.append(f"MCP server {name!r} ({source}) needs either `command` or `url`")
        return None
    cwd = expand_(cfg.cwd) if cfg.cwd else None
    if cwd is not None and not os.path.isabs(cwd):
        cwd = str(Path(workspace) / cwd)
    common: dict[str, Any] = {"name": name, "timeout": cfg.timeout or default_timeout, "source": source}
    if cfg.url:
        url = expand_(cfg.url)
        if not url.startswith(("http://", "https://")):
            problems.append(f"MCP server {name!r} ({source}): url must start with http:// or https://")
            return None
        return ServerSpec(transport="http", url=url, headers={k: expand_(v) for k, v in cfg.headers.items()}, **common)
    return ServerSpec(
        transport="stdio",
        command=expand_(cfg.command or ""),
        args=[expand_(a) for a in cfg.args],
        env={k: expand_(v) for k, v in cfg.env.items()},
        cwd=cwd or str(workspace),
        **common,
    )
