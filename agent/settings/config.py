"""Settings: defaults < user config.toml < project .cairn/config.toml < CAIRN_* env < flags.

Bad files or values never stop cairn: each problem becomes a readable warning and the
default is kept. Imports nothing heavy (this module is on the path to the first screen).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.hooks.names import DEFAULT_TIMEOUT as DEFAULT_HOOK_TIMEOUT
from agent.hooks.names import EVENTS as HOOK_EVENTS
from agent.paths import APP_NAME, config_dir, data_dir, db_path, home_dir  # noqa: F401 - re-exported
from agent.process.secrets import remember_secret
from agent.prompt import instruction_notices
from agent.settings import trust
from agent.settings.toml_salvage import error_text, has_values, salvage

# How much a model that reasons thinks before answering (agent/llm/reasoning.py).
Effort = Literal["off", "minimal", "low", "medium", "high"]
# agent/tools/modes.py MODES (settings may not import tools/; tests/tools/test_modes.py checks they agree).
PermissionMode = Literal["default", "acceptEdits", "plan"]


class _Section(BaseModel):
    # defer_build: schemas are built on first use, not at import (config is on the startup path).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class ModelOverride(_Section):
    """Per-model limits that win over litellm's model info."""

    context_window: int | None = Field(None, ge=1)
    max_output_tokens: int | None = Field(None, ge=1)
    # Unconstrained on purpose: an odd value warns where it is used (agent/context/budget.py).
    auto_condense_percent: float | None = None
    reasoning_effort: Effort | None = None  # wins over [llm] reasoning_effort for this model


# Range checks: an out-of-range value (command_timeout = -5 would kill every command at
# once) is a validation error like a wrong type: warned about, default kept.
class LLMSettings(_Section):
    max_retries: int = Field(5, ge=0)
    retry_base_delay: float = Field(1.0, ge=0)
    retry_max_delay: float = Field(30.0, ge=0)
    request_timeout: float = Field(600.0, gt=0)
    # Seconds a stream may go without content (text, tool-call or finish deltas; SSE
    # keep-alive comments do not count) before it is given up as a network error.
    stream_idle_timeout: float = Field(60.0, gt=0)
    temperature: float | None = Field(None, ge=0)
    # Sent as the request's max_tokens: the most a reply may generate (a looping local model
    # stops here instead of filling the server's context). Default: the model's output limit
    # ([models."<model>"] max_output_tokens, litellm's price map, context.default_max_output_tokens).
    max_output_tokens: int | None = Field(None, ge=1)
    # How much a model that reasons thinks first (agent/llm/reasoning.py): off | minimal |
    # low | medium | high. Unset: the model's own default. `--effort` and /effort override it.
    reasoning_effort: Effort | None = None
    # Which client carries requests (agent/llm/route.py): "auto" speaks OpenAI's and
    # Anthropic's protocols itself (no litellm import before the first answer) and uses
    # litellm for every other provider; "litellm" sends every model through litellm.
    client: Literal["auto", "litellm"] = "auto"


class ToolSettings(_Section):
    command_timeout: float = Field(120.0, gt=0)
    # The most a command may run, whatever timeout the model asks for (terminal-execute clamps).
    max_command_timeout: float = Field(600.0, gt=0)
    max_read_lines: int = Field(2000, ge=1)
    max_file_bytes: int = Field(10 * 1024 * 1024, ge=1)


class ContextSettings(_Section):
    tokenizer: str = "o200k_base"
    default_context_window: int = Field(128_000, ge=1)
    # Seed 001 §3.3.5: the reply's reservation when the model's output limit is unknown.
    default_max_output_tokens: int = Field(4_096, ge=1)
    # Seed 001 budget: condense when a request reaches this percent of the window (or
    # exceeds the allowed tokens); when condensing is off or fails, smart truncation shapes
    # the request copy toward `fallback_max_tokens`.
    auto_condense: bool = True
    auto_condense_percent: float = Field(80.0, gt=0, le=100)
    condense_model: str | None = None  # a cheaper model for summaries; default: the chat model
    condense_keep_recent_user_tokens: int = Field(20_000, ge=0)
    fallback_max_tokens: int = Field(50_000, ge=1)
    # Fractions of the request; start < end is checked in `_validate` (across two keys).
    truncation_middle_start: float = Field(1 / 6, ge=0, le=1)
    truncation_middle_end: float = Field(5 / 6, ge=0, le=1)
    fold_max_tokens: int = Field(10_000, ge=1)
    fold_max_line_span: int = Field(100, ge=1)
    # Seed 004: a tool output longer than this reaches the model as a preview (its first and
    # last lines, `inline_preview_chars` in all) and a context-file ref; storage keeps all.
    max_inline_chars: int = Field(5_000, ge=1)
    inline_preview_chars: int = Field(1_024, ge=0)
    # Context files (SPEC §6, §12.9): a cache of SQLite under <data>/context/<session>/.
    files_read_default_bytes: int = Field(8_192, ge=1)
    files_read_max_bytes: int = Field(65_536, ge=1)
    files_tail_default_lines: int = Field(200, ge=1)
    files_tail_max_lines: int = Field(2_000, ge=1)
    files_grep_max_results: int = Field(50, ge=1)
    files_grep_timeout: float = Field(5.0, ge=0)
    files_cache_max_bytes: int = Field(1024**3, ge=0)
    files_ttl_days: int = Field(30, ge=0)
    redact: bool = False
    # Seed 003: old successful terminal outputs become a placeholder.
    terminal_keep_recent_results: int = Field(5, ge=0)
    terminal_max_age_ms: int = Field(15 * 60 * 1000, ge=0)
    terminal_outdated_placeholder: str = "此命令返回内容已过时"
    # Seed 000: only the newest successful reads of each file are sent whole.
    file_keep_recent_reads: int = Field(5, ge=0)
    file_read_placeholder: str = "[该文件的历史读取内容已压缩,请参看最新读取结果]"
    # SPEC §12.11: when a seed 000/003 replacement of an already-sent message is applied.
    # "exact": on every request (the seeds to the letter); "auto": held while the provider's
    # prompt cache is warm, applied together when it is cold, when they pay for re-writing
    # the cache, or when the budget needs room. Unset: "auto" for models whose provider
    # caches prompts, "exact" for the others.
    cache_policy: Literal["auto", "exact"] | None = None
    cache_ttl_ms: int = Field(5 * 60 * 1000, ge=0)  # the provider's cache lifetime (Anthropic: 5 min)


class PermissionSettings(_Section):
    """`[permissions]`: what runs without asking (agent/tools/permissions.py decides).

    allow_commands: command prefixes by whole words (`"git status"` covers `git status -s`,
    not `git statusx`); a compound command runs unasked only if every part is covered.
    allow: other remembered decisions: `"edit"` (file changes in the workspace),
    `"outside:/abs/path"`, `"command:<prefix>"`. The user's and the project's lists add up.
    Protected targets (.env*, .git/, this file, outside the workspace) always ask anyway.
    """

    allow_commands: list[str] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)


class McpServerSettings(_Section):
    """One `[mcp.servers.NAME]` table: a command to run (stdio) or a `url` (streamable HTTP).
    `${VAR}` / `${VAR:-default}` in values come from cairn's environment (agent/mcp/servers.py)."""

    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict, repr=False)  # tokens: never printed
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict, repr=False)  # tokens: never printed
    enabled: bool = True
    timeout: float | None = Field(None, gt=0)  # seconds per call; default mcp.call_timeout


class McpSettings(_Section):
    """`[mcp]`: MCP servers (agent/mcp/). Project-level servers apply once the folder is trusted."""

    servers: dict[str, McpServerSettings] = Field(default_factory=dict)
    # Above this many tokens of MCP tool definitions, a request carries one line per MCP tool
    # and the `mcp-tool-schema` loader instead of every schema (seed 004's catalog).
    inline_tool_tokens: int = Field(4_000, ge=0)
    startup_timeout: float = Field(30.0, gt=0)  # connect + list tools, per server
    call_timeout: float = Field(120.0, gt=0)
    # `cairn -p` waits this long at most for servers to be ready before its first request.
    headless_wait: float = Field(30.0, ge=0)
    # A result longer than this is cut (storage included); what stays is externalised as usual.
    max_result_chars: int = Field(1_000_000, ge=1_000)


class WebSettings(_Section):
    """`[web]`: what web-fetch may reach and how much it reads.

    allow_private: also fetch from loopback, private and link-local addresses (a local dev
    server, an intranet wiki). Off by default: a URL comes from the model, and the machine
    can reach what the internet cannot. A project's `.cairn/config.toml` turns it on only
    once the user trusted that folder's config (a widening key of agent/settings/trust.py); the
    user's own config needs no trust.
    """

    allow_private: bool = False
    timeout: float = Field(30.0, gt=0)  # seconds for the whole fetch, redirects included
    max_bytes: int = Field(5 * 1024 * 1024, ge=1)  # of the response body read; the rest is not downloaded


class SandboxSettings(_Section):
    """`[sandbox]`: how commands that run without asking are contained (agent/tools/sandbox.py).

    Read-only commands cairn runs unasked always run in the sandbox (no sandbox on the
    machine: they ask). rules: what a command allowed by a rule (`[permissions]`, "always",
    `--allowed-tools`) runs in: "workspace-write" (the sandbox, the workspace writable but its
    `.git`/`.cairn`, no network) or "off" (unconfined, as an approved command; a project config
    needs trust to say so). approved: what a command the user approved when asked runs in.
    hide: more files or folders the sandbox hides (`~` expands), beyond the built-in secrets.
    env_passthrough: variables a sandboxed command keeps though they look like secrets
    (`*_TOKEN`, `*_KEY`, …): exact names or fnmatch patterns. It widens what sandboxed code
    sees, so a project config needs trust for it.
    """

    rules: Literal["workspace-write", "off"] = "workspace-write"
    approved: Literal["off", "workspace-write"] = "off"
    hide: list[str] = Field(default_factory=list)
    env_passthrough: list[str] = Field(default_factory=list)


class AgentsSettings(_Section):
    """`[agents]`: subagents (agent/subagents/)."""

    # Subagent calls of one message run at the same time, this many at once.
    max_parallel: int = Field(default=4, ge=1, le=16)


class NotifySettings(_Section):
    """`[notify]`: the TUI rings the terminal (bell, OSC 9 and OSC 777) when a turn that took
    longer than `after_s` seconds ends or an approval waits, while the terminal is not focused
    (always, if it does not report focus). agent/ui/notify.py."""

    enabled: bool = True
    after_s: float = Field(10.0, ge=0)


class HookCommand(_Section):
    """One `[[hooks.EVENT]]` entry: a shell command run at that event (agent/hooks/)."""

    matcher: str | None = None  # a tool name or a regex over tool names (Claude Code's too); omitted: every tool
    command: str = Field(min_length=1)
    timeout: float = Field(DEFAULT_HOOK_TIMEOUT, gt=0)  # seconds; then its process group is killed


class HooksSettings(_Section):
    """`[hooks]`: commands run at Claude Code's hook events, as `[[hooks.PreToolUse]]` tables
    (SPEC §13.5; agent/hooks/). A project's apply once its folder is trusted.
    read_claude_settings: also run the hooks of Claude Code's settings.json files (the user's
    own config only decides it; a project's `.claude/` hooks still need trust)."""

    PreToolUse: list[HookCommand] = Field(default_factory=list)
    PostToolUse: list[HookCommand] = Field(default_factory=list)
    UserPromptSubmit: list[HookCommand] = Field(default_factory=list)
    Stop: list[HookCommand] = Field(default_factory=list)
    SessionStart: list[HookCommand] = Field(default_factory=list)
    PreCompact: list[HookCommand] = Field(default_factory=list)
    Notification: list[HookCommand] = Field(default_factory=list)
    read_claude_settings: bool = False


class Settings(_Section):
    model: str | None = None
    api_base: str | None = None
    # repr=False: a crash report printing locals (Textual's traceback) must not show the key.
    api_key: str | None = Field(default=None, repr=False)
    yolo: bool = False
    # --effort (and /effort in the TUI): every model's effort for this run, over [models."…"]
    # and [llm] reasoning_effort (agent/llm/reasoning.py `effort_for`).
    effort: Effort | None = None
    # The mode a session starts in (`--permission-mode`; Shift+Tab and ACP switch it while it
    # runs). A project file may narrow it (plan) but widen it (acceptEdits) only once trusted.
    permission_mode: PermissionMode = "default"
    workspace: Path = Field(default_factory=Path.cwd)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    models: dict[str, ModelOverride] = Field(default_factory=dict)
    permissions: PermissionSettings = Field(default_factory=PermissionSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    web: WebSettings = Field(default_factory=WebSettings)
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)
    agents: AgentsSettings = Field(default_factory=AgentsSettings)
    hooks: HooksSettings = Field(default_factory=HooksSettings)
    notify: NotifySettings = Field(default_factory=NotifySettings)
    # Problems found while loading (bad TOML, wrong types); shown to the user once.
    warnings: list[str] = Field(default_factory=list, exclude=True)
    # An `agent.settings.trust.ProjectTrust` when the project config has widening keys the user has
    # not trusted (they were left out; the TUI asks); None otherwise. Never read from a file.
    project_trust: Any = Field(default=None, exclude=True, repr=False)


MAX_CONFIG_BYTES = 1024 * 1024  # a config file is a few lines; a huge one is a mistake or hostile


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    return _read_toml_bytes(path, warnings)[0]


def _read_toml_bytes(
    path: Path, warnings: list[str], workspace: Path | None = None
) -> tuple[dict[str, Any], bytes | None]:
    """The parsed file and the bytes it was parsed from (None when there is no file or it
    could not be read; a file that does not parse gives {} and its bytes).

    With `workspace`, `path` is a repository's file (the project's `.cairn/config.toml`): it
    is read through agent/fs/repo_files.py below the workspace, so a symlink out of it, a FIFO
    (it would block cairn) or a huge file is refused with a warning. The user's own config
    may be a symlink (a dotfiles manager's) but must be a regular file too."""
    from agent.fs.repo_files import FileMissing, FileTooLarge, RepoFileError, read_own_file, read_repo_file

    raw: bytes | None = None
    try:
        if workspace is not None:
            raw = read_repo_file(workspace, path.relative_to(workspace), max_bytes=MAX_CONFIG_BYTES, follow_inside=True)
        else:
            raw = read_own_file(path, max_bytes=MAX_CONFIG_BYTES)
    except FileMissing:
        return {}, None
    except FileTooLarge:
        warnings.append(f"Ignoring {path}: larger than {MAX_CONFIG_BYTES // 1024} KiB")
        return {}, None
    except RepoFileError as exc:
        warnings.append(f"Ignoring {path}: it {exc.reason}")
        return {}, None
    try:
        # Universal newlines, as read_text gives.
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        return tomllib.loads(text), raw
    except tomllib.TOMLDecodeError as exc:
        if workspace is not None:  # a repository's file: never half-applied
            warnings.append(f"Ignoring {path}: {error_text(exc)}")
            return {}, raw
        return _salvaged(path, text, exc, warnings), raw
    except UnicodeDecodeError as exc:
        warnings.append(f"Ignoring {path}: {exc}")
        return {}, raw
    except RecursionError:  # tomllib recurses per nesting level: `a = [[[[…` overflows the stack
        warnings.append(f"Ignoring {path}: nested too deeply")
        return {}, raw


def _salvaged(path: Path, text: str, exc: tomllib.TOMLDecodeError, warnings: list[str]) -> dict[str, Any]:
    """The user's own file that does not parse: the tables that do are kept
    (agent/settings/toml_salvage.py), and one warning names the file, the line and what was dropped."""
    kept = salvage(text)
    if not kept.dropped or not has_values(kept.data):  # nothing to keep, or no table to blame
        warnings.append(f"Ignoring {path}: {error_text(exc)}")
        return {}
    warnings.append(
        f"{path} is not valid TOML ({error_text(exc)}): ignored {', '.join(kept.dropped)}; the rest applies"
    )
    return kept.data


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


_ENV_KEYS = {
    "CAIRN_MODEL": ("model",),
    "CAIRN_API_BASE": ("api_base",),
    "CAIRN_API_KEY": ("api_key",),
    "CAIRN_YOLO": ("yolo",),
    "CAIRN_TOKENIZER": ("context", "tokenizer"),
    "CAIRN_COMMAND_TIMEOUT": ("tools", "command_timeout"),
    "CAIRN_MAX_RETRIES": ("llm", "max_retries"),
}


def _env_layer() -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for var, path in _ENV_KEYS.items():
        value = os.environ.get(var)
        if value is None or value == "":
            continue
        node = layer
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return layer


MAX_WARNINGS_PER_KIND = 20  # a file of 10,000 typos gives a readable list, not a flood


def _key_name(parts: list[Any]) -> str:
    name = ".".join(str(p) for p in parts)
    return name if name.isprintable() else ascii(name)  # keys are shown to the user


class _Warner:
    """Appends warnings of one kind, the first MAX_WARNINGS_PER_KIND and then a count."""

    def __init__(self, warnings: list[str], more: str) -> None:
        self.warnings, self.more, self.count = warnings, more, 0

    def __call__(self, text: str) -> None:
        self.count += 1
        if self.count <= MAX_WARNINGS_PER_KIND:
            self.warnings.append(text)

    def finish(self) -> None:
        if self.count > MAX_WARNINGS_PER_KIND:
            self.warnings.append(f"… and {self.count - MAX_WARNINGS_PER_KIND} more {self.more}")


def _sections() -> dict[str, type[_Section]]:
    """Settings' fields that are tables of known keys (every `_Section` field)."""
    return {
        name: field.annotation
        for name, field in Settings.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, _Section)
    }


def _drop_unknown_keys(data: dict[str, Any], warnings: list[str]) -> None:
    """Remove keys no setting reads (a typo such as `comand_timeout`), each with a warning.

    `models` is a table of per-model tables: its keys are model names (any), their keys
    ModelOverride fields. Values of the wrong type are left to validation.
    """
    warn = _Warner(warnings, "unknown config keys ignored")

    def check(table: dict[str, Any], known: set[str], prefix: list[Any]) -> None:
        for key in [k for k in table if k not in known]:
            del table[key]
            warn(f"Unknown config key {_key_name(prefix + [key])} ignored")

    top = set(Settings.model_fields) - {"warnings", "project_trust"}  # filled in, never read
    check(data, top, [])
    for name, section in _sections().items():
        if isinstance(data.get(name), dict):
            check(data[name], set(section.model_fields), [name])
    models = data.get("models")
    if isinstance(models, dict):
        for model, override in models.items():
            if isinstance(override, dict):
                check(override, set(ModelOverride.model_fields), ["models", model])
    warn.finish()


def _error_target(data: dict[str, Any], loc: tuple[Any, ...]) -> tuple[dict[str, Any], Any] | None:
    """The (table, key) holding the value an error points at: the deepest table on the path
    (an error inside a list drops the whole list, `allow = ["x", 3]`)."""
    target = None
    node: Any = data
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            break
        target = (node, part)
        node = node[part]
    return target


def _validate(data: dict[str, Any], warnings: list[str]) -> Settings:
    """Validate; on error drop each offending key (keeping its default) and warn.

    Every error of a round is dropped at once; dropping a value cannot make another one
    invalid, so this settles in a round or two (bounded anyway). Everything valid is kept,
    the workspace and the flags included.
    """
    data = dict(data)
    warn = _Warner(warnings, "config values ignored")
    settings: Settings | None = None
    for _ in range(10):
        try:
            settings = Settings.model_validate(data)
            break
        except ValidationError as exc:
            errors = exc.errors()
        targets: dict[tuple[int, Any], tuple[dict[str, Any], Any]] = {}
        for err in errors:
            target = _error_target(data, err["loc"])
            if target is not None and (id(target[0]), target[1]) not in targets:
                targets[(id(target[0]), target[1])] = target
                warn(f"Config value {_key_name(list(err['loc']))} ignored: {err['msg']}")
        if not targets:
            break
        for table, key in targets.values():
            table.pop(key, None)
    warn.finish()
    if settings is None:  # not expected: keep at least the workspace
        warnings.append("Config ignored: it could not be validated")
        settings = Settings(workspace=data.get("workspace") or Path.cwd())
    ctx = settings.context
    if not ctx.truncation_middle_start < ctx.truncation_middle_end:
        warnings.append("Config values context.truncation_middle_start/end ignored: the start must be below the end")
        default = ContextSettings()
        ctx.truncation_middle_start = default.truncation_middle_start
        ctx.truncation_middle_end = default.truncation_middle_end
    return settings


def project_config_path(workspace: Path) -> Path:
    return Path(workspace) / ".cairn" / "config.toml"


def read_project_config(workspace: Path, warnings: list[str]) -> tuple[dict[str, Any], bytes | None]:
    """The project config as parsed and the bytes it came from (None: no readable file).

    `hooks.read_claude_settings` is the user's own choice: a project's is left out."""
    data, raw = _read_toml_bytes(project_config_path(workspace), warnings, Path(workspace))
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and "read_claude_settings" in hooks:
        data["hooks"] = {k: v for k, v in hooks.items() if k != "read_claude_settings"}
        warnings.append(
            f"Ignoring hooks.read_claude_settings in {project_config_path(workspace)}: only your own config sets it"
        )
    return data, raw


def _permission_lists(user: dict[str, Any], project: dict[str, Any]) -> dict[str, Any] | None:
    """The user's and the project's `[permissions]` lists add up (a plain merge would let
    the project's list replace the user's)."""
    u, p = user.get("permissions"), project.get("permissions")
    if not isinstance(u, dict) or not isinstance(p, dict):
        return None
    out = _merge(u, p)
    for key in ("allow_commands", "allow"):
        if isinstance(u.get(key), list) and isinstance(p.get(key), list):
            out[key] = u[key] + [v for v in p[key] if v not in u[key]]
    return out


def _hook_lists(user: dict[str, Any], project: dict[str, Any]) -> dict[str, Any] | None:
    """The user's and the project's hooks of an event add up: a project's hook runs beside
    the user's guard, never instead of it."""
    u, p = user.get("hooks"), project.get("hooks")
    if not isinstance(u, dict) or not isinstance(p, dict):
        return None
    out = _merge(u, p)
    for event in HOOK_EVENTS:
        if isinstance(u.get(event), list) and isinstance(p.get(event), list):
            out[event] = u[event] + p[event]
    return out


def _hidden_paths(user: dict[str, Any], project: dict[str, Any]) -> list[Any] | None:
    """`sandbox.hide` of the user and the project add up: a project cannot un-hide a path."""
    u, p = user.get("sandbox"), project.get("sandbox")
    if not isinstance(u, dict) or not isinstance(p, dict):
        return None
    uh, ph = u.get("hide"), p.get("hide")
    if not isinstance(uh, list) or not isinstance(ph, list):
        return None
    return uh + [v for v in ph if v not in uh]


def load_settings(workspace: Path | None = None, flags: dict[str, Any] | None = None) -> Settings:
    warnings: list[str] = []
    ws = (workspace or Path.cwd()).resolve()
    user = _read_toml(config_dir() / "config.toml", warnings)
    project, raw = read_project_config(ws, warnings)
    # Folder trust (agent/settings/trust.py): keys that widen what cairn may do or where data goes
    # apply only when the user trusted this file's content; without that they are left out.
    pending = trust.pending(ws, project_config_path(ws), raw, project, flags) if raw is not None else None
    if pending is not None:
        project = trust.without_widening(project)
        warnings.append(pending.notice)
    data: dict[str, Any] = _merge(user, project)
    permissions = _permission_lists(user, project)
    if permissions is not None:
        data["permissions"] = permissions
    hooks = _hook_lists(user, project)
    if hooks is not None:
        data["hooks"] = hooks
    hide = _hidden_paths(user, project)
    if hide is not None:
        data["sandbox"] = {**data["sandbox"], "hide": hide}
    data = _merge(data, _env_layer())
    data = _merge(data, {k: v for k, v in (flags or {}).items() if v is not None})
    data["workspace"] = ws
    _drop_unknown_keys(data, warnings)
    settings = _validate(data, warnings)
    warnings.extend(instruction_notices(ws))  # an AGENTS.md that leads outside is named once
    settings.warnings = warnings
    settings.project_trust = pending
    if settings.api_key:
        remember_secret(settings.api_key)
    return settings


def untrusted_project_keys(workspace: Path) -> list[str]:
    """The keys of the project config left out because its folder is not trusted ([] = none)."""
    ws = Path(workspace).resolve()
    project, raw = read_project_config(ws, [])
    pending = trust.pending(ws, project_config_path(ws), raw, project) if raw is not None else None
    return [name for name, _ in pending.items] if pending is not None else []


def model_override(settings: Settings, model: str) -> ModelOverride:
    return settings.models.get(model) or settings.models.get(model.split("/", 1)[-1]) or ModelOverride()
