"""The settings' shape: every config table as a pydantic model, `Settings` over them, their defaults.

What each key means, its default and its allowed range live here, next to one another; how the
layers are read, merged and validated into a `Settings` (defaults < user config.toml < project
.cairn/config.toml < CAIRN_* env < flags) is agent/settings/config.py. A value out of range is a
validation error like a wrong type: the loader warns and keeps the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent.hooks.names import DEFAULT_TIMEOUT as DEFAULT_HOOK_TIMEOUT

# How much a model that reasons thinks before answering (agent/llm/reasoning.py).
Effort = Literal["off", "minimal", "low", "medium", "high"]
# agent/tools/modes.py MODES (settings may not import tools/; tests/tools/test_modes.py checks they agree).
PermissionMode = Literal["default", "acceptEdits", "plan"]


class Section(BaseModel):
    """A config table: unknown keys are the loader's to warn about, never an error here."""

    # defer_build: schemas are built on first use, not at import (config is on the startup path).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class ModelOverride(Section):
    """Per-model limits that win over litellm's model info."""

    context_window: int | None = Field(None, ge=1)
    max_output_tokens: int | None = Field(None, ge=1)
    # Unconstrained on purpose: an odd value warns where it is used (agent/context/budget.py).
    auto_condense_percent: float | None = None
    reasoning_effort: Effort | None = None  # wins over [llm] reasoning_effort for this model
    # The model reasons, so it is sent the effort (agent/llm/reasoning.py): true for a reasoning
    # model litellm's price map does not list (a local server's), false to never send one.
    # Unset: the price map decides.
    supports_reasoning: bool | None = None


# Range checks: an out-of-range value (command_timeout = -5 would kill every command at
# once) is a validation error like a wrong type: warned about, default kept.
class LLMSettings(Section):
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


class ToolSettings(Section):
    command_timeout: float = Field(120.0, gt=0)
    # The most a command may run, whatever timeout the model asks for (terminal-execute clamps).
    max_command_timeout: float = Field(600.0, gt=0)
    max_read_lines: int = Field(2000, ge=1)
    max_file_bytes: int = Field(10 * 1024 * 1024, ge=1)


class ContextSettings(Section):
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
    # Fractions of the request; start < end is checked by the loader (config.py `_validate`: two keys).
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


class PermissionSettings(Section):
    """`[permissions]`: what runs without asking (agent/tools/permissions.py decides).

    allow_commands: command prefixes by whole words (`"git status"` covers `git status -s`,
    not `git statusx`); a compound command runs unasked only if every part is covered.
    allow: other remembered decisions: `"edit"` (file changes in the workspace),
    `"outside:/abs/path"`, `"command:<prefix>"`. The user's and the project's lists add up.
    Protected targets (.env*, .git/, this file, outside the workspace) always ask anyway.
    """

    allow_commands: list[str] = Field(default_factory=list)
    allow: list[str] = Field(default_factory=list)


class McpServerSettings(Section):
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


class McpSettings(Section):
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


class WebSettings(Section):
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
    # `web-search` (agent/tools/web_search.py): a SearXNG-compatible JSON endpoint for any model, and
    # for Claude models Anthropic's own server-side search (agent/llm/server_search.py). Where queries
    # go and what they cost: a project config sets either only once trusted (agent/settings/trust.py).
    search_url: str | None = None
    native_search: bool = False
    search_max_results: int = Field(8, ge=1, le=20)  # results a search returns to the model
    native_max_uses: int = Field(5, ge=1, le=50)  # Anthropic's `max_uses`: searches per request
    search_blocked_domains: list[str] = Field(default_factory=list)  # never in results, either backend


class SandboxSettings(Section):
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


class LspServerSettings(Section):
    """`[lsp.servers.NAME]`: a language server cairn may start (agent/lsp/servers.py). A NAME
    cairn knows (`pylsp`, `pyright`, `basedpyright`, `typescript`, `gopls`, `rust-analyzer`)
    keeps what is not given here; `enabled = false` turns one off."""

    command: list[str] = Field(default_factory=list)
    extensions: list[str] = Field(default_factory=list)  # ".py", or "py"
    enabled: bool = True


class LspSettings(Section):
    """`[lsp]`: diagnostics after edits and the `lsp` tool (SPEC §13.8, agent/lsp/). Servers
    run in the sandbox; `unsandboxed = true` runs them outside it (what a server runs of the
    repository then runs with your access), and `[lsp.servers]` names commands: in a project
    config both need trust. timeout_ms: the most an edit waits for its diagnostics."""

    enabled: bool = True
    timeout_ms: int = Field(1500, ge=10, le=60_000)
    max_diagnostics: int = Field(10, ge=1, le=100)  # lines per edit's result
    unsandboxed: bool = False
    servers: dict[str, LspServerSettings] = Field(default_factory=dict)


class AgentsSettings(Section):
    """`[agents]`: subagents (agent/subagents/)."""

    # Subagent calls of one message run at the same time, this many at once.
    max_parallel: int = Field(default=4, ge=1, le=16)


class NotifySettings(Section):
    """`[notify]`: the TUI rings the terminal (bell, OSC 9 and OSC 777) when a turn that took
    longer than `after_s` seconds ends or an approval waits, while the terminal is not focused
    (always, if it does not report focus). agent/ui/notify.py."""

    enabled: bool = True
    after_s: float = Field(10.0, ge=0)


class HookCommand(Section):
    """One `[[hooks.EVENT]]` entry: a shell command run at that event (agent/hooks/)."""

    matcher: str | None = None  # a tool name or a regex over tool names (Claude Code's too); omitted: every tool
    command: str = Field(min_length=1)
    timeout: float = Field(DEFAULT_HOOK_TIMEOUT, gt=0)  # seconds; then its process group is killed


class HooksSettings(Section):
    """`[hooks]`: commands run at Claude Code's hook events, as `[[hooks.PreToolUse]]` tables
    (SPEC §13.5; agent/hooks/). A project's apply once its folder is trusted.
    read_claude_settings: also run the hooks of Claude Code's settings.json files, so a Claude
    Code user's setup works unchanged (on by default; the user's own config only may turn it
    off; a project's `.claude/` hooks still need trust)."""

    PreToolUse: list[HookCommand] = Field(default_factory=list)
    PermissionRequest: list[HookCommand] = Field(default_factory=list)
    PostToolUse: list[HookCommand] = Field(default_factory=list)
    PostToolUseFailure: list[HookCommand] = Field(default_factory=list)
    UserPromptSubmit: list[HookCommand] = Field(default_factory=list)
    Stop: list[HookCommand] = Field(default_factory=list)
    SubagentStart: list[HookCommand] = Field(default_factory=list)
    SubagentStop: list[HookCommand] = Field(default_factory=list)
    SessionStart: list[HookCommand] = Field(default_factory=list)
    SessionEnd: list[HookCommand] = Field(default_factory=list)
    PreCompact: list[HookCommand] = Field(default_factory=list)
    Notification: list[HookCommand] = Field(default_factory=list)
    read_claude_settings: bool = True


class Settings(Section):
    """Everything a run is configured with: the top-level keys and the tables. What the loader
    found on the way (its warnings, the project's pending trust) is not configuration: it is
    agent/settings/config.py's `LoadedConfig` beside these settings."""

    model: str | None = None
    api_base: str | None = None
    # repr=False: a crash report printing locals (Textual's traceback) must not show the key.
    api_key: str | None = Field(default=None, repr=False)
    yolo: bool = False
    # --effort: every model's effort for this run, over [models."…"] and [llm] reasoning_effort
    # (agent/llm/reasoning.py `effort_for`); the TUI's /effort is the session's, over this.
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
    lsp: LspSettings = Field(default_factory=LspSettings)
    agents: AgentsSettings = Field(default_factory=AgentsSettings)
    hooks: HooksSettings = Field(default_factory=HooksSettings)
    notify: NotifySettings = Field(default_factory=NotifySettings)


def model_override(settings: Settings, model: str) -> ModelOverride:
    """The `[models."<model>"]` table for `model` (also found under its name without the provider)."""
    return settings.models.get(model) or settings.models.get(model.split("/", 1)[-1]) or ModelOverride()
