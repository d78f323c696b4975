"""What of an agent changes while its helpers hold it, in one typed object they share.

The turn's helpers (the tool step, the model step, the budget step, the child runner) are
built once, but some of what they read is replaced later: the session (a rename, a switch),
the model (/model), the history (loaded on first use, dropped on a rewind), the session's
cost, the request builder (one per session), the tool registry (narrowed by a front end or a
child's confinement) and the system prompt (a child's carries its brief). The agent owns one
`TurnState` and hands it to each helper, so they read what is current without holding the
agent itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.context.builder import RequestBuilder
from agent.session.models import Message, Session
from agent.tools.registry import ToolRegistry


@dataclass
class TurnState:
    session: Session
    model: str
    builder: RequestBuilder  # the session's: what its builds remember, its cache policy
    registry: ToolRegistry
    system_prompt: str
    history: list[Message] | None = None  # the active path, once loaded (agent/turn/loop.py)
    session_cost: float = 0.0  # what the session's requests cost, its children's included
