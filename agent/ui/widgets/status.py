"""One-line status bar: activity (spinner, retry countdown, condensing) · the permission mode
when not the default · model · effort · context · cost · title.

While a turn runs a 10 Hz timer redraws it with `update(..., layout=False)`, which
repaints this line only instead of relaying out the chat.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from rich.cells import cell_len, set_cell_size
from rich.text import Text
from textual.widgets import Static

from agent.fs.terminal_text import inert
from agent.tools.modes import MODE_BADGES

if TYPE_CHECKING:
    from textual.timer import Timer

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
LOADING = "loading model library…"  # litellm's import, seconds on a small machine
LEVELS = 6  # the line's compactions (StatusBar._pieces), whole to tightest
MIN_TITLE_CELLS = 12  # less room than this: the title goes rather than "· pa…"
TITLE_GOES_LEVEL = 2  # from this compaction on, the line may go without its title


def human_tokens(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M".replace(".0M", "M")
    if n >= 1000:
        return f"{n / 1000:.1f}k".replace(".0k", "k")
    return str(n)


def short_reason(reason: str, limit: int = 48) -> str:
    """A retry's reason for the status line: the part before the provider's own words
    ("Rate limited by the provider: Rate limit reached…" → "Rate limited by the provider")."""
    head = reason.split(": ", 1)[0].strip()
    return head if len(head) <= limit else head[: limit - 1] + "…"


class StatusBar(Static):
    def __init__(self, *, model: str | None = None, resuming: bool = False, **kwargs) -> None:
        """`model` (a `--model` flag) and `resuming` (`--resume`/`--continue`): known before the
        settings and the session are, so the first frame says the right thing instead of
        "no model · new session" for the moment they load."""
        super().__init__("", markup=False, **kwargs)
        self.model: str | None = model
        self.model_known = False  # the settings are loaded: no model then means none configured
        self.resuming = resuming  # until the session is open: "resuming…" in place of its title
        self.effort: str | None = None  # the reasoning effort asked of the model (/effort), when set
        self.effort_sent = True  # False: the model does not reason, so the effort is not sent
        self.priced = True  # False: no price is known for the model (its cost is not $0)
        self.context_tokens: int | None = None
        self.context_window: int | None = None
        self.cost: float = 0.0
        self.cache_share: float | None = None  # the last answered request's prompt-cache hits
        self.title: str = ""
        self.yolo = False  # shown for as long as it holds: nothing asks before acting
        self.mode = "default"  # the permission mode (agent/tools/modes.py); shown unless the default
        self.loading = False  # the model library is still loading behind the first screen
        self.state: str = "starting…"  # shown when no turn runs
        self._turn_started: float | None = None
        self._retry_until: float | None = None
        self._retry_label = ""
        self._retry_reason = ""
        self._condensing: int | None = None  # tokens being condensed (a model call of seconds)
        self._frame = 0
        self._timer: Timer | None = None
        self._flash: str | None = None  # a short message (e.g. "Press Ctrl+C again to quit")
        self._flash_timer: Timer | None = None

    def on_mount(self) -> None:
        self._timer = self.set_interval(0.1, self._tick, pause=True)
        self.redraw()

    # -- state changes ------------------------------------------------------------------
    def set_info(
        self,
        *,
        model: str | None = None,
        title: str | None = None,
        window: int | None = None,
        yolo: bool | None = None,
        effort: str | None | bool = False,
        effort_sent: bool | None = None,
        priced: bool | None = None,
        mode: str | None = None,
    ) -> None:
        """Only what is given changes (`effort`: None clears it, False leaves it)."""
        if priced is not None:
            self.priced = priced
        if mode is not None:
            self.mode = mode
        if effort_sent is not None:
            self.effort_sent = effort_sent
        if effort is not False:
            self.effort = effort if isinstance(effort, str) and effort else None
        if yolo is not None:
            self.yolo = yolo
        if model is not None:
            self.model = model
        if title is not None:
            self.title = title
            self.resuming = False
        if window is not None:
            self.context_window = window
        self.redraw()

    def show_settings(self, model: str | None, yolo: bool, mode: str) -> None:
        """The settings are loaded: from now on an unset model is "no model"."""
        self.model_known = True
        self.set_info(model=model, yolo=yolo, mode=mode)

    def set_usage(
        self, context_tokens: int, context_window: int, cost: float, cache_share: float | None = None
    ) -> None:
        """`cache_share` None (a request not answered yet) keeps the last one shown."""
        self.context_tokens = context_tokens
        self.context_window = context_window
        self.cost = cost
        if cache_share is not None:
            self.cache_share = cache_share
        self.redraw()

    def set_context(self, context_tokens: int, context_window: int | None) -> None:
        """The next request's size as /context counts it (after a rewind, a resume, a turn)."""
        self.context_tokens = context_tokens
        if context_window:
            self.context_window = context_window
        self.redraw()

    def set_cost(self, cost: float) -> None:
        if cost != self.cost:
            self.cost = cost
            self.redraw()

    def reset_session(self) -> None:
        self.context_tokens = None
        self.cost = 0.0
        self.cache_share = None
        self.redraw()

    def flash(self, text: str, seconds: float) -> None:
        """Show `text` in place of the activity for `seconds`: in this line, a hint never
        covers the prompt the way a toast does."""
        self._flash = text
        if self._flash_timer is not None:
            self._flash_timer.stop()
        self._flash_timer = self.set_timer(seconds, self._end_flash)
        self.redraw()

    def _end_flash(self) -> None:
        self._flash = None
        self._flash_timer = None
        self.redraw()

    @property
    def flashed(self) -> str | None:
        return self._flash

    def set_loading(self, loading: bool) -> None:
        self.loading = loading
        self.redraw()

    def set_state(self, text: str) -> None:
        self.state = text
        self.redraw()

    def turn_started(self) -> None:
        self._turn_started = time.monotonic()
        self._retry_until = None
        if self._timer is not None:
            self._timer.resume()
        self.redraw()

    def turn_ended(self) -> None:
        self._turn_started = None
        self._retry_until = None
        self._condensing = None
        if self._timer is not None:
            self._timer.pause()
        self.redraw()

    def retrying(self, delay: float, attempt: int, max_attempts: int, reason: str = "") -> None:
        """A countdown to the next attempt; Esc cancels the wait (and the turn)."""
        self._retry_until = time.monotonic() + delay
        self._retry_label = f"(attempt {attempt}/{max_attempts})"
        self._retry_reason = short_reason(reason)
        self.redraw()

    def clear_retry(self) -> None:
        if self._retry_until is not None:
            self._retry_until = None
            self.redraw()

    def condensing(self, tokens: int) -> None:
        self._condensing = tokens
        self.redraw()

    def condensing_done(self) -> None:
        if self._condensing is not None:
            self._condensing = None
            self.redraw()

    @property
    def is_condensing(self) -> bool:
        return self._condensing is not None

    @property
    def running(self) -> bool:
        return self._turn_started is not None

    # -- drawing -------------------------------------------------------------------------
    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(SPINNER)
        self.redraw()

    def activity(self, short: bool = False) -> str:
        """What is going on; `short`: the form for a narrow line (the key's action and the
        retry's reason go first: Esc is the key either way)."""
        if self._flash is not None:
            return self._flash
        now = time.monotonic()
        if self._turn_started is None:
            if self._condensing is not None:
                return "Condensing context…"
            return self.state or (LOADING if self.loading else "")
        esc = "esc" if short else "esc to interrupt"
        if self._retry_until is not None and self._retry_until > now:
            left = math.ceil(self._retry_until - now)
            if short:
                return f"{SPINNER[self._frame]} Retry in {left}s {self._retry_label} · esc"
            why = f" · {self._retry_reason}" if self._retry_reason else ""
            return f"{SPINNER[self._frame]} Retrying in {left}s {self._retry_label} · esc to cancel{why}"
        elapsed = now - self._turn_started
        if self._condensing is not None:
            size = f" ({human_tokens(self._condensing)} tokens)" if self._condensing and not short else ""
            doing = "Condensing…" if short else "Condensing context…"
            return f"{SPINNER[self._frame]} {doing}{size} {elapsed:.0f}s · {esc}"
        doing = LOADING if self.loading and not short else "Working"
        return f"{SPINNER[self._frame]} {doing} {elapsed:.0f}s · {esc}"

    def _cost_text(self, compact: bool) -> str:
        if not self.priced and not self.cost:
            return "$?" if compact else "price unknown"  # not free: no price is known for the model
        shown = f"${self.cost:.4f}" if self.cost < 1 else f"${self.cost:.2f}"
        return shown if self.priced else shown + "+?"  # an earlier model's cost, then an unpriced one

    def _pieces(self, level: int) -> list[tuple[str, str]]:
        """The line but its title, as (text, style) pieces, at compaction `level` (0: all of
        it; each level drops or shortens what matters least while a turn runs: the cache share,
        the activity's words, the effort, the context's figures, the model's provider)."""
        out: list[tuple[str, str]] = []
        activity = self.activity(short=level >= 2)
        if activity:
            out += [(activity, "bold" if self.running else "dim"), ("  │  " if level < 2 else " │ ", "dim")]
        badge = MODE_BADGES.get(self.mode, "")
        if badge:
            out += [(badge, "bold magenta" if self.mode == "acceptEdits" else "bold cyan"), ("  ", "")]
        if self.yolo:
            out += [(" YOLO ", "bold reverse red"), (" ", "")]
        if self.model or self.model_known:
            model = inert(self.model or "no model")
            out.append((model.split("/", 1)[-1] if level >= 5 else model, "bold"))
        else:
            out.append(("…", "dim"))  # the settings are still loading
        if self.effort and level < 3:
            # A model that does not reason is sent no effort: said, not claimed (dim).
            out.append(
                (f" · effort {self.effort}", "") if self.effort_sent else (f" · effort {self.effort} (not sent)", "dim")
            )
        if self.context_window:
            used = self.context_tokens or 0
            pct = 100 * used / self.context_window
            size = f"{human_tokens(used)}/{human_tokens(self.context_window)} " if level < 4 else ""
            out.append((f" · {size}({pct:.0f}%)", ""))
        out.append((" · " + self._cost_text(compact=level >= 2), ""))
        if self.cache_share is not None and level < 1:
            out.append((f" · cache {self.cache_share:.0%}", ""))
        return out

    def render_text(self, width: int | None = None) -> Text:
        """The line, fitted to `width` cells (None: whole). Pieces that matter least go first
        (see `_pieces`); the title takes what room is left; anything cut ends with "…"."""
        title = " · " + (inert(self.title) or ("resuming…" if self.resuming else "new session"))
        for level in range(LEVELS):
            pieces = self._pieces(level)
            room = None if width is None else width - sum(cell_len(text) for text, _ in pieces)
            if room is None or room >= cell_len(title):
                return _joined([*pieces, (title, "italic")])
            if room >= MIN_TITLE_CELLS:
                return _joined([*pieces, (_cut(title, room), "italic")])
            if room >= 0 and level >= TITLE_GOES_LEVEL:
                return _joined(pieces)  # the title goes before the effort and the figures do
        line = _joined(self._pieces(LEVELS - 1))
        assert width is not None
        return Text(_cut(line.plain, width), style="bold" if self.running else "")

    def shown(self) -> Text:
        """The line as the bar draws it, at its width."""
        width = self.content_size.width
        return self.render_text(width if width > 0 else None)

    def on_resize(self) -> None:
        self.redraw()

    def redraw(self) -> None:
        self.update(self.shown(), layout=False)


def _joined(pieces: list[tuple[str, str]]) -> Text:
    out = Text(no_wrap=True)
    for text, style in pieces:
        out.append(text, style=style)
    return out


def _cut(text: str, width: int) -> str:
    """`text` in `width` cells, its end replaced by "…" when cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(0, width - 1)) + "…" if width > 0 else ""
