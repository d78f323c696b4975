"""Everything behind a front end (TUI or headless): settings, store, session, agent.

Front ends build one `Runtime` (the TUI does it in a worker after its first frame, so
litellm and the database stay off the path to the first screen), feed it prompts, and
render the events it emits. They never touch the store or the loop directly.
"""

from __future__ import annotations

import asyncio
from typing import Callable

from agent.background import in_daemon_thread
from agent.config import Settings
from agent.events import Event
from agent.session.models import Message, Session
from agent.tools.permissions import Approver

EventSink = Callable[[Event], None]


class NoModelConfigured(Exception):
    """No model flag/config and no provider key in the environment."""


class SessionNotFound(Exception):
    """--resume named a session that does not exist (or a prefix matching several)."""

    def __init__(self, id_or_prefix: str) -> None:
        super().__init__(f"No session matches '{id_or_prefix}' (give the full id or a unique prefix).")


class Runtime:
    def __init__(self, settings: Settings, store, agent, model: str) -> None:
        self.settings = settings
        self.store = store
        self.agent = agent
        self.model = model
        self._turn: asyncio.Task | None = None

    # -- construction -------------------------------------------------------------
    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        on_event: EventSink,
        approver: Approver | None,
        resume_id: str | None = None,
        continue_last: bool = False,
        warm_up: bool = True,
    ) -> "Runtime":
        """Open the store, pick the model, create or resume the session.

        Raises NoModelConfigured when no model can be chosen (the UI shows how to set one),
        SessionNotFound when `resume_id` matches nothing. `warm_up` also pays litellm's
        first-request costs now (worth it for an interactive front end).
        """
        from agent.llm.models import resolve_model

        model = resolve_model(settings)
        if not model:
            raise NoModelConfigured()
        # Heavy imports happen in a thread so a front end's event loop keeps drawing.
        await in_daemon_thread(_load_backend, settings.context.tokenizer if warm_up else None)
        from agent.loop import Agent
        from agent.session.store import Store

        store = await Store.open()
        try:
            session: Session | None = None
            if resume_id:
                session = await store.find_session(resume_id)
                if session is None:
                    raise SessionNotFound(resume_id)
            elif continue_last:
                session = await store.latest_session(str(settings.workspace))
            if session is None:
                session = await store.create_session(cwd=str(settings.workspace), model=model)
            agent = Agent(settings=settings, store=store, session=session, model=model,
                          on_event=on_event, approver=approver)
        except BaseException:
            # aiosqlite's thread is not a daemon: an open store would keep the process alive.
            await store.close()
            raise
        return cls(settings, store, agent, model)

    # -- what front ends call -----------------------------------------------------
    @property
    def session(self) -> Session:
        """The agent's session: it is replaced when the title is set or /new runs."""
        return self.agent.session

    @property
    def context_window(self) -> int:
        return self.agent.limits.context_window

    @property
    def busy(self) -> bool:
        return self._turn is not None and not self._turn.done()

    async def run_turn(self, text: str) -> None:
        """Run one user turn to the end (or until `interrupt()`); events go to on_event."""
        self._turn = asyncio.ensure_future(self.agent.run_turn(text))
        try:
            await asyncio.shield(self._turn)
        except asyncio.CancelledError:
            # The caller itself was cancelled: interrupt the turn and let it clean up.
            self._turn.cancel()
            await asyncio.gather(self._turn, return_exceptions=True)
            raise
        finally:
            self._turn = None

    def interrupt(self) -> bool:
        """Stop the running turn (stream cancelled, tool processes killed). True if one ran."""
        if self.busy:
            self._turn.cancel()
            return True
        return False

    async def history(self) -> list[Message]:
        """The active path of the session, for display (seed 002's load-time view)."""
        from agent.session.loading import load_session_messages

        return await load_session_messages(self.store, self.session.id)

    async def context_report(self, now_ms: int | None = None) -> dict:
        """The pass-by-pass report of the next request (the same build the loop runs)."""
        from agent.context.inspect import context_report
        from agent.session.models import now_ms as clock

        history = await self.agent.current_history()
        return context_report(
            history, settings=self.settings, session_id=self.session.id, model=self.model,
            workspace=self.settings.workspace, now_ms=now_ms if now_ms is not None else clock(),
        )

    async def new_session(self) -> Session:
        session = await self.store.create_session(cwd=str(self.settings.workspace), model=self.model)
        self.agent.switch_session(session)
        return session

    def set_model(self, model: str) -> None:
        self.model = model
        self.agent.set_model(model)

    async def close(self) -> None:
        self.interrupt()
        await self.store.close()


def _load_backend(warm_tokenizer: str | None) -> None:
    import agent.loop  # noqa: F401 - imports litellm's adapter, the store, aiosqlite, the tools
    from agent.offline import import_litellm, warm_up

    if warm_tokenizer:
        warm_up(warm_tokenizer)
    else:
        import_litellm()

