"""The tool registry: definitions for the model, and one `execute` that never raises.

Whatever the model sends (an unknown tool, broken JSON, wrong types) and whatever a tool
does (ToolError or a bug), the model gets back an `Error: …` result it can act on; only
cancellation (the user's interrupt) propagates.

Adding a tool = one new module under agent/tools/ + one line in the list in
`default_registry()`. Tools that come and go while cairn runs (an MCP server's) are a named
group their owner replaces whole (`set_group`).
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agent.session.models import ToolCall
from agent.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent.tools.modes import PLAN_REFUSAL
from agent.tools.permissions import CallRecord, current_call

if TYPE_CHECKING:
    from agent.settings.schema import WebSettings

MAX_REPORTED_FIELD_ERRORS = 5
MAX_ERROR_TEXT_CHARS = 500


def _short(text: str, limit: int = MAX_ERROR_TEXT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict", "none"}


def _readable_loc(loc: tuple) -> str:
    """`filePath item 1.path`: pydantic's union tags (`str`, `list[...]`, `FileSpec`) dropped."""
    parts: list[str] = []
    for p in loc:
        if isinstance(p, int):
            parts.append(f" item {p}")
        elif "[" in p or p in _TYPE_TAGS or p[:1].isupper():
            continue
        else:
            parts.append(("." if parts else "") + p)
    return "".join(parts).strip() or "(arguments)"


def _field_errors(exc: ValidationError) -> str:
    """`field: problem` per argument; a union's several complaints folded into one line.

    Never includes the offending value (it may be megabytes long)."""
    by_loc: dict[str, list[str]] = {}
    for err in exc.errors(include_url=False, include_input=False):
        msg = "missing required field" if err.get("type") == "missing" else err.get("msg", "invalid")
        problems = by_loc.setdefault(_readable_loc(err.get("loc", ())), [])
        if msg not in problems:
            problems.append(msg)
    parts = [f"{loc}: {' or '.join(msgs[:3])}" for loc, msgs in by_loc.items()]
    extra = len(parts) - MAX_REPORTED_FIELD_ERRORS
    text = "; ".join(parts[:MAX_REPORTED_FIELD_ERRORS])
    return text + (f"; and {extra} more" if extra > 0 else "")


class ToolRegistry:
    def __init__(self, tools: list[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        self._definitions: list[dict[str, Any]] | None = None
        self._groups: dict[str, list[str]] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"duplicate tool name {tool.name!r}")
            self._tools[tool.name] = tool

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def definitions(self) -> list[dict[str, Any]]:
        """Built once: schema generation is not free and every model step sends them."""
        if self._definitions is None:
            self._definitions = [tool.definition() for tool in self._tools.values()]
        return self._definitions

    def set_group(self, group: str, tools: list[Tool]) -> None:
        """Replace the tools of `group` (e.g. "mcp"); a name another tool has is skipped."""
        for name in self._groups.pop(group, []):
            self._tools.pop(name, None)
        added: list[str] = []
        for tool in tools:
            if tool.name not in self._tools:
                self._tools[tool.name] = tool
                added.append(tool.name)
        self._groups[group] = added
        self._definitions = None

    def in_group(self, group: str) -> bool:
        return bool(self._groups.get(group))

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def tools(self) -> list[Tool]:
        """Every tool, in the order the model sees them (a subagent's registry picks from these)."""
        return list(self._tools.values())

    async def execute(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolResult.error(
                f"unknown tool '{_short(call.name, 100)}'. Available tools: {', '.join(self._tools)}"
            )
        raw = call.arguments if call.arguments and call.arguments.strip() else "{}"
        try:
            data = json.loads(raw)
        except ValueError as exc:  # JSONDecodeError, or recursion/number limits
            reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
            return ToolResult.error(
                f"invalid JSON in tool arguments: {_short(reason)}. Send the arguments as a JSON object."
            )
        except RecursionError:
            return ToolResult.error(
                "invalid JSON in tool arguments: nested too deeply. Send the arguments as a JSON object."
            )
        if not isinstance(data, dict):
            return ToolResult.error(
                f"tool arguments must be a JSON object, got {type(data).__name__}. Send the arguments as a JSON object."
            )
        try:
            args = tool.Args.model_validate(data)
        except ValidationError as exc:
            return ToolResult.error(f"invalid arguments for {tool.name}: {_field_errors(exc)}")
        # PreToolUse hooks (agent/hooks/): they may refuse the call, change its arguments, or
        # decide its permission (allow: no question; ask: a question even where a rule allows).
        gate = await ctx.hooks.pre_tool(tool.name, data, call.id) if ctx.hooks is not None else None
        if gate is not None and gate.refusal is not None:
            return ToolResult.error(gate.refusal, hook="PreToolUse")
        if gate is not None and gate.arguments is not None:
            data = gate.arguments
            try:
                args = tool.Args.model_validate(data)
            except ValidationError as exc:
                return ToolResult.error(
                    f"invalid arguments for {tool.name} once a PreToolUse hook changed them: {_field_errors(exc)}"
                )
        ctx.permissions.bind(ctx.workspace)
        call_record = CallRecord(tool.name, _target_path(args, ctx), call_id=call.id)
        call_record.hook_permission = gate.permission if gate is not None else None
        token = current_call.set(call_record)
        try:
            result = await tool.run(args, ctx)
        except asyncio.CancelledError:
            raise
        except ToolError as exc:
            result = ToolResult.error(str(exc) or "the tool failed")
        except Exception as exc:  # a bug in a tool must not take the app down
            result = ToolResult.error(f"{tool.name} failed: {type(exc).__name__}: {_short(str(exc))}")
        finally:
            current_call.reset(token)
        result = _with_permission(result, call_record.checks)
        if ctx.hooks is not None:  # PostToolUse: what its hooks say goes to the model with the result
            said = await ctx.hooks.post_tool(tool.name, data, result.content, result.is_error, call.id)
            if said:
                result = result.model_copy(update={"content": f"{result.content}\n\n{said}"})
        return result


def _target_path(args: object, ctx: ToolContext) -> str | None:
    """The real path a file tool works on, so permissions can tell a protected target."""
    raw = getattr(args, "filePath", None)
    if not isinstance(raw, str):
        return None
    from agent.tools.workspace import resolve_path

    try:
        return str(resolve_path(raw, ctx.workspace).path)
    except ToolError:
        return None


def _with_permission(result: ToolResult, checks: list[dict]) -> ToolResult:
    """Store what was decided with the result: `meta["permission"]` is the deciding (last)
    check; `meta["permission_checks"]` lists all of them when there were several."""
    if not checks:
        return result
    meta = {**result.meta, "permission": checks[-1]}
    if len(checks) > 1:
        meta["permission_checks"] = checks
    last = checks[-1]
    content = result.content
    if last.get("decision") == "refused" and result.is_error:
        why = f" ({last['protected']})" if last.get("protected") else ""
        if last.get("no_sandbox") and not why:
            why = f" (no sandbox to run it unasked in: {last['no_sandbox']})"
        content = (
            f"Error: not allowed: {last['title']}{why} needs the user's approval, and nobody can approve "
            f"in this mode. Do not retry it; say what you would have done. (The user can pass --yolo, "
            f"or allow it in .cairn/config.toml [permissions].)"
        )
    elif last.get("decision") == "plan" and result.is_error:  # not a user's "no": the model is planning
        command = f": {_short(last['command'], 200)}" if last.get("command") else ""
        content = PLAN_REFUSAL.format(title=last["title"] + command)
    return result.model_copy(update={"meta": meta, "content": content})


def default_registry(web: WebSettings | None = None, *, every: bool = False) -> ToolRegistry:
    """cairn's tools; `web-search` only when `web` (the session's `[web]`) names a backend, or with
    `every` (each tool a configuration can offer: the names `--allowed-tools` rules may use)."""
    from agent.tools.context_grep import ContextGrep
    from agent.tools.context_list import ContextList
    from agent.tools.context_read import ContextRead
    from agent.tools.context_tail import ContextTail
    from agent.tools.exit_plan_mode import ExitPlanMode
    from agent.tools.fs_create import FsCreate
    from agent.tools.fs_edit import FsEdit
    from agent.tools.fs_find import FsFind
    from agent.tools.fs_read import FsRead
    from agent.tools.fs_search import FsSearch
    from agent.tools.terminal import Terminal
    from agent.tools.todo_write import TodoWrite
    from agent.tools.web_fetch import WebFetch
    from agent.tools.web_search import WebSearch

    searches = every or (web is not None and bool(web.search_url or web.native_search))
    tasks = task_tools() if every else []  # a session offers them from its first background task on
    return ToolRegistry(
        [
            FsRead(),
            FsEdit(),
            FsCreate(),
            Terminal(),
            *tasks,
            ContextList(),
            ContextRead(),
            ContextTail(),
            ContextGrep(),
            FsSearch(),
            FsFind(),
            WebFetch(),
            *([WebSearch()] if searches else []),
            TodoWrite(),
            ExitPlanMode(),
        ]
    )


TASK_GROUP = "tasks"


def task_tools() -> list[Tool]:
    """`task-output` and `task-stop`: offered once a background task exists (250 tokens on
    every request of the many sessions that never start one, and past a 4k-token window)."""
    from agent.tools.task_output import TaskOutput
    from agent.tools.task_stop import TaskStop

    return [TaskOutput(), TaskStop()]


def offer_task_tools(registry: ToolRegistry) -> None:
    """Add them once: the tool list stays as it was sent (its cached prefix) after that."""
    if not registry.in_group(TASK_GROUP):
        registry.set_group(TASK_GROUP, task_tools())
