"""Approval for commands, file changes and paths outside the workspace.

Read-only tools never ask. A tool with a side effect builds an `ApprovalRequest` and awaits
`Permissions.check`, which decides in this order:

1. `--yolo`: allowed, nothing asked (like Claude Code's bypass mode; nothing is exempt,
   because `cairn -p --yolo` has nobody to ask).
2. Protected targets always ask: writes to `.env*`, anything under `.git/`, the project's
   `.cairn/config.toml` (it holds these very rules) and files outside the workspace; a
   command that `agent.tools.shell_parse` cannot fully account for (line continuations,
   expansions, substitutions, globs, brace expansion, here-documents, redirection into a
   file, `eval`/`sh -c`/`env CMD`…, anything the parser does not know) or that names such a
   path — every word that may be a path is resolved against the command's folder, symlinks
   followed. Their only choices are "once" and "deny": no remembered decision and no
   allowlist covers them.
3. Remembered decisions: "always this session" (in memory), "always for this project"
   (`[permissions]` in `.cairn/config.toml`, see `agent.config.PermissionSettings`) and the
   command allowlist `permissions.allow_commands`, matched by whole words against each
   simple command of the parse; `fetch:<host>` for web-fetch (`fetch:*.example.com` covers
   the subdomains too); and read-only commands (`ls`, `cat`, `git status`…, with
   options known to only read, see agent/tools/read_only.py) need no rule. A compound
   command (`;`, `&&`, `||`, `|`, `&`, newlines) is covered only if every part is.
4. Otherwise the approver (the UI's modal) answers; without one (`cairn -p`), refused.

Every check is recorded; the registry stores the records with the tool's result
(`meta["permission"]`), so the session shows what was decided, how, and for what command.
"""

from __future__ import annotations

import contextvars
import os
import shutil
from pathlib import Path, PurePath
from typing import Any, Awaitable, Callable, Literal

from pydantic import BaseModel

from agent.tools import read_only as read_only_programs, shell_parse

Decision = Literal["once", "always", "always_project", "deny"]
ApprovalKind = Literal["command", "edit", "outside", "mcp", "fetch"]
ALL_CHOICES: list[Decision] = ["once", "always", "always_project", "deny"]
ONCE_ONLY: list[Decision] = ["once", "deny"]

# Tools that write the file named by their path: their "outside the workspace" request is
# a write (always asks); the edit request with the diff follows and always asks too.
WRITE_TOOLS = frozenset({"filesystem-edit", "filesystem-create"})


class ApprovalRequest(BaseModel):
    tool: str
    kind: ApprovalKind
    title: str  # one line, e.g. "Run command" / "Edit src/app.py"
    detail: str = ""  # the command, a diff, the path…
    key: str  # the tool's idea of what "always" covers; commands are re-scoped here
    path: str | None = None  # edit/outside: the target (tools should set it; else derived)
    cwd: str | None = None  # command: the folder it runs in (default: the workspace)
    # Filled in by Permissions before the approver sees the request:
    scopes: list[str] = []  # what "always" remembers, e.g. ["command:pytest", "command:git status"]
    choices: list[Decision] = list(ALL_CHOICES)
    reason: str = ""  # why this always asks (a protected target), e.g. "it uses a subshell"


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]


# -- commands ---------------------------------------------------------------------------

MAX_ANALYSED_COMMAND_BYTES = shell_parse.MAX_COMMAND_BYTES
READ_ONLY_RULE = "read-only"  # what covers a part proven to only read
# No real command comes near these; beyond them the check itself would block the event loop.
MAX_CHECKED_PARTS = 200
MAX_CHECKED_PATHS = 1000
# Bash builtins among the read-only programs: no PATH lookup can swap them for a file.
_BUILTINS = {"echo", "pwd", "cd", "true", "set"}


class CommandPlan(BaseModel):
    """A shell command as its simple commands (words only, redirections dropped)."""

    parts: list[list[str]]
    unsafe: str = ""  # why rules must not approve it; "" when they may
    read_only: list[bool] = []  # per part: proven to only read inside the workspace


def analyse_command(command: str, *, workspace: Path | None = None, cwd: Path | str | None = None) -> CommandPlan:
    """Parse without running anything (`shell_parse`), then check every word that may be a
    path against `cwd` (default: the workspace). Conservative by design: whatever the
    parse cannot account for, or a path that is protected or outside the workspace, makes
    the command unsafe for rules, so it asks. Without a workspace only names are checked
    and nothing counts as read-only."""
    parsed = shell_parse.parse_command(command)
    if parsed.unsafe:
        return CommandPlan(parts=[], unsafe=parsed.unsafe)
    parts = [list(c.words) for c in parsed.commands]
    if len(parts) > MAX_CHECKED_PARTS:
        return CommandPlan(parts=[], unsafe=f"it has too many commands to check ({len(parts)})")
    checked = 0
    ws = os.path.realpath(workspace) if workspace is not None else None
    cwds = {os.path.realpath(os.path.join(ws, cwd or ws))} if ws is not None else set()
    read_only: list[bool] = []
    programs: dict[str, bool] = {}
    for cmd in parsed.commands:
        why, paths = read_only_programs.read_only(cmd.words) if ws is not None else ("no workspace", [])
        if not why and cmd.words[0] not in programs:
            programs[cmd.words[0]] = _program_outside(cmd.words[0], ws)
        if not why and not programs[cmd.words[0]]:
            why = f"{cmd.words[0]} would run from inside the workspace"
        if not why and cmd.words[0] == "git":
            why = _git_config_problem(cwds)
        if why:
            paths = read_only_programs.option_paths(cmd.words)
        paths += [r.target for r in cmd.redirects if r.op == "<"]
        for path in dict.fromkeys(paths):
            checked += 1
            if checked > MAX_CHECKED_PATHS:  # each costs a few system calls, on the event loop
                return CommandPlan(parts=parts, unsafe="it names too many paths to check")
            reason = _path_reason(path, ws, cwds)
            if reason:
                return CommandPlan(parts=parts, unsafe=f"it names {path} ({reason})")
        read_only.append(not why)
        if cmd.words[0] == "cd":  # later parts may run there (or here, if cd fails)
            if os.environ.get("CDPATH") and not cmd.words[1].startswith(("/", "./", "../")):
                return CommandPlan(parts=parts, unsafe="cd may follow CDPATH to a folder cairn cannot tell")
            joined = [os.path.join(c, cmd.words[1]) for c in cwds]
            cwds |= {os.path.normpath(j) for j in joined} | {os.path.realpath(j) for j in joined}
    return CommandPlan(parts=parts, read_only=read_only)


def _path_reason(path: str, ws: str | None, cwds: set[str]) -> str:
    """Why a word that may name a file makes the command ask: protected, or outside."""
    if path in ("", "-", "/dev/null"):
        return ""
    if ws is None:
        return protected_reason(path, None)
    if len(path.encode("utf-8", "surrogatepass")) > 4096:
        return "too long to check"
    for cwd in sorted(cwds):
        joined = os.path.join(cwd, path)
        try:
            seen = (os.path.normpath(joined), os.path.realpath(joined))  # as written; symlinks followed
        except (OSError, ValueError):
            return "it cannot be resolved"
        for target in seen:
            reason = protected_reason(target, Path(ws))
            if reason:
                return reason
    return ""


# A repository's own .git/config can make "read-only" git run programs: `core.fsmonitor` runs
# on `git status`, diff drivers and textconv on `git diff`/`log -p`, filters on both. A clone
# never carries one, a repository unpacked from an archive can.
_GIT_CONFIG_RISKS = ("fsmonitor", "textconv", "external", "[filter", "[include", "includeif", "pager",
                     "hookspath", "command", "program", "process", "driver", "editor", "askpass", "helper")


def _git_config_problem(cwds: set[str]) -> str:
    """Why git may not count as read-only in these folders: its repository config runs programs."""
    for cwd in cwds:
        folder = cwd
        while True:
            dot_git = os.path.join(folder, ".git")
            if os.path.isdir(dot_git):
                try:
                    with open(os.path.join(dot_git, "config"), "rb") as fh:
                        text = fh.read(1024 * 1024).decode("utf-8", "replace").casefold()
                except FileNotFoundError:
                    text = ""
                except OSError:
                    return "the repository's git config cannot be read"
                risk = next((r for r in _GIT_CONFIG_RISKS if r in text), "")
                if risk:
                    return f"the repository's git config sets {risk.strip('[')}, which can run programs"
                break
            if os.path.lexists(dot_git):
                return "the repository's git folder is elsewhere (a .git file)"
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return ""


def _program_outside(name: str, ws: str | None) -> bool:
    """A read-only program must be what it claims: a builtin, or found on an all-absolute
    PATH outside the workspace (a repository's own `ls` must not count)."""
    if name in _BUILTINS:
        return True
    search = os.environ.get("PATH", "")
    if any(not entry or not os.path.isabs(entry) for entry in search.split(os.pathsep)):
        return False
    found = shutil.which(name, path=search)
    if found is None or ws is None:  # not found: bash runs nothing
        return True
    real = os.path.realpath(found)
    return not (real == ws or real.startswith(ws.rstrip(os.sep) + os.sep))


def command_scope(words: list[str]) -> str:
    """What "always" covers for one simple command: its program, plus a subcommand
    (`git status`, `npm test`) when the second word looks like one (not an option or path)."""
    second = words[1] if len(words) > 1 else ""
    if second and second[0].isalpha() and all(c.isalnum() or c in "-_:" for c in second):
        return f"{words[0]} {second}"
    return words[0]


def prefix_matches(words: list[str], prefix: str) -> bool:
    """`pytest -x tests` starts with `pytest`; `git statusx` does not start with `git status`."""
    want = prefix.split()
    return bool(want) and words[: len(want)] == want


# -- web-fetch ----------------------------------------------------------------------------

FETCH_PREFIX = "fetch:"


def fetch_key(host: str) -> str:
    """What "always" remembers for a fetch: the host, lower-case, without a trailing dot."""
    return FETCH_PREFIX + host.lower().rstrip(".")


def fetch_covered(key: str, keys: set[str]) -> str | None:
    """The rule among `keys` covering the fetch `key`: the same host, or `fetch:*.domain`
    for any host under that domain (not the domain itself: `fetch:example.com` says that)."""
    if key in keys:
        return key
    host = key[len(FETCH_PREFIX):]
    labels = host.split(".")
    for i in range(1, len(labels)):
        wildcard = FETCH_PREFIX + "*." + ".".join(labels[i:])
        if wildcard in keys:
            return wildcard
    return None


# -- protected targets ------------------------------------------------------------------


def protected_reason(path: str, workspace: Path | None) -> str:
    """Why writing `path` must always ask; "" when an "always" rule may cover it.

    Relative paths are taken against the workspace; without a workspace only the
    name-based rules apply. Names compare case-insensitively (`.GIT` is `.git` on macOS)."""
    pure = PurePath(path)
    if workspace is not None:
        ws = Path(workspace).expanduser().resolve()
        target = Path(os.path.normpath(ws / os.path.expanduser(path)))
        if target != ws and ws not in target.parents:
            return "it is outside the workspace"
        pure = PurePath(target.relative_to(ws))
    parts = [part.casefold() for part in pure.parts]
    if ".git" in parts:
        return "files under .git/ control the repository"
    if parts and parts[-1].startswith(".env"):
        return ".env files usually hold secrets"
    if parts[-2:] == [".cairn", "config.toml"]:
        return "the project's cairn config holds these permissions"
    return ""


def mcp_server_rule(request: ApprovalRequest) -> list[str]:
    """An MCP tool (`mcp__<server>__<tool>`) is also allowed by `mcp__<server>__*`: every
    tool of a server the user trusts whole."""
    if request.kind != "mcp" or not request.key.startswith("mcp__"):
        return []
    server = request.key[len("mcp__"):].split("__", 1)[0]
    return [f"mcp__{server}__*"]


def describe_scopes(keys: list[str]) -> str:
    """The words the modal uses for what "always" would cover."""
    commands = [k.split(":", 1)[1] for k in keys if k.startswith("command:")]
    others = [k for k in keys if not k.startswith("command:")]
    words = []
    if commands:
        words.append(", ".join(f"`{c}`" for c in commands) + " commands")
    for key in others:
        words.append("file edits in the workspace" if key == "edit" else
                     key.split(":", 1)[1] if key.startswith("outside:") else
                     f"fetching from {key.split(':', 1)[1]}" if key.startswith(FETCH_PREFIX) else key)
    return "; ".join(words)


# -- the current tool call (set by the registry) ------------------------------------------


class CallRecord:
    """What the registry knows about the running tool call, and the checks it made."""

    def __init__(self, tool: str, path: str | None = None) -> None:
        self.tool = tool
        self.path = path
        self.checks: list[dict[str, Any]] = []


current_call: contextvars.ContextVar[CallRecord | None] = contextvars.ContextVar("cairn_tool_call", default=None)


# -- the decision -----------------------------------------------------------------------


class Permissions:
    def __init__(
        self,
        approver: Approver | None = None,
        *,
        yolo: bool = False,
        allow_commands: list[str] | None = None,
        allow: list[str] | None = None,
        workspace: Path | None = None,
    ) -> None:
        self.approver = approver
        self.yolo = yolo
        self.always: set[str] = set()  # "always this session" keys
        self.workspace = Path(workspace) if workspace is not None else None
        self.project_commands: list[str] = list(allow_commands or [])  # prefixes, from config
        self.project_keys: set[str] = set(allow or [])
        self.project_loaded = allow_commands is not None or allow is not None

    @classmethod
    def from_settings(cls, settings: Any, approver: Approver | None = None) -> "Permissions":
        """What the loop should build: `settings.permissions` rules, the workspace, yolo."""
        perms = settings.permissions
        return cls(approver, yolo=settings.yolo, allow_commands=perms.allow_commands, allow=perms.allow,
                   workspace=settings.workspace)

    def bind(self, workspace: Path) -> None:
        """Called by the registry before each tool call: learn the workspace, and read the
        project's rules once if nobody passed them in."""
        if self.workspace is None:
            self.workspace = Path(workspace)
        if not self.project_loaded:
            self.project_loaded = True
            from agent.config import load_permission_settings

            loaded = load_permission_settings(self.workspace)
            self.project_commands = list(loaded.allow_commands)
            self.project_keys = set(loaded.allow)

    # -- preparing a request --------------------------------------------------------
    def _target(self, request: ApprovalRequest) -> str | None:
        if request.path:
            return request.path
        call = current_call.get()
        if call is not None and call.path:
            return call.path
        if request.kind == "outside" and request.key.startswith("outside:"):
            return request.key.split(":", 1)[1]
        if request.kind == "edit" and " " in request.title:  # "Edit src/app.py"
            return request.title.split(" ", 1)[1]
        return None

    def prepare(self, request: ApprovalRequest) -> tuple[ApprovalRequest, CommandPlan | None]:
        """The request as the approver sees it: scopes, choices, and why it always asks;
        for a command, also its plan (what `rule_for` decides on)."""
        plan: CommandPlan | None = None
        update: dict[str, Any] = {}
        if request.kind == "command":
            plan = analyse_command(request.detail, workspace=self.workspace, cwd=request.cwd)
            scopes = list(dict.fromkeys(f"command:{command_scope(p)}" for p in plan.parts))
            update["scopes"] = scopes
            update["reason"] = plan.unsafe
        else:
            target = self._target(request)
            update["path"] = target
            if request.kind == "outside" and request.tool in WRITE_TOOLS:
                update["reason"] = "writing outside the workspace"
            elif request.kind == "edit" and target:
                update["reason"] = protected_reason(target, self.workspace)
            else:
                update["reason"] = ""
            update["scopes"] = [request.key]
        update["choices"] = ONCE_ONLY if update["reason"] else list(ALL_CHOICES)
        return request.model_copy(update=update), plan

    def rule_for(self, request: ApprovalRequest, plan: CommandPlan | None) -> str | None:
        """What covers the whole prepared request, or None (ask): remembered decisions and
        the allowlist, and for commands `read-only` for each part proven to only read."""
        if request.reason:
            return None
        if request.kind == "fetch":
            for source, keys in (("session", self.always), ("project", self.project_keys)):
                rule = fetch_covered(request.scopes[0], keys)
                if rule is not None:
                    return f"{source}:{rule}"
            return None
        if request.kind != "command":
            for key in [request.scopes[0], *mcp_server_rule(request)]:
                if key in self.always:
                    return f"session:{key}"
                if key in self.project_keys:
                    return f"project:{key}"
            return None
        if plan is None or not plan.parts:
            return None
        used: list[str] = []
        for words, read_only in zip(plan.parts, plan.read_only or [False] * len(plan.parts)):
            rule = READ_ONLY_RULE if read_only else self._command_rule(words)
            if rule is None:
                return None
            used.append(rule)
        return ", ".join(dict.fromkeys(used))

    def _command_rule(self, words: list[str]) -> str | None:
        for source, keys in (("session", self.always), ("project", self.project_keys)):
            for key in sorted(keys):
                if key.startswith("command:") and prefix_matches(words, key.split(":", 1)[1]):
                    return f"{source}:{key}"
        for prefix in self.project_commands:
            if prefix_matches(words, prefix):
                return f"allow_commands:{prefix}"
        return None

    # -- the check ------------------------------------------------------------------
    async def check(self, request: ApprovalRequest) -> bool:
        request, plan = self.prepare(request)
        record: dict[str, Any] = {"tool": request.tool, "kind": request.kind, "title": request.title}
        if request.kind == "command":
            record["command"] = request.detail
        elif request.kind == "fetch":
            record["url"] = request.detail
        elif request.path:
            record["path"] = request.path
        record["keys"] = request.scopes
        if request.reason:
            record["protected"] = request.reason
        allowed = await self._decide(request, plan, record)
        record["allowed"] = allowed
        call = current_call.get()
        if call is not None:
            call.checks.append(record)
        return allowed

    async def _decide(self, request: ApprovalRequest, plan: CommandPlan | None, record: dict[str, Any]) -> bool:
        if self.yolo:
            record["decision"] = "yolo"
            return True
        rule = self.rule_for(request, plan)
        if rule is not None:
            record["decision"] = "read_only" if rule == READ_ONLY_RULE else "rule"
            record["rule"] = rule
            return True
        if self.approver is None:
            record["decision"] = "refused"  # nobody to ask (`cairn -p` without --yolo)
            return False
        answer = await self.approver(request)
        if answer not in ALL_CHOICES:
            answer = "deny"
        if answer not in request.choices:  # "always" offered nowhere for a protected target
            answer = "once" if answer != "deny" else "deny"
        record["decision"] = answer
        if answer == "always":
            self.always.update(request.scopes)
        elif answer == "always_project":
            self.always.update(request.scopes)  # this session at least, even if saving fails
            self._remember_project(request.scopes, record)
        return answer != "deny"

    def _remember_project(self, keys: list[str], record: dict[str, Any]) -> None:
        """Add the keys to `[permissions]` in the project's .cairn/config.toml."""
        from agent.config_write import add_project_permissions

        try:
            if self.workspace is None:
                raise OSError("the workspace is not known")
            add_project_permissions(self.workspace, keys)
        except Exception as exc:  # the answer still holds for this session
            record["note"] = f"not saved to .cairn/config.toml: {exc}"
            return
        from agent.config import untrusted_project_keys

        if untrusted_project_keys(self.workspace):  # folder trust: see agent/trust.py
            record["note"] = ("saved to .cairn/config.toml, but this folder's config is not trusted: "
                              "later sessions apply it only after `cairn trust`")
        for key in keys:
            if key.startswith("command:"):
                self.project_commands.append(key.split(":", 1)[1])
            else:
                self.project_keys.add(key)
