"""Telling the user, away in another window, that cairn is waiting for them.

A long turn ends, or an approval waits: the terminal bell rings and the text goes out as
OSC 9 (iTerm2, WezTerm, Windows Terminal, kitty …) and OSC 777 (urxvt, foot, Ghostty, VTE
terminals), which a terminal that knows neither ignores. Only while the terminal is not
focused: Textual enables focus reporting and keeps `app_focus`; a terminal that never
reports focus cannot say where the user looks, so there it always rings. `[notify] enabled`
turns it off, `after_s` (10 s) is how long a turn must have taken. The text names the
project (its folder) and, for a command, the command itself, shortened: with several cairns
open, "needs your permission" alone does not say which one, or for what.

The bell goes through `App.bell()`. Textual has no public call for other escape sequences:
its own OSC 52 (`copy_to_clipboard`) and bell write through the app's driver, which queues
the text in order with the frames it draws, so that is what this does too (a write to the
terminal beside the driver could land inside a frame's escape sequence).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.fs.terminal_text import inert

if TYPE_CHECKING:
    from textual import events
    from textual.app import App

    from agent.settings.schema import Settings

    _AppBase = App[Any]  # for the checker only: the mixin's methods run on CairnApp
else:
    _AppBase = object

TITLE = "cairn"
DEFAULT_AFTER_S = 10.0  # NotifySettings' default, for before the settings are loaded
MAX_TEXT = 200
MAX_DETAIL = 60  # a command in the notification: enough to recognise it
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]+")


def sequences(text: str) -> str:
    """OSC 9 and OSC 777 for `text` (control characters out: they would end the sequence)."""
    clean = _CONTROL.sub(" ", text).strip()[:MAX_TEXT]
    return f"\x1b]9;{clean}\x07\x1b]777;notify;{TITLE};{clean}\x07"


def shortened(text: str) -> str:
    """`text`'s first line, inert, cut to MAX_DETAIL characters with "…"."""
    line = inert(" ".join(text.strip().split("\n", 1)[0].split()))
    more = "\n" in text.strip()
    if len(line) > MAX_DETAIL:
        return line[: MAX_DETAIL - 1] + "…"
    return line + " …" if more else line


class NotifyActions(_AppBase):
    """Mixed into CairnApp: the bell and desktop notifications."""

    focus_reported: bool = False  # the terminal said once whether it has focus
    notifications_sent: list[str]  # what was rung, newest last (tests read it)

    if TYPE_CHECKING:
        settings: Settings | None

        @property
        def workspace(self) -> Path: ...

    def on_app_focus(self, event: events.AppFocus) -> None:
        self.focus_reported = True

    def on_app_blur(self, event: events.AppBlur) -> None:
        self.focus_reported = True

    def _notify_settings(self) -> tuple[bool, float]:
        settings = getattr(self, "settings", None)
        if settings is None:
            return True, DEFAULT_AFTER_S
        return settings.notify.enabled, settings.notify.after_s

    def turn_took(self, seconds: float, interrupted: bool) -> bool:
        """A turn (or a `!command`) ended after `seconds`; an interrupted one needs no call:
        the user is right here. True when the user was told."""
        enabled, after = self._notify_settings()
        if interrupted or seconds < after:
            return False
        return self.ring(f"{self._who()} finished: your turn")

    def approval_waits(self, title: str, detail: str = "") -> bool:
        """`title` ("Run command", "Edit src/app.py"); `detail`: the command, when it is one."""
        what = f"{title}: {shortened(detail)}" if detail.strip() else title
        return self.ring(f"{self._who()} needs your permission: {what}")

    def _who(self) -> str:
        """`cairn (project)`: the workspace's folder name."""
        name = inert(self.workspace.name)
        return f"{TITLE} ({name})" if name else TITLE

    def ring(self, text: str) -> bool:
        """Bell and notification, unless turned off or the user is looking at the terminal."""
        enabled, _ = self._notify_settings()
        if not enabled or (self.focus_reported and self.app_focus):
            return False
        if not hasattr(self, "notifications_sent"):
            self.notifications_sent = []
        self.notifications_sent.append(text)
        self.bell()
        driver = self._driver
        if driver is not None and not self.is_headless:
            driver.write(sequences(text))
        return True
