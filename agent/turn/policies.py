"""What may bound a turn from outside it: the policies the loop asks before each request and
each tool call, instead of checks for one particular limit spread through the loop.

A policy says no with a `LimitReached` (the turn ends with status "limit" and the event says
why; a tool call refused is answered, so the history stays valid). Today's one is a headless
run's guard (agent/headless/limits.py `RunGuard`: --max-turns, --max-cost, --allowed-tools),
which fits `RunPolicy` by shape: the turn does not import the front end that makes it.

The step limit and a Stop hook's "go on" are not policies: the step limit is the loop's own
bound (a turn ends whatever policies are set), and a Stop hook is asked when the turn would
end, may take time and writes a note: neither says no to a request or a call.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from agent.session.models import ToolCall
from agent.turn.events import LimitReached


class TurnPolicy(Protocol):
    def before_request(self, session_cost: float) -> LimitReached | None:
        """Before a turn's model request (`session_cost`: the asking agent's so far). None: send it."""
        ...

    def after_request(self, session_cost: float) -> None:
        """After that request, with the session's cost now."""
        ...

    def before_side_request(self) -> LimitReached | None:
        """Before a request outside the turn's own (a condense's summary). None: send it."""
        ...

    def offered_tools(self, definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The tool definitions a request may carry, of those offered."""
        ...

    def before_tool(self, call: ToolCall) -> LimitReached | None:
        """Before a tool call runs. None: run it."""
        ...


class RunPolicy(TurnPolicy, Protocol):
    """A policy over a whole run, subagents included: a child's loop asks `for_child(name)`,
    and a child is given only tools `offered` passes (agent/turn/children.py)."""

    def offered(self, name: str) -> bool: ...

    def for_child(self, name: str) -> RunPolicy: ...


class TurnPolicies:
    """The policies an agent's turns consult, in order: the first to say no decides."""

    def __init__(self, items: Iterable[TurnPolicy] = ()) -> None:
        self.items: list[TurnPolicy] = list(items)

    def before_request(self, session_cost: float) -> LimitReached | None:
        return _first(p.before_request(session_cost) for p in self.items)

    def after_request(self, session_cost: float) -> None:
        for policy in self.items:
            policy.after_request(session_cost)

    def before_side_request(self) -> LimitReached | None:
        return _first(p.before_side_request() for p in self.items)

    def offered_tools(self, definitions: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for policy in self.items:
            definitions = policy.offered_tools(definitions)
        return definitions

    def before_tool(self, call: ToolCall) -> LimitReached | None:
        return _first(p.before_tool(call) for p in self.items)

    def replace(self, old: TurnPolicy | None, new: TurnPolicy | None) -> None:
        """`old` no longer asked (when held), `new` asked last (when given)."""
        if old is not None and old in self.items:
            self.items.remove(old)
        if new is not None:
            self.items.append(new)


def _first(answers: Iterable[LimitReached | None]) -> LimitReached | None:
    """The first no; later policies are not asked (asking counts a request against a run)."""
    return next((a for a in answers if a is not None), None)
