"""The first screen's header: where cairn works, with which model, in which mode, and the
few keys worth knowing before the first prompt.

It sits above the chat only while the conversation is empty (the chat's space is worth
more once there is something in it); the mode stays in the status bar after that, and
yolo loudly, because "runs everything without asking" must never scroll out of sight.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import Static

KEY_HINTS = (("Ctrl+J", "new line"), ("Esc Esc", "rewind"), ("/help", "commands and keys"))
YOLO_MODE = "YOLO: commands and edits run without asking"
ASK_MODE = "asks before commands and edits"


def short_folder(path: Path) -> str:
    """The folder with the home directory as "~" (what a user recognises at a glance)."""
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


def header_text(folder: Path, model: str | None, yolo: bool) -> Text:
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append("cairn", style="bold")
    out.append("  " + short_folder(folder))
    out.append("  ·  ", style="dim")
    out.append(model or "no model", style="bold")
    out.append("  ·  ", style="dim")
    if yolo:
        out.append(YOLO_MODE, style="bold red")
    else:
        out.append(ASK_MODE, style="dim")
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

    def show(self, folder: Path, model: str | None, yolo: bool) -> None:
        self.update(header_text(folder, model, yolo))
