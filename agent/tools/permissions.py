"""Approval for commands, file changes and paths outside the workspace.

Read-only tools never ask. A tool with a side effect builds an `ApprovalRequest` and awaits
`Permissions.check`, which decides in this order:

1. Plan mode (`mode` "plan", agent/tools/modes.py): only what reads goes on, whatever the
   rules or `--yolo` say. A command runs only when step 5 proves every part read-only (its
   git checked as there), and then in the read-only sandbox; edits, writes outside the
   workspace, MCP tools and any other command are refused (`decision: "plan"`; the registry
   tells the model it is planning). Reading outside the workspace and web-fetch go on below.
2. `--yolo`: allowed, nothing asked (like Claude Code's bypass mode; nothing is exempt,
   because `cairn -p --yolo` has nobody to ask).
3. Protected targets always ask: writes to `.env*`, anything under `.git/`, the project's
   `.cairn/config.toml` (it holds these very rules), what git, a hook or an MCP server runs
   later (the sandbox's `edit_reason`) and files outside the workspace; a
   command that `agent.tools.shell_parse` cannot fully account for (line continuations,
   expansions, substitutions, globs, brace expansion, here-documents, redirection into a
   file, `eval`/`sh -c`/`env CMD`…, anything the parser does not know) or that names such a
   path — every word that may be a path is resolved against the command's folder, symlinks
   followed. Their only choices are "once" and "deny": no remembered decision and no
   allowlist covers them.
4. The accept-edits mode (`mode` "acceptEdits"): a file edit in the workspace that is not
   protected runs unasked (`decision: "accept_edits"`); commands go on below.
5. Remembered decisions: "always this session" (in memory), "always for this project"
   (`[permissions]` in `.cairn/config.toml`, see `agent.settings.schema.PermissionSettings`) and the
   command allowlist `permissions.allow_commands`, matched by whole words against each
   simple command of the parse; `fetch:<host>` for web-fetch (`fetch:*.example.com` covers
   the subdomains too); a read by a tool that only reads (`READ_TOOLS`) under `read_roots`
   (the user's skill folders, outside the workspace); and read-only commands (`ls`, `cat`, `git status`…, with
   options known to only read, see agent/tools/read_only.py) need no rule. A compound
   command (`;`, `&&`, `||`, `|`, `&`, newlines) is covered only if every part is.
   What runs this way runs in the sandbox (agent/tools/sandbox.py): read-only commands with
   the workspace read-only, rule-allowed ones with it writable (`[sandbox] rules = "off"`:
   unconfined). Without a sandbox on the machine no command runs unasked but for rules the
   user let run unconfined. A command whose git could reach outside the workspace (a
   symlinked `.git`, a git folder or work tree elsewhere: agent/tools/git_guard.py) asks.
6. Otherwise the approver (the UI's modal) answers; without one (`cairn -p`), refused.

Every check is recorded; the registry stores the records with the tool's result
(`meta["permission"]`), so the session shows what was decided, how, and for what command.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from agent.fs.repo_files import within
from agent.tools import git_guard
from agent.tools.command_plan import (  # noqa: F401 - re-exported: the decision's vocabulary
    MAX_ANALYSED_COMMAND_BYTES,
    READ_ONLY_RULE,
    CommandPlan,
    analyse_command,
    protected_reason,
)
from agent.tools.command_scope import command_scope, prefix_matches
from agent.tools.fetch_rules import FETCH_PREFIX, fetch_covered
from agent.tools.modes import Mode, accepts_edit, plan_reads
from agent.tools.sandbox import Sandbox, SandboxMode
from agent.tools.trusted_programs import trusted_program_files, workspace_program_files

Decision = Literal["once", "always", "always_project", "deny"]
ApprovalKind = Literal["command", "edit", "outside", "mcp", "fetch"]
ALL_CHOICES: list[Decision] = ["once", "always", "always_project", "deny"]
ONCE_ONLY: list[Decision] = ["once", "deny"]

# What an escalation's question says; the tool adds why (agent/tools/sandbox_hints.py).
ESCALATION_NOTE = "The model asks to run this outside the sandbox: with your access, files and network."
# A remembered command scope longer than this (inline code: `python -c '…'`) is cut in the label.
MAX_SCOPE_LABEL_CHARS = 40

# Tools that write the file named by their path: their "outside the workspace" request is
# a write (always asks); the edit request with the diff follows and always asks too.
WRITE_TOOLS = frozenset({"filesystem-edit", "filesystem-create"})
# Tools that only read the path they name: a path under one of `Permissions.read_roots` (a
# user's skill folder) is theirs to read without asking, though it is outside the workspace.
READ_TOOLS = frozenset({"filesystem-read", "filesystem-find", "filesystem-search"})


class ApprovalRequest(BaseModel):
    tool: str
    kind: ApprovalKind
    title: str  # one line, e.g. "Run command" / "Edit src/app.py"
    detail: str = ""  # the command, a diff, the path…
    key: str  # the tool's idea of what "always" covers; commands are re-scoped here
    path: str | None = None  # edit/outside: the target (tools should set it; else derived)
    cwd: str | None = None  # command: the folder it runs in (default: the workspace)
    escalate: bool = False  # command: to run outside the sandbox, so no rule covers it: the user is asked
    # Filled in by Permissions before the approver sees the request:
    scopes: list[str] = []  # what "always" remembers, e.g. ["command:pytest", "command:git status"]
    choices: list[Decision] = list(ALL_CHOICES)
    reason: str = ""  # why this always asks (a protected target), e.g. "it uses a subshell"
    note: str = ""  # what else the user should know, e.g. why "always" is not offered (no sandbox)


Approver = Callable[[ApprovalRequest], Awaitable[Decision]]


class CommandVerdict(BaseModel):
    """What `Permissions.check_command` decided, and where the command must run."""

    allowed: bool
    decision: str  # plan | yolo | read_only | rule | accept_edits | once | always | always_project | deny | refused
    sandbox: SandboxMode | None = None  # None: unconfined
    harden_git: bool = False  # its git runs with the repository's programs off (agent/tools/git_guard.py)
    git_ceiling: bool = False  # and stops looking for a repository at the workspace


def mcp_server_rule(request: ApprovalRequest) -> list[str]:
    """An MCP tool (`mcp__<server>__<tool>`) is also allowed by `mcp__<server>__*`: every
    tool of a server the user trusts whole."""
    if request.kind != "mcp" or not request.key.startswith("mcp__"):
        return []
    server = request.key[len("mcp__") :].split("__", 1)[0]
    return [f"mcp__{server}__*"]


def _cut(scope: str) -> str:
    return scope if len(scope) <= MAX_SCOPE_LABEL_CHARS else scope[: MAX_SCOPE_LABEL_CHARS - 1] + "…"


def describe_scopes(keys: list[str]) -> str:
    """The words the modal uses for what "always" would cover."""
    commands = [_cut(k.split(":", 1)[1]) for k in keys if k.startswith("command:")]
    others = [k for k in keys if not k.startswith("command:")]
    words = []
    if commands:
        words.append(", ".join(f"`{c}`" for c in commands) + " commands")
    for key in others:
        words.append(
            "file edits in the workspace"
            if key == "edit"
            else key.split(":", 1)[1]
            if key.startswith("outside:")
            else f"fetching from {key.split(':', 1)[1]}"
            if key.startswith(FETCH_PREFIX)
            else key
        )
    return "; ".join(words)


# -- the current tool call (set by the registry) ------------------------------------------


class CallRecord:
    """What the registry knows about the running tool call, and the checks it made."""

    def __init__(self, tool: str, path: str | None = None, call_id: str = "") -> None:
        self.tool = tool
        self.path = path
        self.call_id = call_id  # the model's id for the call (a subagent's session names it)
        self.checks: list[dict[str, Any]] = []
        # A PreToolUse hook's permission decision (agent/hooks/): "allow" runs it unasked,
        # "ask" asks even where a rule, the mode or --yolo would not; None: the hooks said nothing.
        self.hook_permission: str | None = None


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
        sandbox: Sandbox | None = None,
        sandbox_settings: Any = None,
        mode: Mode = "default",
    ) -> None:
        self.approver = approver
        self.yolo = yolo
        self.mode: Mode = mode  # the session's permission mode; front ends switch it (Runtime.set_mode)
        self.always: set[str] = set()  # "always this session" keys
        self.workspace = Path(workspace) if workspace is not None else None
        self.project_commands: list[str] = list(allow_commands or [])  # prefixes, from config
        self.project_keys: set[str] = set(allow or [])
        self.project_loaded = allow_commands is not None or allow is not None
        self.read_roots: list[str] = []  # resolved folders outside the workspace READ_TOOLS read unasked
        self.sandbox = sandbox  # made for the workspace on first use when not given
        # `[sandbox]` (agent.settings.schema.SandboxSettings): where rule-allowed and approved commands run.
        self.sandbox_rules = getattr(sandbox_settings, "rules", "workspace-write")
        self.sandbox_approved = getattr(sandbox_settings, "approved", "off")
        self.sandbox_hide: list[str] = list(getattr(sandbox_settings, "hide", []))
        self.sandbox_loaded = sandbox_settings is not None

    @classmethod
    def from_settings(cls, settings: Any, approver: Approver | None = None) -> Permissions:
        """What the loop should build: `settings.permissions` rules, the workspace, yolo, the mode,
        the sandbox."""
        perms = settings.permissions
        return cls(
            approver,
            yolo=settings.yolo,
            mode=settings.permission_mode,
            allow_commands=perms.allow_commands,
            allow=perms.allow,
            workspace=settings.workspace,
            sandbox=Sandbox.for_settings(settings, protect=trusted_program_files(settings)),
            sandbox_settings=settings.sandbox,
        )

    def bind(self, workspace: Path) -> None:
        """Called by the registry before each tool call: learn the workspace, and read the
        project's rules once if nobody passed them in."""
        if self.workspace is None:
            self.workspace = Path(workspace)
        if not self.project_loaded:
            self.project_loaded = True
            from agent.settings.config import load_settings

            loaded = load_settings(self.workspace)
            self.project_commands = list(loaded.permissions.allow_commands)
            self.project_keys = set(loaded.permissions.allow)
            if not self.sandbox_loaded:
                self.sandbox_loaded = True
                self.sandbox_rules, self.sandbox_approved = loaded.sandbox.rules, loaded.sandbox.approved
                self.sandbox_hide = list(loaded.sandbox.hide)
        if self.sandbox is None:
            programs = workspace_program_files(self.workspace)
            self.sandbox = Sandbox.for_folder(self.workspace, hide=self.sandbox_hide, protect=programs)

    @property
    def can_sandbox(self) -> bool:
        return self.sandbox is not None and bool(self.sandbox.available)

    def _sandbox_missing(self) -> bool:
        """Probed, and there is none, and rules need it: "always" would never apply."""
        return self.sandbox is not None and self.sandbox.available is False and self.sandbox_rules != "off"

    def _rules_apply(self) -> bool:
        """Whether a rule may run a command unasked: in the sandbox, or unconfined by the user's choice."""
        return self.can_sandbox or self.sandbox_rules == "off"

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
                guard = self.sandbox.protection.edit_reason if self.sandbox is not None else None
                update["reason"] = protected_reason(target, self.workspace) or (guard(target) if guard else "")
            else:
                update["reason"] = ""
            update["scopes"] = [request.key]
        update["choices"] = ONCE_ONLY if update["reason"] else list(ALL_CHOICES)
        if request.escalate:  # "always" would only remember what then runs in the sandbox again
            update["choices"] = ONCE_ONLY
            update["note"] = " ".join(filter(None, [ESCALATION_NOTE, request.note]))  # + why, from the tool
        elif request.kind == "command" and not update["reason"] and self._sandbox_missing():
            # A remembered "always" would not apply either: rules need the sandbox.
            assert self.sandbox is not None  # _sandbox_missing(): it was probed
            update["choices"] = ONCE_ONLY
            update["note"] = (
                f"No sandbox, so commands cannot run unasked: {self.sandbox.why_not}. "
                f'Set [sandbox] rules = "off" to let your rules run them unconfined.'
            )
        return request.model_copy(update=update), plan

    def rule_for(self, request: ApprovalRequest, plan: CommandPlan | None) -> str | None:
        """What covers the whole prepared request, or None (ask): remembered decisions and
        the allowlist, and for commands `read-only` for each part proven to only read."""
        if request.reason or request.escalate:
            return None
        if request.kind == "fetch":
            for source, keys in (("session", self.always), ("project", self.project_keys)):
                rule = fetch_covered(request.scopes[0], keys)
                if rule is not None:
                    return f"{source}:{rule}"
            return None
        if request.kind != "command":
            if request.kind == "outside" and request.tool in READ_TOOLS and request.path:
                root = next((r for r in self.read_roots if within(request.path, r)), None)
                if root is not None:
                    return f"read_root:{root}"
            for key in [request.scopes[0], *mcp_server_rule(request)]:
                if key in self.always:
                    return f"session:{key}"
                if key in self.project_keys:
                    return f"project:{key}"
            return None
        if plan is None or not plan.parts:
            return None
        used: list[str] = []
        rules_count = self._rules_apply()
        for words, read_only in zip(plan.parts, plan.read_only or [False] * len(plan.parts), strict=False):
            rule = READ_ONLY_RULE if read_only and self.can_sandbox else self._command_rule(words)
            if rule is None or (rule != READ_ONLY_RULE and not rules_count):
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
        return (await self.check_command(request)).allowed

    async def check_command(self, request: ApprovalRequest) -> CommandVerdict:
        """The decision, and for a command where it runs: the sandbox mode and git's hardening."""
        if request.kind == "command":
            await self._probe_sandbox()
        request, plan = self.prepare(request)
        record: dict[str, Any] = {"tool": request.tool, "kind": request.kind, "title": request.title}
        if request.kind == "command":
            record["command"] = request.detail
        elif request.kind == "fetch":
            record["url"] = request.detail
        elif request.path:
            record["path"] = request.path
        record["keys"] = request.scopes
        if request.kind == "command" and plan is not None and plan.runs_git and (not self.yolo or self.mode == "plan"):
            request = await self._check_repository(request, plan)
        if request.reason:
            record["protected"] = request.reason
        allowed = await self._decide(request, plan, record)
        record["allowed"] = allowed
        verdict = self._verdict(allowed, record["decision"], plan, escalate=request.escalate)
        if verdict.sandbox is not None:
            record["sandbox"] = verdict.sandbox
        elif request.kind == "command" and self.sandbox is not None and self.sandbox.why_not:
            record["no_sandbox"] = self.sandbox.why_not
        call = current_call.get()
        if call is not None:
            call.checks.append(record)
        return verdict

    async def _probe_sandbox(self) -> None:
        if self.sandbox is None and self.workspace is not None:
            self.bind(self.workspace)
        if self.sandbox is not None and self.sandbox.available is None:
            from agent.process.background import in_daemon_thread

            await in_daemon_thread(self.sandbox.probe)

    async def _check_repository(self, request: ApprovalRequest, plan: CommandPlan) -> ApprovalRequest:
        """A command that would run unasked and whose git may reach outside the workspace asks."""
        if request.reason or self.workspace is None or self.rule_for(request, plan) is None:
            return request
        from agent.process.background import in_daemon_thread
        from agent.process.secrets import command_environment

        found: list[str] = []

        def probe() -> None:
            found.append(
                git_guard.repository_problem(
                    plan.cwds or [str(self.workspace)], str(self.workspace), command_environment(dict(os.environ))
                )
            )

        await in_daemon_thread(probe)
        if not found or not found[0]:
            return request
        return request.model_copy(
            update={"reason": f"git may reach outside the workspace: {found[0]}", "choices": ONCE_ONLY}
        )

    def _verdict(self, allowed: bool, decision: str, plan: CommandPlan | None, *, escalate: bool) -> CommandVerdict:
        if not allowed or plan is None:
            return CommandVerdict(allowed=allowed, decision=decision)
        if decision == "read_only":
            sandbox: SandboxMode | None = "read-only"
        elif decision in ("rule", "hook"):  # unasked, as a rule's: the same sandbox
            sandbox = "workspace-write" if self.sandbox_rules != "off" else None
        elif decision in ("once", "always", "always_project"):
            sandbox = "workspace-write" if self.sandbox_approved != "off" and not escalate else None
        else:  # yolo
            sandbox = None
        if sandbox is not None and not self.can_sandbox:
            sandbox = None  # asked and approved (or a rule let run unconfined) where there is no sandbox
        unasked = decision in ("read_only", "rule", "hook")
        return CommandVerdict(
            allowed=True,
            decision=decision,
            sandbox=sandbox,
            harden_git=plan.git_read_only,
            git_ceiling=unasked and plan.git_read_only,
        )

    async def _decide(self, request: ApprovalRequest, plan: CommandPlan | None, record: dict[str, Any]) -> bool:
        if self.mode == "plan" and not plan_reads(request.kind, writes=request.tool in WRITE_TOOLS):
            read_only = request.kind == "command" and self.rule_for(request, plan) == READ_ONLY_RULE
            record["decision"] = "read_only" if read_only else "plan"
            if read_only:
                record["rule"] = READ_ONLY_RULE
            return read_only
        call = current_call.get()
        hook = call.hook_permission if call is not None else None
        if hook == "allow" and not request.reason:  # a protected target still asks
            record["decision"] = "hook"
            return True
        if self.yolo and hook != "ask":
            record["decision"] = "yolo"
            return True
        if accepts_edit(self.mode, request, workspace_known=self.workspace is not None) and hook != "ask":
            record["decision"] = "accept_edits"
            return True
        rule = self.rule_for(request, plan) if hook != "ask" else None
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
        from agent.settings.config_write import add_project_permissions

        try:
            if self.workspace is None:
                raise OSError("the workspace is not known")
            add_project_permissions(self.workspace, keys)
        except Exception as exc:  # the answer still holds for this session
            record["note"] = f"not saved to .cairn/config.toml: {exc}"
            return
        from agent.settings.config import untrusted_project_keys

        if untrusted_project_keys(self.workspace):  # folder trust: see agent/settings/trust.py
            record["note"] = (
                "saved to .cairn/config.toml, but this folder's config is not trusted: "
                "later sessions apply it only after `cairn trust`"
            )
        for key in keys:
            if key.startswith("command:"):
                self.project_commands.append(key.split(":", 1)[1])
            else:
                self.project_keys.add(key)
