"""/export [md|jsonl] [FILE]: write the session to a file (default: the data folder's exports/,
never the repository; the notice says where)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent.runtime.ops import Export
from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host

FORMATS = ("md", "jsonl")


def parse_args(args: str, workspace: Path) -> tuple[str, Path | None]:
    """(format, path or None); a bare FILE picks the format from its suffix (.jsonl, else md);
    a relative FILE is relative to the workspace, not to where cairn was started."""
    words = args.split(maxsplit=1)
    fmt: str | None = None
    if words and words[0].lower() in FORMATS:
        fmt = words.pop(0).lower()
    raw = words[0].strip() if words else ""
    path: Path | None = None
    if raw:
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = workspace / path
        if fmt is None:
            fmt = "jsonl" if path.suffix.lower() == ".jsonl" else "md"
    return fmt or "md", path


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    fmt, path = parse_args(args, app.runtime.settings.workspace)
    written = await app.runtime.submit(Export(fmt, path))
    app.chat.add_notice(f"Exported to {written}")


COMMAND = Command("export", "write the session to a Markdown or JSONL file", run, usage="[md|jsonl] [FILE]")
