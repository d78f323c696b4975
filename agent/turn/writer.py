"""The turn's writes to the session: the one object that appends, persists and settles.

Every message is written the moment it exists, and a write that has started finishes even
when the turn is cancelled around it (an interrupt must not lose a row half-way). The loop,
the stream writer (the assistant message as it streams) and the budget step (a summary and
its marks) all write through this object, handed to them; none of them reaches into the
agent for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from agent.session.models import Message, Session


class SessionWriter:
    """Writes of one agent's session. `session` gives the current session (the agent may
    switch to a new one); `history` loads the active path the appends extend."""

    def __init__(
        self, store: Any, session: Callable[[], Session], history: Callable[[], Awaitable[list[Message]]]
    ) -> None:
        self.store = store
        self._session = session
        self._history = history
        self._pending: asyncio.Future | None = None

    async def persist(self, awaitable: Awaitable[Any]) -> Any:
        """Finish a database write even if the turn is cancelled meanwhile."""
        task = asyncio.ensure_future(awaitable)
        self._pending = task
        return await asyncio.shield(task)

    async def settle(self) -> None:
        """Wait for the write in flight (its failure is its writer's to report)."""
        if self._pending is not None and not self._pending.done():
            await asyncio.gather(self._pending, return_exceptions=True)

    async def append(self, message: Message, file_changes=()) -> Message:
        """Store `message` (in place) as the new head; the history follows even if cancelled."""
        history = await self._history()

        async def write() -> Message:
            await self.store.append(self._session(), message, file_changes)
            history.append(message)
            return message

        return await self.persist(write())
