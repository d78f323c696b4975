"""The runtime's session changes: switch, start, delete, rename, fork, rewind, branches, export.

Each is an op's handler (agent/runtime/ops.py) or a read the rewind menu and picker make before
choosing one. They change which session (or which head of it) the agent works on; none may run
while a turn does (`RuntimeBusy`): the turn is writing to the session being moved.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agent.paths import exports_dir
from agent.runtime.errors import RuntimeBusy, SessionNotFound
from agent.session.models import Session, SessionSummary

if TYPE_CHECKING:
    from agent.session.branches import SessionBranch
    from agent.session.rewind import FileRestore, RewindOutcome, RewindPoint
    from agent.session.store import Store
    from agent.settings.schema import Settings
    from agent.turn.loop import Agent


class SessionChanges:
    """Owned by the runtime: the store, the settings, the agent whose session moves, and
    whether a turn runs (`busy`) and which model a new session is for (`model`)."""

    def __init__(
        self, store: Store, settings: Settings, agent: Agent, *, busy: Callable[[], bool], model: Callable[[], str]
    ) -> None:
        self._store = store
        self._settings = settings
        self._agent = agent
        self._busy = busy
        self._model = model

    @property
    def session(self) -> Session:
        return self._agent.session

    def _idle(self) -> None:
        if self._busy():
            raise RuntimeBusy()

    # -- switching ----------------------------------------------------------------
    async def open(self, session_id: str) -> Session:
        self._idle()
        session = await self._store.find_session(session_id)
        if session is None:
            raise SessionNotFound(session_id)
        await self._switch(session)
        self._agent.hooks.session_started("resume")
        return session

    async def new(self) -> Session:
        """A fresh session reads the instruction files again (CLAUDE.md, AGENTS.md and their
        imports, as Claude Code's /clear does): a `# note` or an edit made since is in it."""
        from agent.prompt import build_system_prompt

        session = await self._store.create_session(cwd=str(self._settings.workspace), model=self._model())
        await self._switch(session)
        self._agent.system_prompt = build_system_prompt(self._settings.workspace)
        self._agent.hooks.session_started("clear")
        return session

    async def delete(self, session_id: str) -> None:
        if session_id == self.session.id:
            self._idle()
            await self.new()
        await self._store.delete_session(session_id)

    async def rename(self, title: str) -> Session:
        session = await self._store.update_session(self.session, title=" ".join(title.split()))
        self._agent.session = session
        return session

    async def fork(self) -> Session:
        from agent.session.fork import fork_session

        self._idle()
        fork = await fork_session(self._store, self.session, self._model())
        await self._switch(fork)
        return fork

    async def _switch(self, session: Session) -> None:
        """Make `session` the agent's; the one left is removed if nothing was asked in it."""
        left = self.session.id
        self._agent.switch_session(session)
        if left != session.id:
            await self._store.prune_if_empty(left)

    def _set_head(self, session: Session) -> None:
        """Same session, new head: history reloads, approvals given in this session stay."""
        self._agent.session = session
        self._agent.history = None

    # -- rewind and branches ----------------------------------------------------------
    async def rewind_points(self) -> list[RewindPoint]:
        from agent.session.rewind import rewind_points

        path = await self._store.active_path(self.session.id)
        return rewind_points(path, await self._store.file_changes(self.session.id))

    async def plan_file_restore(self, message_id: str) -> list[FileRestore]:
        from agent.session.rewind import plan_restore

        path = await self._store.active_path(self.session.id)
        changes = await self._store.file_changes(self.session.id)
        return plan_restore(path, message_id, changes, workspace=self._settings.workspace)

    async def rewind(self, message_id: str, *, restore_files: bool) -> RewindOutcome:
        from agent.session.rewind import RewindOutcome, rewind_with_files

        self._idle()
        target = await self._store.get_message(message_id)
        if target is None or target.session_id != self.session.id or target.role != "user":
            raise SessionNotFound(message_id)
        outcome = RewindOutcome(text=target.content or "")
        if restore_files:  # journaled: files and head together, even across a kill -9
            plan = await self.plan_file_restore(message_id)
            session = await rewind_with_files(self._store, self.session, plan, outcome, target.parent_id)
        else:
            session = await self._store.set_head(self.session, target.parent_id)
        self._set_head(session)
        return outcome

    async def branches(self, limit: int) -> list[SessionBranch]:
        from agent.session.branches import other_branches

        return await other_branches(self._store, self.session, limit)

    async def plan_branch_files(self, leaf_id: str) -> list[FileRestore]:
        from agent.session.rewind import plan_branch_files

        return await plan_branch_files(self._store, self.session, leaf_id, workspace=self._settings.workspace)

    async def switch_branch(self, leaf_id: str, *, restore_files: bool) -> RewindOutcome:
        from agent.session.rewind import RewindOutcome, rewind_with_files

        self._idle()
        outcome = RewindOutcome(text="")
        plan = await self.plan_branch_files(leaf_id) if restore_files else []
        self._set_head(await rewind_with_files(self._store, self.session, plan, outcome, leaf_id))
        return outcome

    # -- reading and writing out --------------------------------------------------------
    async def list(self, limit: int) -> list[SessionSummary]:
        return await self._store.list_summaries(limit=limit)

    async def export(self, fmt: str, path: Path | None, warn: Callable[[str], None]) -> Path:
        from agent.session.exporting import export_text

        session = await self._store.get_session(self.session.id) or self.session
        text = await export_text(self._store, session, fmt, context=self._settings.context, warn=warn)
        # No path: the data folder's exports/, never the user's repository (a stray file there
        # gets committed); the caller prints where it went.
        target = path or exports_dir() / f"cairn-{session.id[:8]}.{fmt}"
        if not target.is_absolute():
            target = self._settings.workspace / target
        await asyncio.to_thread(_write_text, target, text)
        return target


def _write_text(target: Path, text: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text.encode("utf-8"))
