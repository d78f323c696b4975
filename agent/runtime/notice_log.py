"""What a turn told the user, kept in the session so a resumed session says it again.

An error ("Authentication failed …"), a notice ("@missing.py: not attached") or a hook's
action is an event, shown once and gone: on `--continue` the prompt it answered looked
ignored. `NoticeLog` sits between the agent and the front end's event sink: it forwards every
event unchanged and stores those lines (agent/session/store/notices.py) after the message
they followed. They never become messages, so no request changes. Only what a turn says is
kept (while the runtime is busy): a start-up notice would repeat at every launch.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent.session.models import NoticeKind, SessionNotice

if TYPE_CHECKING:
    from agent.session.models import Message, Session
    from agent.session.store import Store
    from agent.turn.events import Event

log = logging.getLogger(__name__)


def notice_of(event: Event) -> tuple[NoticeKind, str, str] | None:
    """(kind, source, text) of an event the user reads as a line; None for the others."""
    from agent.turn.events import HookActed, Notice, TurnError

    if isinstance(event, TurnError):
        return "error", "error", event.message
    if isinstance(event, HookActed):
        return "info", "hook", event.message
    if isinstance(event, Notice):
        return event.kind, "notice", event.message
    return None


class NoticeLog:
    """The agent's event sink: `forward` gets every event, the turn's lines are stored too.
    `session` and `recording` are set once the agent and runtime exist.

    A line said before the turn's prompt is stored (UserPromptSubmit's context, an image not
    attached) waits for it and follows it, as the live chat shows it under the prompt; a turn
    without one (a blocked prompt, /compact) puts them after the head when it finishes."""

    def __init__(self, store: Store, forward: Callable[[Event], None]) -> None:
        self.store = store
        self.forward = forward
        self.session: Callable[[], Session | None] = lambda: None
        self.recording: Callable[[], bool] = lambda: False
        self._writes: set[asyncio.Future[SessionNotice]] = set()
        self._held: list[SessionNotice] = []  # said before this turn's prompt was stored
        self._prompted = False  # this turn's prompt is stored

    def __call__(self, event: Event) -> None:
        from agent.turn.events import TurnFinished, UserMessage

        session = self.session()
        found = notice_of(event) if session is not None and self.recording() else None
        if found is not None and session is not None:
            kind, source, text = found
            notice = SessionNotice(session_id=session.id, after_id=session.head_id, kind=kind, source=source, text=text)
            if self._prompted:
                self._write(notice)
            else:
                self._held.append(notice)
        elif isinstance(event, UserMessage):
            self._prompted = True
            self._release(event.message.id)
        elif isinstance(event, TurnFinished):
            self._prompted = False
            self._release(session.head_id if session is not None else None)
        self.forward(event)

    def _release(self, after_id: str | None) -> None:
        held, self._held = self._held, []
        for notice in held:
            self._write(notice.model_copy(update={"after_id": after_id or notice.after_id}))

    def _write(self, notice: SessionNotice) -> None:
        write = asyncio.ensure_future(self.store.add_notice(notice))
        self._writes.add(write)
        write.add_done_callback(self._written)

    def _written(self, write: asyncio.Future[SessionNotice]) -> None:
        self._writes.discard(write)
        if not write.cancelled() and write.exception() is not None:  # a line lost, never the turn
            log.warning("could not store a notice", exc_info=write.exception())

    async def settle(self) -> None:
        """Wait for the lines still being written (before the store closes)."""
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)


async def notices_among(store: Store, session_id: str, shown: list[Message]) -> list[SessionNotice]:
    """The lines said after the `shown` messages (and before the first, when it is the
    session's first), in the order they were said."""
    after: list[str | None] = [m.id for m in shown]
    if shown and shown[0].parent_id is None:
        after.append(None)
    return await store.notices(session_id, after)
