"""The first screen's header: where cairn works, with which model, in which mode, and the
few keys worth knowing before the first prompt.

It sits above the chat only while the conversation is empty (the chat's space is worth
more once there is something in it); the mode stays in the status bar after that, and
yolo loudly, because "runs everything without asking" must never scroll out of sight.
The mode it names is the one in force: `--permission-mode plan` is plan mode here as in the
status bar, and Shift+Tab changes both (issue 46: the header said "asks first" in plan mode).
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

from agent.fs.terminal_text import inert

KEY_HINTS = (("Ctrl+J", "new line"), ("Esc Esc", "rewind"), ("/help", "commands and keys"))
YOLO_MODE = "YOLO: commands and edits run without asking"
ASK_MODE = "asks before commands and edits"
# Where the whole line does not fit (80 columns, a long model name): the same, shorter. The
# line used to wrap mid-phrase ("asks before commands and / edits").
YOLO_MODE_SHORT = "YOLO: runs unasked"
ASK_MODE_SHORT = "asks first"
# The other permission modes (agent/tools/modes.py), long and short; the short ones are the
# status bar's badges, so the two agree.
MODE_WORDS = {
    "acceptEdits": ("edits run unasked, commands ask", "⏵⏵ accept edits"),
    "plan": ("plan mode: read-only until you approve a plan", "⏸ plan mode"),
}
SEPARATOR = "  ·  "
MIN_FOLDER = 12  # the folder's last characters kept when the line is short of room


def short_folder(path: Path) -> str:
    """The folder with the home directory as "~" (what a user recognises at a glance)."""
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


def mode_words(yolo: bool, mode: str) -> tuple[str, str]:
    """What the header says of the mode, long and short (yolo first: it overrides them all)."""
    if yolo:
        return YOLO_MODE, YOLO_MODE_SHORT
    return MODE_WORDS.get(mode, (ASK_MODE, ASK_MODE_SHORT))


def _first_line(folder: Path, model: str | None, yolo: bool, width: int | None, mode: str = "default") -> Text:
    """cairn, the folder, the model, the mode: shortened to `width` (the folder from its left,
    then the mode's shorter words, then the end cut with "…"), never wrapped."""
    full, name = inert(short_folder(folder)), inert(model or "no model")
    place = full
    long_mode, short_mode = mode_words(yolo, mode)
    mode = long_mode
    fixed = len("cairn  ") + 2 * len(SEPARATOR) + len(name)
    if width is not None:
        # The folder is cut first (from its left), then the mode said shorter; yolo's warning
        # is said in full, the folder giving way to it entirely.
        keep = 1 if yolo else MIN_FOLDER
        for mode in (long_mode,) if yolo else (long_mode, short_mode):
            room = width - fixed - len(mode)
            place = full if len(full) <= room else "…" + full[-max(room - 1, keep) :]
            if len(place) <= room:
                break
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("cairn", style="bold")
    out.append("  " + place)
    out.append(SEPARATOR, style="dim")
    out.append(name, style="bold")
    out.append(SEPARATOR, style="dim")
    out.append(mode, style="bold red" if yolo else "dim")
    if width is not None and out.cell_len > width:
        out.truncate(width, overflow="ellipsis")
    return out


def header_text(folder: Path, model: str | None, yolo: bool, width: int | None = None, mode: str = "default") -> Text:
    out = _first_line(folder, model, yolo, width, mode)
    out.append("\n")
    for i, (key, what) in enumerate(KEY_HINTS):
        if i:
            out.append(" · ", style="dim")
        out.append(key, style="bold dim")
        out.append(f" {what}", style="dim")
    return out


class SessionHeader(Static):
    def __init__(self, **kwargs) -> None:
        super().__init__("", markup=False, **kwargs)
        self._shown: tuple[Path, str | None, bool] | None = None
        self.mode = "default"  # the permission mode in force (agent/tools/modes.py)

    def show(self, folder: Path, model: str | None, yolo: bool, mode: str = "default") -> None:
        self._shown = (folder, model, yolo)
        self.set_mode(mode)

    def set_mode(self, mode: str) -> None:
        self.mode = mode
        self._draw()

    def on_resize(self) -> None:
        self._draw()

    def _draw(self) -> None:
        if self._shown is not None:
            width = self.content_size.width or (self.app.size.width - self.styles.gutter.width)
            self.update(header_text(*self._shown, width=max(20, width), mode=self.mode))
