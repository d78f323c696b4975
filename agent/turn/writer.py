"""The turn's writes to the session: the one object that appends, persists and settles.

Every message is written the moment it exists, and a write that has started finishes even
when the turn is cancelled around it (an interrupt must not lose a row half-way). The loop,
the stream writer (the assistant message as it streams) and the budget step (a summary and
its marks) all write through this object, handed to them; none of them reaches into the
agent for it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from agent.session.models import Message, Session

if TYPE_CHECKING:
    from agent.session.store import Store

T = TypeVar("T")
FileChange = tuple[str, bytes | None, bytes | None]  # path, bytes before, bytes after


class SessionWriter:
    """Writes of one agent's session. `session` gives the current session (the agent may
    switch to a new one); `history` loads the active path the appends extend."""

    def __init__(
        self, store: Store, session: Callable[[], Session], history: Callable[[], Awaitable[list[Message]]]
    ) -> None:
        self.store = store
        self._session = session
        self._history = history
        self._pending: asyncio.Future[Any] | None = None

    async def persist(self, awaitable: Awaitable[T]) -> T:
        """Finish a database write even if the turn is cancelled meanwhile."""
        task = asyncio.ensure_future(awaitable)
        self._pending = task
        return await asyncio.shield(task)

    async def settle(self) -> None:
        """Wait for the write in flight (its failure is its writer's to report)."""
        if self._pending is not None and not self._pending.done():
            await asyncio.gather(self._pending, return_exceptions=True)

    async def history(self) -> list[Message]:
        """A copy of the active path the appends extend."""
        return list(await self._history())

    async def append(self, message: Message, file_changes: Iterable[FileChange] = ()) -> Message:
        """Store `message` (in place) as the new head; the history follows even if cancelled."""
        history = await self._history()

        async def write() -> Message:
            await self.store.append(self._session(), message, file_changes)
            history.append(message)
            return message

        return await self.persist(write())
