"""cairn's Textual app: renders runtime events, runs turns, asks for approvals.

It imports only Textual and the light agent modules. The runtime (litellm, the
database, the loop) is opened in a worker after the first frame, so the prompt takes
typing at once; prompts sent before it is ready run as soon as it is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from textual import work
from textual.app import App
from textual.worker import WorkerCancelled

from agent.runtime.ops import Interrupt
from agent.ui import commands, sessions, shell
from agent.ui.error_text import readable
from agent.ui.event_render import EventRenderer
from agent.ui.keys import APP_BINDINGS, KeyActions
from agent.ui.modes import ModeActions
from agent.ui.notify import NotifyActions
from agent.ui.termination import Termination
from agent.ui.turns import TurnActions
from agent.ui.widgets.chat import MAX_MOUNTED, ChatView
from agent.ui.widgets.header import SessionHeader
from agent.ui.widgets.path_popup import PathPopup
from agent.ui.widgets.prompt import PromptInput, SlashPopup
from agent.ui.widgets.queued import QueuedPrompts
from agent.ui.widgets.status import StatusBar
from agent.ui.widgets.todo import TodoPanel

if TYPE_CHECKING:
    from textual.widgets import Collapsible
    from textual.worker import Worker

    from agent.mcp.client_requests import ElicitAnswer, ElicitRequest
    from agent.runtime.runtime import Runtime
    from agent.settings.config import LoadedConfig
    from agent.settings.schema import Settings
    from agent.settings.trust import ProjectTrust
    from agent.tools.permissions import ApprovalRequest, Decision
    from agent.turn import events as ev
    from agent.ui.early import TypeAhead

# Everything not needed for the first frame (the runtime and its pydantic models, the
# approval screen, Markdown) is imported where it is first used.

HISTORY_DRAWN_TIMEOUT_S = 2.0  # litellm waits at most this long for a resumed history to be drawn
log = logging.getLogger("agent.ui")


class CairnApp(KeyActions, TurnActions, ModeActions, NotifyActions, App):
    CSS_PATH = "app.tcss"
    TITLE = "cairn"
    AUTO_FOCUS = None  # set per screen (it would carry into modals); the prompt is focused on mount
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = APP_BINDINGS

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        workspace: Path | None = None,
        flags: dict | None = None,
        resume_id: str | None = None,
        continue_last: bool = False,
        initial_prompt: str | None = None,
    ) -> None:
        """Give `settings`, or `workspace` + `flags` to load them after the first frame
        (pydantic and the config files then stay off the path to the first screen).
        `initial_prompt`: `cairn "fix the bug"`'s prompt, sent on mount as if typed."""
        super().__init__()
        self.settings = settings
        # What loading the settings found (agent/settings/config.py LoadedConfig): the problems,
        # shown in the chat and /status, and the project's keys waiting for the trust question.
        self.config_warnings: list[str] = []
        self.project_trust: ProjectTrust | None = None
        self._settings_source = (workspace, flags)
        self.resume_id = resume_id
        self.continue_last = continue_last
        self.runtime: Runtime | None = None
        self.opening = True  # from the start: prompts sent before the open worker runs wait for it
        self.no_model = False
        self.open_error: str | None = None
        self._pending: list[str] = []
        self._turn_active = False
        self._interrupt_requested = False
        self._meter: Worker[None] | None = None  # the worker measuring the next request for the status bar
        self._meter_stale = False
        self._termination = Termination(self)  # SIGTERM/SIGHUP, handled while the app runs
        self.typeahead: TypeAhead | None = None  # typed on the first screen, before the app ran
        self._initial_prompt = initial_prompt
        # A resumed session opens on its history: no header to push it down first.
        self._header_allowed = not (resume_id or continue_last)

    # -- layout ---------------------------------------------------------------------------
    def compose(self):
        yield SessionHeader(id="header")
        yield ChatView(id="chat")
        yield TodoPanel(id="todos")
        yield QueuedPrompts(id="queued")
        popup = SlashPopup(lambda prefix: commands.matching_for(self, prefix), id="slash-popup")
        yield popup
        paths = PathPopup(id="path-popup")
        paths.workspace = lambda: self.workspace
        yield paths
        yield PromptInput(popup, paths, id="prompt")
        flags = self._settings_source[1] or {}
        yield StatusBar(id="status", model=flags.get("model"), resuming=not self._header_allowed)

    @property
    def chat(self) -> ChatView:
        return self.query_one("#chat", ChatView)

    @property
    def prompt(self) -> PromptInput:
        return self.query_one("#prompt", PromptInput)

    @property
    def status(self) -> StatusBar:
        return self.query_one("#status", StatusBar)

    @property
    def queued(self) -> QueuedPrompts:
        return self.query_one("#queued", QueuedPrompts)

    @property
    def todo_panel(self) -> TodoPanel:
        return self.query_one("#todos", TodoPanel)

    @property
    def workspace(self) -> Path:
        """The project folder, known before the settings are (for the prompt history)."""
        if self.settings is not None:
            return self.settings.workspace
        return (self._settings_source[0] or Path.cwd()).resolve()

    def on_mount(self) -> None:
        from agent.ui.prompt_history import PromptHistory

        self.chat.command_body = self.project_command_body
        self.prompt.prompt_history = PromptHistory.for_project(self.workspace)
        self.prompt.take_queued = self._take_queued
        self.prompt.focus()
        if self.settings is not None:
            self._show_settings()
        self._take_typeahead()
        self._termination.install()
        self.call_after_refresh(self.open_runtime)

    def _take_typeahead(self) -> None:
        initial, self._initial_prompt = self._initial_prompt, None
        if initial and initial.strip():  # as if typed and Enter pressed; type-ahead queues behind it
            if self.prompt.prompt_history is not None:
                self.prompt.prompt_history.add(initial.strip("\n"))
            self.prompt.post_message(PromptInput.Submitted(initial.strip("\n")))
        typed, self.typeahead = self.typeahead, None
        if typed is None or not typed.text:
            return
        if typed.submitted:
            self.prompt.post_message(PromptInput.Submitted(typed.text.strip("\n")))
        else:
            self.prompt.restore(typed.text)

    def _show_settings(self) -> None:
        settings = self.settings
        assert settings is not None  # shown once loaded
        self.status.show_settings(settings.model, settings.yolo, settings.permission_mode)
        header = self.query_one("#header", SessionHeader)
        header.show(settings.workspace, settings.model, settings.yolo, settings.permission_mode)
        self.refresh_header()
        pending = self.project_trust  # its line waits for the trust question's answer
        for warning in self.config_warnings:  # in the chat, to stay: a toast covered the prompt, then went
            if pending is None or warning != pending.notice:
                self.chat.add_notice(warning, kind="warning")

    async def _load_settings(self) -> None:
        if self.settings is not None:
            return
        from agent.process.background import in_daemon_thread

        workspace, flags = self._settings_source
        loaded: list[LoadedConfig] = []

        def load() -> None:
            import agent.runtime.runtime  # noqa: F401 - pydantic and the models, off the event loop
            from agent.settings.config import load_config

            loaded.append(load_config(workspace, flags=flags))

        await in_daemon_thread(load)
        config = loaded[0]
        self.settings, self.config_warnings, self.project_trust = config.settings, config.warnings, config.project_trust
        self._show_settings()

    async def _settle_trust(self) -> None:
        """Before the runtime reads the settings: the folder-trust question, when the project
        config sets keys only a trusted folder may (agent/settings/trust.py)."""
        assert self.settings is not None  # loaded first
        if self.project_trust is not None:
            from agent.ui.screens.trust import settle

            await settle(self)

    # -- runtime --------------------------------------------------------------------------
    @work(group="open", exclusive=True, exit_on_error=False)
    async def open_runtime(self) -> None:
        """Open the runtime (store, model, session); show history when resuming."""
        self.opening = True
        self.open_error = None
        self.status.set_state("starting…")
        from agent.runtime.errors import NoModelConfigured, SessionNotFound
        from agent.runtime.opening import FrontEnd
        from agent.runtime.runtime import Runtime
        from agent.ui.widgets.no_model import NoModelPanel

        await self.query(NoModelPanel).remove()
        try:
            await self._load_settings()
            await self._settle_trust()
            assert self.settings is not None  # loaded (and, trusted, loaded again)
            opening = asyncio.ensure_future(
                Runtime.open(
                    self.settings,
                    FrontEnd(
                        on_event=self.handle_event,
                        approver=self.approve,
                        plan_review=self.review_plan,
                        elicit=self.elicit,
                    ),
                    resume_id=self.resume_id or None,  # "" (`--resume` without an id): new session + picker
                    continue_last=self.continue_last,
                )
            )
            try:
                runtime = await asyncio.shield(opening)
            except asyncio.CancelledError:
                # The app is closing mid-open: let the open finish and close what it opened.
                try:
                    await asyncio.wait_for(asyncio.shield(opening), 10)
                    await opening.result().close()
                except BaseException:
                    pass
                raise
        except SessionNotFound as exc:
            # `cairn --resume <id>` with an id that matches nothing: no UI to leave behind.
            from rich.text import Text

            self.exit(return_code=1, message=Text(f"cairn: {readable(exc)} `cairn session list` shows them."))
            return
        except NoModelConfigured:
            self.no_model = True
            await self.chat.mount(NoModelPanel())
            self.status.set_state("")
            self._drop_pending("No model configured yet: the prompt was not sent.")
            return
        except Exception as exc:  # a readable line, never a traceback
            self.open_error = readable(exc)
            self.chat.add_error(f"cairn could not start: {self.open_error}")
            self.status.set_state("not started")
            self._drop_pending("")
            return
        finally:
            self.opening = False
        self.runtime = runtime
        self.no_model = False
        # Only what can be shown is read: a long session's screen comes up at once.
        history = await runtime.history_tail(MAX_MOUNTED)
        if history:
            self.chat.show_history(history, await runtime.history_notices(history))
        else:
            self._header_allowed = True
            self.refresh_header()
        self.todo_panel.restore(history, runtime)
        self.status.set_loading(not runtime.backend_ready)
        for recovered in runtime.recovered:
            self.chat.add_notice(recovered.describe(), kind="warning")
        self.status.set_state("")
        self.refresh_status()
        self.call_after_refresh(self._when_backend_ready)
        if self.resume_id == "":  # `cairn --resume` without an id: the picker, over the new session
            self.resume_id = None
            if not self._pending:
                sessions.start(self, sessions.pick_session)
        if self._pending:
            text, self._pending = "\n\n".join(self._pending), []
            self._run_turn(text)

    @work(group="backend", exit_on_error=False)
    async def _when_backend_ready(self) -> None:
        """The context window is known once litellm has loaded behind the first screen.

        Its import holds the GIL for seconds: a resumed history is drawn completely first."""
        if self.runtime is not None:
            await self.chat.history_drawn(timeout=HISTORY_DRAWN_TIMEOUT_S)
            try:
                await self.runtime.ready()
            except Exception as exc:
                self.notify(f"cairn could not load its model backend: {readable(exc)}", severity="error", markup=False)
                return
            finally:
                self.status.set_loading(False)
            self.refresh_status()

    def on_chat_view_filled(self, message: ChatView.Filled) -> None:
        self.refresh_header()

    def refresh_header(self) -> None:
        """The header shows while the conversation is empty (settings known)."""
        header = self.query_one("#header", SessionHeader)
        header.display = self.settings is not None and not self.chat.children and self._header_allowed

    def _drop_pending(self, why: str) -> None:
        """Prompts sent before the runtime could open, which it never did: back into the
        prompt (nothing typed is lost), with `why` as a notice."""
        self.status.resuming = False  # no session was opened
        if self._pending and why:
            self.chat.add_notice(why, kind="warning")
        if self._pending and not self.prompt.text.strip():
            self.prompt.restore("\n\n".join(self._pending))
        self._pending.clear()

    def refresh_status(self) -> None:
        runtime = self.runtime
        if runtime is None:
            self.status.set_info(model=self.settings.model if self.settings else None)
            return
        from agent.llm.cost_map import model_info
        from agent.llm.reasoning import sent_effort

        effort, info = runtime.effort(), model_info(runtime.model)
        self.status.set_info(
            model=runtime.model,
            title=runtime.session.title,
            window=runtime.context_window,
            effort=effort,
            effort_sent=sent_effort(runtime.settings, runtime.model, runtime.chosen_effort) == effort,
            priced=info is not None and info.priced,
        )
        if not self.turn_running:
            self._meter_stale = True
            if self._meter is None or self._meter.is_finished:
                self._meter = self._measure_context()

    @work(group="meter", exit_on_error=False)
    async def _measure_context(self) -> None:
        """The meter at rest shows what /context reports (the next request, as built), so the
        two agree after a turn, a truncation, a rewind, a branch switch or a resume; during a
        turn the loop's Usage events move it. One measurement at a time, again while asked
        meanwhile (never cancelled: a cancelled worker fails whoever waits on the app's workers)."""
        while self._meter_stale:
            self._meter_stale = False
            runtime = self.runtime
            if runtime is None:
                return
            try:
                report = await runtime.context_report()
            except Exception:
                return  # the meter keeps its last figure; /context says what went wrong
            if runtime is self.runtime and not self.turn_running:
                self.status.set_context(report["tokens"]["total"], report["window"])
                self.status.set_cost(runtime.session_cost)  # a resumed session's, before its next request

    # -- events from the loop (sync; never raise into it) ------------------------------------
    @cached_property
    def event_renderer(self) -> EventRenderer:
        """Built at the first event (the widgets it draws on are mounted by then)."""
        return EventRenderer(self.chat, self.status, self.todo_panel, self)

    def handle_event(self, event: ev.Event) -> None:
        try:
            self.event_renderer.render(event)
        except Exception as exc:
            self.notify(f"Display error: {readable(exc)}", severity="error", markup=False)

    def project_command_body(self, name: str) -> str | None:
        """The current body of project command `name` (for showing a stored expansion as
        `/name args`); None when there is none. Never raises."""
        try:
            from agent.commands.catalog import find_command

            workspace = self.settings.workspace if self.settings is not None else None
            found = find_command(workspace, name) if workspace is not None else None
        except Exception:
            return None
        return found.body if found is not None else None

    # -- approvals --------------------------------------------------------------------------
    async def approve(self, request: ApprovalRequest) -> Decision:
        """The Approver given to the runtime: show the modal, wait for the choice."""
        from agent.ui.screens.approval import ask

        command = request.detail if request.kind == "command" else ""  # an edit's title names its file
        self.approval_waits(request.title, command)  # the bell, if the user is elsewhere (agent/ui/notify.py)
        return await ask(self, request)

    async def elicit(self, request: ElicitRequest) -> ElicitAnswer:
        """The form an MCP server asks for (agent/ui/screens/elicit.py), given to the runtime."""
        from agent.ui.screens.elicit import ask

        self.approval_waits(f"MCP server '{request.server}' asks for input")
        return await ask(self, request)

    # -- prompts ---------------------------------------------------------------------------
    async def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        if shell.is_shell(text):  # `!command`: the user's own, in their shell (agent/ui/shell.py)
            shell.submit(self, text)
            return
        from agent.ui.commands import memory  # light, and loaded only once a prompt is sent

        if memory.is_memory(text):  # `# note`: into the project's memory file, not to the model
            memory.remember(self, text)
            return
        parsed = commands.parse(text)
        if parsed is None:
            self.send_prompt(text)
            return
        name, args = parsed
        self.chat.anchor()  # a command's output is what the user asked to see: follow it, as a prompt's
        try:
            command = commands.find_for(self, name)
            if command is None:
                self.chat.add_notice(f"Unknown command /{name}. Type /help for the list.", kind="warning")
                return
            await command.handler(self, args)
        except Exception as exc:
            self.notify(f"/{name}: {readable(exc)}", severity="error", markup=False)

    def action_rewind(self) -> None:
        """ESC twice when idle: the rewind menu (SPEC §7)."""
        sessions.start(self, sessions.rewind)

    def on_collapsible_expanded(self, event: Collapsible.Expanded) -> None:
        self.prompt.focus()

    def on_collapsible_collapsed(self, event: Collapsible.Collapsed) -> None:
        self.prompt.focus()

    async def quit_app(self) -> None:
        """Stop any turn, close the store, exit (everything is already saved), saying how to
        come back to a session that holds something."""
        from rich.text import Text

        runtime = self.runtime
        hint = None
        if runtime is not None and runtime.session.head_id:
            hint = Text(f"Resume this session with: cairn --resume {runtime.session.id}")
        await self.close_runtime()
        self.exit(message=hint)

    async def on_unmount(self) -> None:
        # However the app ends (ctrl+q, /quit, a test leaving run_test), close the store:
        # its connection thread is not a daemon and would keep the process alive.
        await self.close_runtime()
        self._termination.remove()

    async def close_runtime(self) -> None:
        """Stop the open and the turn, close the runtime. The quit never waits on a failure:
        each step is bounded and whatever fails is logged (cairn.log with --debug), not raised."""
        for worker in [w for w in self.workers if w.group == "open"]:
            worker.cancel()
            await _bounded(worker.wait(), 12, "opening the session")
        runtime, self.runtime = self.runtime, None
        if runtime is None:
            return
        try:
            runtime.submit(Interrupt())
        except Exception:
            log.warning("interrupting the turn on quit failed", exc_info=True)
        for worker in [w for w in self.workers if w.group == "turn"]:
            await _bounded(worker.wait(), 3, "the turn")
        await _bounded(runtime.close(), 3, "closing the session")


async def _bounded(step: Awaitable[object], seconds: float, what: str) -> None:
    """Wait for one step of the quit: a cancelled worker is what was asked for; a timeout or
    an error is logged, and the quit goes on."""
    try:
        await asyncio.wait_for(step, seconds)
    except WorkerCancelled:
        pass
    except TimeoutError:
        log.warning("quit: %s did not end within %s s; quitting anyway", what, seconds)
    except Exception:
        log.warning("quit: %s failed; quitting anyway", what, exc_info=True)
