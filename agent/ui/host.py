"""The app as its slash commands, session flows, `!command` and screens see it.

They run on `CairnApp` but import this Protocol instead of the app: the app imports them,
so importing it back would tie the whole ui/ package into one import circle. What is named
here is all they may use of the app; the app meets it by its shape (mypy checks it where a
command handler or a flow is given the app).
"""

from __future__ import annotations

from collections.abc import Coroutine
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.screen import Screen, ScreenResultCallbackType

    from agent.runtime.runtime import Runtime
    from agent.settings.schema import Settings
    from agent.settings.trust import ProjectTrust
    from agent.ui.widgets.chat import ChatView
    from agent.ui.widgets.prompt import PromptInput
    from agent.ui.widgets.status import StatusBar
    from agent.ui.widgets.todo import TodoPanel

ResultT = TypeVar("ResultT")


class Host(Protocol):
    runtime: Runtime | None  # None until opened (and with no model, or when it failed)
    settings: Settings | None  # None until loaded after the first frame
    config_warnings: list[str]  # what loading the settings found wrong (agent/settings/config.py LoadedConfig)
    project_trust: ProjectTrust | None  # the project's keys waiting for the trust question; None: none, or answered

    @property
    def workspace(self) -> Path: ...  # known before the settings are

    # -- what it shows -------------------------------------------------------------------
    @property
    def chat(self) -> ChatView: ...
    @property
    def prompt(self) -> PromptInput: ...
    @property
    def status(self) -> StatusBar: ...
    @property
    def todo_panel(self) -> TodoPanel: ...
    def refresh_status(self) -> None: ...
    def refresh_header(self) -> None: ...

    # -- turns (agent/ui/turns.py) --------------------------------------------------------
    @property
    def turn_running(self) -> bool: ...
    def notice_not_ready(self) -> None: ...
    def still_working(self, text: str) -> bool: ...
    def send_prompt(self, shown: str, sent: str | None = None) -> None: ...
    def start_compact(self, instructions: str | None) -> None: ...
    def start_shell(self, command: str) -> None: ...

    # -- the runtime and the app's life ---------------------------------------------------
    def open_runtime(self) -> object: ...
    async def quit_app(self) -> None: ...

    # -- Textual's, used by the flows ------------------------------------------------------
    @property
    def screen(self) -> Screen[object]: ...
    def push_screen(
        self, screen: Screen[ResultT], callback: ScreenResultCallbackType[ResultT] | None = None
    ) -> object: ...
    async def push_screen_wait(self, screen: Screen[ResultT]) -> ResultT: ...
    def suspend(self) -> AbstractContextManager[None]: ...  # the terminal to another program (/memory's editor)
    def copy_to_clipboard(self, text: str) -> None: ...  # OSC 52 (/copy)
    def run_worker(
        self, work: Coroutine[Any, Any, None], *, group: str = ..., exclusive: bool = ..., exit_on_error: bool = ...
    ) -> object: ...
