"""The folder-trust question: may this project's `.cairn/config.toml` widen what cairn does?

Asked on start, before the runtime reads the settings, when the workspace's project config
sets keys that need trust (agent/settings/trust.py) and the user has not trusted this content yet.
It shows those keys with their values (api keys masked) and what each would do. Keyboard
first, and safe against what was being typed when it appeared (it comes up at start, while
the user may be typing a prompt): "Not now" is highlighted, so Enter, `n` or Esc decline;
trusting takes a deliberate `t` (as every other question has a letter for its yes) or ↑ then
Enter. A `t` that comes in a burst of typing (less than TYPING_GAP_S after the key before it,
or after the question appeared) is taken for part of a prompt, not an answer. Declined, the
keys are ignored this time and cairn asks again next start. The app records the answer; this
screen only asks. Like the other questions it is docked at the bottom, full width
(docked.py); at start the chat above is empty, so it may take the screen.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual import events
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent.ui.error_text import readable
from agent.ui.screens.docked import DockedQuestion, PanelBox
from agent.ui.screens.fit import fit_scroll
from agent.ui.widgets.tool_render import inert

if TYPE_CHECKING:
    from agent.settings.config import LoadedConfig
    from agent.settings.trust import ProjectTrust
    from agent.ui.host import Host

TRUST_LABEL = "Trust this folder's .cairn/config.toml  (t)"
NOT_NOW_LABEL = "Not now  (n / esc)"
TYPING_GAP_S = 0.4  # keys closer together than this are typing (a prompt), not a deliberate answer
TYPING_HINT = "Typing? Press t again, on its own, to trust."
MAX_LIST_LINES = 16  # the keys and their effects; more scroll
MIN_LIST_LINES = 2


def items(pending: ProjectTrust) -> list[tuple[str, str]]:
    """(`key = value`, what it would do) for each key the file sets, inert."""
    from agent.settings.trust import EFFECTS

    return [(inert(f"{name} = {shown}"), inert(EFFECTS.get(name, ""))) for name, shown in pending.items]


class TrustScreen(DockedQuestion[bool]):
    AUTO_FOCUS = "#trust-choices"
    DEFAULT_CSS = """
    #trust-items { height: auto; }
    .trust-effect { padding: 0 0 0 4; color: $text-muted; }
    """
    BOX_ID = "trust-box"
    BINDINGS = [
        Binding("n", "choose(False)", "Not now"),
        Binding("escape", "choose(False)", "Not now"),
    ]

    def __init__(self, pending: ProjectTrust) -> None:
        super().__init__()
        self.pending = pending
        self.last_key_at = time.monotonic()  # the question's appearance counts as a key

    def on_key(self, event: events.Key) -> None:
        """`t` trusts, unless it came amid typing (see TYPING_GAP_S)."""
        now = time.monotonic()
        gap, self.last_key_at = now - self.last_key_at, now
        if event.key != "t":
            return
        event.stop()
        if gap >= TYPING_GAP_S:
            self.dismiss(True)
        else:
            self.query_one("#trust-hint", Static).update(TYPING_HINT)

    def compose(self):
        p = self.pending
        with PanelBox(id="trust-box"):
            yield Static("Trust this folder's project config?", markup=False, id="trust-title")
            yield Static(inert(str(p.config)), markup=False, id="trust-path")
            yield Static(
                "It sets what only a trusted folder may: what cairn may do without asking, "
                "or where your conversation and keys go.",
                markup=False,
                id="trust-about",
            )
            # The choices come before the list of keys, so a short terminal cuts the list
            # (which scrolls), never the choices.
            yield OptionList(Option(TRUST_LABEL, id="trust"), Option(NOT_NOW_LABEL, id="not-now"), id="trust-choices")
            yield Static(
                "t trust · n / Esc / Enter not now. Not now: these are ignored, "
                "everything else in the file applies. A changed file asks again.",
                markup=False,
                id="trust-hint",
            )
            with VerticalScroll(id="trust-scroll"), Vertical(id="trust-items"):
                for line, effect in items(p):
                    yield Static(line, markup=False, classes="trust-key")
                    if effect:  # wrapped under itself, not back at the key's column
                        yield Static(effect, markup=False, classes="trust-effect")

    def on_mount(self) -> None:
        self.query_one("#trust-choices", OptionList).highlighted = 1  # Enter alone does not trust
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """The list of keys scrolls and gets what the terminal leaves (at 80×24 the whole
        question is taller than the screen)."""
        fit_scroll(
            self,
            self.query_one("#trust-box"),
            self.query_one("#trust-scroll"),
            max_lines=MAX_LIST_LINES,
            min_lines=MIN_LIST_LINES,
        )

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_id == "trust")

    def action_choose(self, trusted: bool) -> None:
        self.dismiss(trusted)


async def ask_trust(app: Host, pending: ProjectTrust) -> bool:
    """Push the question and wait for the answer; True means trust."""
    future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()

    def done(answer: bool | None) -> None:
        if not future.done():
            future.set_result(bool(answer))

    screen = TrustScreen(pending)
    app.push_screen(screen, done)
    try:
        return await future
    finally:
        if not (future.done() and not future.cancelled()) and app.screen is screen:
            screen.dismiss(False)  # the app is closing while asking


async def settle(app: Host) -> None:
    """Ask about `app.project_trust`. Trusted: record it and load the settings again
    (same workspace and flags), now with those keys; not now: the notice goes in the chat."""
    pending = app.project_trust
    assert app.settings is not None and pending is not None  # the app asks only then
    app.status.set_state("waiting for the trust question…")
    if not await ask_trust(app, pending):
        app.chat.add_notice(pending.notice, kind="warning")
        app.project_trust = None  # answered: a second open (/model) does not ask again
        app.status.set_state("starting…")
        return
    from agent.process.background import in_daemon_thread

    loaded: list[LoadedConfig] = []

    def trust_and_reload() -> None:
        from agent.settings import trust
        from agent.settings.config import load_config

        trust.trust(pending.folder, pending.sha256)  # the bytes whose keys were shown
        loaded.append(load_config(pending.folder, flags=pending.flags))

    try:
        await in_daemon_thread(trust_and_reload)
    except Exception as exc:
        app.chat.add_error(f"Could not record the trust: {readable(exc)}")
        app.chat.add_notice(pending.notice, kind="warning")
    else:
        config = loaded[0]
        app.settings, app.config_warnings = config.settings, config.warnings
        app.status.set_info(model=config.settings.model)
        again = config.project_trust
        if again is not None:  # the file changed while the question was open
            app.chat.add_notice(again.notice, kind="warning")
        else:
            app.chat.add_notice(f"Trusted {pending.config} as it is now.", kind="info")
    app.project_trust = None  # answered (or shown): a second open (/model) does not ask
    app.status.set_state("starting…")
