"""Limits of an unattended run (`cairn -p`): --max-turns, --max-cost, --allowed-tools,
--disallowed-tools. Each ends the run with its own exit code and a final event saying why
(docs/headless.md).

The loop asks a `RunGuard` before every model request and before every tool call
(`Agent.guard`); the guard only reads what the loop already knows (requests made, the
session's cost from the provider's reported usage priced by agent/llm/cost_map.py).

The limits are the run's, not the parent conversation's: a subagent's loop asks a guard of its
own made by `for_child`, with the same rules and one shared `RunTally`, so a child is never a
way around them. `--max-turns N` bounds every model request of the run, the children's
included (a child's request is a turn like any: it is what the flag exists to bound, the
requests and their bill), and `--max-cost` the cost of all of them, each counted as it
happens, not when the child's result comes back. The first limit reached, by the parent or a
child, ends the whole run: every later request or tool call of any of them is refused with it
(a child stops, its parent gets its error as the `subagent` result, then stops too).

Tool rules: `NAME` (globs allowed: `mcp__github__*`) or `terminal-execute(PREFIX)`, a command
prefix matched by whole words against every simple command of the shell parse
(agent/tools/permissions.py's, the one approvals use). `--allowed-tools`: only the listed
tools are offered to the model and its commands must each match a listed prefix (a plain
`terminal-execute` allows any command); the prefixes also count as approved, as
`permissions.allow_commands` would (the flag is the user's word). `--disallowed-tools`: the
named tools are not offered, and a command any part of which matches a listed prefix stops
the run. A command the parser cannot account for matches every prefix rule: the run stops
rather than guess (`eval "git push"` must not slip past `terminal-execute(git push)`).
"""

from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.session.models import ToolCall
from agent.turn.events import LimitReached

EXIT_MAX_TURNS = 3
EXIT_MAX_COST = 4
EXIT_TOOL_NOT_ALLOWED = 5
EXIT_TOOL_DISALLOWED = 6
EXIT_CODES: dict[str, int] = {
    "max_turns": EXIT_MAX_TURNS,
    "max_cost": EXIT_MAX_COST,
    "tool_not_allowed": EXIT_TOOL_NOT_ALLOWED,
    "tool_disallowed": EXIT_TOOL_DISALLOWED,
}
COMMAND_TOOL = "terminal-execute"
_RULE = re.compile(r"^\s*([A-Za-z0-9_.*?\[\]-]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class ToolRuleError(ValueError):
    """A --allowed-tools / --disallowed-tools entry that cannot be understood (exit 2)."""


class ToolRule(BaseModel):
    name: str  # a tool name or a glob
    prefix: str | None = None  # terminal-execute(PREFIX)

    def matches_name(self, name: str) -> bool:
        return fnmatch.fnmatchcase(name, self.name)

    def __str__(self) -> str:
        return f"{self.name}({self.prefix})" if self.prefix is not None else self.name


class RunLimits(BaseModel):
    max_turns: int | None = None
    max_cost: float | None = None
    allowed: list[ToolRule] | None = None  # None: every tool
    disallowed: list[ToolRule] = []


def parse_tool_rules(text: str, known: list[str]) -> list[ToolRule]:
    """`"filesystem-read, terminal-execute(git log), mcp__*"` → rules; commas inside the
    parentheses belong to the prefix."""
    entries, depth, current = [], 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")" and depth > 0
        if char == "," and depth == 0:
            entries.append(current)
            current = ""
        else:
            current += char
    entries.append(current)
    rules = []
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        match = _RULE.match(entry)
        if match is None:
            raise ToolRuleError(f"cannot read the tool rule '{entry}' (NAME or {COMMAND_TOOL}(PREFIX))")
        name, prefix = match.group(1), match.group(2)
        if prefix is not None:
            if name != COMMAND_TOOL:
                raise ToolRuleError(f"'{entry}': only {COMMAND_TOOL} takes a command prefix")
            if not prefix.split():
                raise ToolRuleError(f"'{entry}': the command prefix is empty")
            prefix = " ".join(prefix.split())
        if not any(ch in name for ch in "*?[") and name not in known and not name.startswith("mcp__"):
            raise ToolRuleError(f"unknown tool '{name}' (tools: {', '.join(known)})")
        rules.append(ToolRule(name=name, prefix=prefix))
    return rules


@dataclass
class RunTally:
    """What the whole run has used, shared by the parent's guard and each child's: one count of
    model requests, one cost, one limit that ends the run."""

    requests: int = 0  # model requests sent (retries of one are one), children's included
    cost: float = 0.0  # their provider-reported usage, priced
    reached: LimitReached | None = None


PARENT_SUBJECT = "the model"  # how limit messages name the parent's model; a child is "the NAME agent"


class RunGuard:
    """What one headless run may still do. Owned by the run (agent/headless/run.py), consulted by
    the loop (`Agent.guard`); a subagent's loop consults `for_child(name)` (agent/turn/children.py)."""

    def __init__(
        self, limits: RunLimits, workspace: Path, *, tally: RunTally | None = None, who: str = PARENT_SUBJECT
    ) -> None:
        self.limits = limits
        self.workspace = workspace
        self.tally = tally if tally is not None else RunTally()
        self.who = who  # who makes the requests and calls this guard answers, as its messages name them
        self._cost_before: float | None = None  # this agent's session cost as its request went out

    def for_child(self, name: str) -> RunGuard:
        """The guard of a subagent `name` started: the same rules, counting into the same tally."""
        return RunGuard(self.limits, self.workspace, tally=self.tally, who=f"the {name} agent")

    @property
    def requests(self) -> int:
        return self.tally.requests

    @property
    def run_cost(self) -> float:
        return self.tally.cost

    @property
    def reached(self) -> LimitReached | None:
        return self.tally.reached

    @property
    def exit_code(self) -> int | None:
        return EXIT_CODES[self.reached.limit] if self.reached is not None else None

    def approved_prefixes(self) -> list[str]:
        return [r.prefix for r in self.limits.allowed or [] if r.prefix is not None]

    # -- what the model is offered ------------------------------------------------------
    def offered(self, name: str) -> bool:
        if any(r.prefix is None and r.matches_name(name) for r in self.limits.disallowed):
            return False
        return self.limits.allowed is None or any(r.matches_name(name) for r in self.limits.allowed)

    def offered_tools(self, definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [d for d in definitions if self.offered(d.get("function", {}).get("name", ""))]

    # -- before each request -----------------------------------------------------------
    def before_request(self, session_cost: float) -> LimitReached | None:
        """None: send it. Counted here, so a request is one turn however often it is retried.
        `session_cost`: the asking agent's own session cost (a child's starts at 0)."""
        if self.tally.reached is not None:
            return self.tally.reached
        self._cost_before = session_cost
        tally, max_turns, max_cost = self.tally, self.limits.max_turns, self.limits.max_cost
        if max_turns is not None and tally.requests >= max_turns:
            return self._reach(
                "max_turns",
                f"the run reached --max-turns {max_turns} ({tally.requests} model "
                f"request{'' if tally.requests == 1 else 's'}) and {self.who} wanted to go on",
            )
        if max_cost is not None and tally.cost >= max_cost:
            return self._reach(
                "max_cost",
                f"the run cost ${tally.cost:.4f} (provider-reported usage at "
                f"litellm's prices), reaching --max-cost {max_cost:g}",
            )
        tally.requests += 1
        return None

    def before_side_request(self) -> LimitReached | None:
        """A request outside the turn's own (a condense's summary): counted as one, so the run's
        requests stay within --max-turns. Its cost is charged by the turn's request it runs in
        (`after_request`), so `_cost_before` is left alone. None: send it."""
        if self.tally.reached is not None:
            return self.tally.reached
        max_turns = self.limits.max_turns
        if max_turns is not None and self.tally.requests >= max_turns:
            return self._reach(
                "max_turns",
                f"the run reached --max-turns {max_turns} and {self.who} wanted to summarise the conversation",
            )
        self.tally.requests += 1
        return None

    def after_request(self, session_cost: float) -> None:
        """Charge what the request just made cost. Only the change since `before_request`
        counts: what lands in the parent's session cost between its requests is a child's,
        already charged by the child's guard as it happened."""
        if self._cost_before is not None:
            self.tally.cost += max(0.0, session_cost - self._cost_before)
            self._cost_before = None

    # -- before each tool call ---------------------------------------------------------------
    def before_tool(self, call: ToolCall) -> LimitReached | None:
        if self.tally.reached is not None:
            return self.tally.reached
        if not self.offered(call.name):
            allowed = self.limits.allowed is not None and not any(
                r.matches_name(call.name) for r in self.limits.allowed
            )
            limit = "tool_not_allowed" if allowed else "tool_disallowed"
            flag = "--allowed-tools" if allowed else "--disallowed-tools"
            return self._reach(limit, f"{self.who} called {call.name}, which {flag} does not permit", call)
        if call.name != COMMAND_TOOL:
            return None
        command = _command_of(call)
        if not command.strip():
            return None  # bad arguments: the tool answers with an error and runs nothing
        allowed_prefixes = [r.prefix for r in self.limits.allowed or [] if r.matches_name(COMMAND_TOOL)]
        any_command = any(p is None for p in allowed_prefixes) or self.limits.allowed is None
        denied = [r.prefix for r in self.limits.disallowed if r.prefix is not None]
        if not denied and any_command:
            return None
        parts = self._parts(command)
        if denied and (parts is None or any(_starts(words, p) for words in parts for p in denied)):
            return self._reach(
                "tool_disallowed",
                f"{self._command_subject()} `{command}` matches --disallowed-tools "
                f"({', '.join(f'{COMMAND_TOOL}({p})' for p in denied)})"
                + ("; it could not be parsed, so it may" if parts is None else ""),
                call,
            )
        if not any_command and (
            parts is None or not all(any(_starts(words, p) for p in allowed_prefixes if p) for words in parts)
        ):
            return self._reach(
                "tool_not_allowed",
                f"{self._command_subject()} `{command}` is not covered by --allowed-tools "
                f"({', '.join(f'{COMMAND_TOOL}({p})' for p in allowed_prefixes)})",
                call,
            )
        return None

    def _command_subject(self) -> str:
        return "the command" if self.who == PARENT_SUBJECT else f"{self.who}'s command"

    def _parts(self, command: str) -> list[list[str]] | None:
        """Every simple command's words, or None when the parse cannot account for all of it."""
        from agent.tools.shell_parse import parse_command

        parsed = parse_command(command)
        return None if parsed.unsafe else [list(c.words) for c in parsed.commands]

    def _reach(self, limit: str, message: str, call: ToolCall | None = None) -> LimitReached:
        reached = LimitReached(
            limit=limit,
            message=f"Stopped: {message}.",
            exit_code=EXIT_CODES[limit],
            tool_call_id=call.id if call else None,
        )
        # The run's record names a call only when it is the parent's: a child's call is in
        # no history or stream the user reads.
        child = self.who != PARENT_SUBJECT
        self.tally.reached = reached.model_copy(update={"tool_call_id": None}) if child else reached
        return reached


def _starts(words: list[str], prefix: str) -> bool:
    from agent.tools.permissions import prefix_matches

    return prefix_matches(words, prefix)


def _command_of(call: ToolCall) -> str:
    try:
        data = json.loads(call.arguments or "{}")
    except ValueError:
        return ""
    command = data.get("command") if isinstance(data, dict) else None
    return command if isinstance(command, str) else ""
