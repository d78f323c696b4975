"""Approval for commands, file changes and paths outside the workspace.

Read-only tools never ask. A tool with a side effect builds an `ApprovalRequest` and awaits
`Permissions.check`, which decides in this order:

1. `--yolo`: allowed, nothing asked (like Claude Code's bypass mode; nothing is exempt,
   because `cairn -p --yolo` has nobody to ask).
2. Protected targets always ask: writes to `.env*`, anything under `.git/`, the project's
   `.cairn/config.toml` (it holds these very rules) and files outside the workspace; a
   command that cannot be analysed safely (`$(…)`, backticks, subshells, redirection into
   a file, a here-document, unbalanced quotes) or that names such a path. Their only
   choices are "once" and "deny": no remembered decision and no allowlist covers them.
3. Remembered decisions: "always this session" (in memory), "always for this project"
   (`[permissions]` in `.cairn/config.toml`, see `agent.config.PermissionSettings`) and the
   command allowlist `permissions.allow_commands`. A compound command (`;`, `&&`, `||`,
   `|`, `&`, newlines) is covered only if every part is.
4. Otherwise the approver (the UI's modal) answers; without one (`cairn -p`), refused.

Every check is recorded; the registry stores the records with the tool's result
(`meta["permission"]`), so the session shows what was decided, how, and for what command.
"""

from __future__ import annotations

import contextvars
import os
import shlex
from pathlib import Path, PurePath
from typing import Any, Awaitable, Callable, Literal

from pydantic import BaseModel

Decision = Literal["once", "always", "always_project", "deny"]
ApprovalKind = Literal["command", "edit", "outside"]
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
    # Filled in by Permissions before the approver sees the request:
    scopes: list[str] = []  # what "always" remembers, e.g. ["command:pytest", "command:git status"]
    choices: list[Decision] = list(ALL_CHOICES)
    reason: str = ""  # why this always asks (a protected target), e.g. "it uses a subshell"


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]


# -- commands ---------------------------------------------------------------------------

_SEPARATORS = {"\n", "\r"}
_RAW_UNSAFE = (("`", "backticks"), ("$(", "$(…) substitution"), ("<(", "process substitution"),
               (">(", "process substitution"))


# Longer commands always ask: shlex is slow on them (a multi-megabyte command would block
# the event loop) and no real command needs more (the kernel's limit for one argument,
# `sh -c <command>`, is 128 KiB).
MAX_ANALYSED_COMMAND_BYTES = 128 * 1024


class CommandPlan(BaseModel):
    """A shell command split into its simple commands (words only, redirections dropped)."""

    parts: list[list[str]]
    unsafe: str = ""  # why rules must not approve it; "" when they may


def analyse_command(command: str) -> CommandPlan:
    """Split on `;`, `&&`, `||`, `|`, `&` and newlines without running anything.

    Conservative by design: whatever the shell could read differently (substitutions,
    subshells, quoting we cannot parse) makes the command unsafe for rules, so it asks.
    """
    if len(command) > MAX_ANALYSED_COMMAND_BYTES or \
            len(command.encode("utf-8", "surrogatepass")) > MAX_ANALYSED_COMMAND_BYTES:
        return CommandPlan(parts=[], unsafe="the command is too long to check")
    for marker, what in _RAW_UNSAFE:
        if marker in command:
            return CommandPlan(parts=[], unsafe=f"it uses {what}")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace = " \t"  # newlines separate commands: keep them as tokens
    lexer.commenters = ""  # `a#b` is one word to the shell; never let `#` hide the rest
    try:
        tokens = list(lexer)
    except ValueError as exc:
        return CommandPlan(parts=[], unsafe=f"it cannot be parsed ({exc})")
    parts: list[list[str]] = [[]]
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        punct = tok and all(c in "();<>|&" for c in tok)
        if tok in _SEPARATORS or (punct and set(tok) <= set(";&|")):
            parts.append([])
        elif punct and ("(" in tok or ")" in tok):
            return CommandPlan(parts=[], unsafe="it uses a subshell")
        elif punct:  # a redirection: the next token is its target
            target = tokens[i + 1] if i + 1 < len(tokens) else ""
            if "<<" in tok:
                return CommandPlan(parts=[], unsafe="it uses a here-document")
            harmless = target == "/dev/null" or (tok.endswith("&") and (target.isdigit() or target == "-"))
            if ">" in tok and not harmless:
                return CommandPlan(parts=[], unsafe=f"it redirects output into {target or 'a file'}")
            if protected_reason(target, None):
                return CommandPlan(parts=[], unsafe=f"it reads {target} ({protected_reason(target, None)})")
            if parts[-1] and parts[-1][-1].isdigit():  # the fd number of `2>&1`
                parts[-1].pop()
            i += 1
        else:
            parts[-1].append(tok)
        i += 1
    parts = [p for p in parts if p]
    if not parts:
        return CommandPlan(parts=[], unsafe="it is empty")
    for words in parts:
        for word in words:
            reason = protected_reason(word, None)
            if reason:
                return CommandPlan(parts=parts, unsafe=f"it names {word} ({reason})")
    return CommandPlan(parts=parts)


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


# -- protected targets ------------------------------------------------------------------


def protected_reason(path: str, workspace: Path | None) -> str:
    """Why writing `path` must always ask; "" when an "always" rule may cover it.

    Relative paths are taken against the workspace; without a workspace only the
    name-based rules apply."""
    pure = PurePath(path)
    if workspace is not None:
        ws = Path(workspace).expanduser().resolve()
        target = Path(os.path.normpath(ws / os.path.expanduser(path)))
        if target != ws and ws not in target.parents:
            return "it is outside the workspace"
        pure = PurePath(target.relative_to(ws))
    if ".git" in pure.parts:
        return "files under .git/ control the repository"
    if pure.name.startswith(".env"):
        return ".env files usually hold secrets"
    if pure.parts[-2:] == (".cairn", "config.toml"):
        return "the project's cairn config holds these permissions"
    return ""


def describe_scopes(keys: list[str]) -> str:
    """The words the modal uses for what "always" would cover."""
    commands = [k.split(":", 1)[1] for k in keys if k.startswith("command:")]
    others = [k for k in keys if not k.startswith("command:")]
    words = []
    if commands:
        words.append(", ".join(f"`{c}`" for c in commands) + " commands")
    for key in others:
        words.append("file edits in the workspace" if key == "edit" else
                     key.split(":", 1)[1] if key.startswith("outside:") else key)
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

    def prepare(self, request: ApprovalRequest) -> tuple[ApprovalRequest, list[list[str]]]:
        """The request as the approver sees it: scopes, choices, and why it always asks."""
        parts: list[list[str]] = []
        update: dict[str, Any] = {}
        if request.kind == "command":
            plan = analyse_command(request.detail)
            parts = plan.parts
            scopes = list(dict.fromkeys(f"command:{command_scope(p)}" for p in parts))
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
        return request.model_copy(update=update), parts

    def _rule_for(self, request: ApprovalRequest, parts: list[list[str]]) -> str | None:
        """The remembered decision or allowlist entry that covers the whole request."""
        if request.reason:
            return None
        if request.kind != "command":
            key = request.scopes[0]
            if key in self.always:
                return f"session:{key}"
            return f"project:{key}" if key in self.project_keys else None
        if not parts:
            return None
        used: list[str] = []
        for words in parts:
            rule = self._command_rule(words)
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
        request, parts = self.prepare(request)
        record: dict[str, Any] = {"tool": request.tool, "kind": request.kind, "title": request.title}
        if request.kind == "command":
            record["command"] = request.detail
        elif request.path:
            record["path"] = request.path
        record["keys"] = request.scopes
        if request.reason:
            record["protected"] = request.reason
        allowed = await self._decide(request, parts, record)
        record["allowed"] = allowed
        call = current_call.get()
        if call is not None:
            call.checks.append(record)
        return allowed

    async def _decide(self, request: ApprovalRequest, parts: list[list[str]], record: dict[str, Any]) -> bool:
        if self.yolo:
            record["decision"] = "yolo"
            return True
        rule = self._rule_for(request, parts)
        if rule is not None:
            record["decision"], record["rule"] = "rule", rule
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
        from agent.config import add_project_permissions

        try:
            if self.workspace is None:
                raise OSError("the workspace is not known")
            add_project_permissions(self.workspace, keys)
        except Exception as exc:  # the answer still holds for this session
            record["note"] = f"not saved to .cairn/config.toml: {exc}"
            return
        for key in keys:
            if key.startswith("command:"):
                self.project_commands.append(key.split(":", 1)[1])
            else:
                self.project_keys.add(key)
