"""`# note` (quick memory) and /memory: the instruction files as Claude Code users keep them.

`# always run ruff before committing` typed at the start of the prompt is not sent to the
model: the line goes into the project's memory file, the one at the workspace root a session
here loads (agent/instructions/loading.py): CLAUDE.md when there is one, else AGENTS.md when
there is one, else a new CLAUDE.md for a Claude Code user (a `~/.claude` folder), a new
AGENTS.md otherwise. Claude Code asks project or user memory; cairn writes the project's and
says where it went and how to put it in the user's instead (/memory opens that file). A
prompt starting with `#` and no space (`#123 fails`) stays a prompt.

/memory lists the files a session here loads, numbered, with the user's and the project's
memory files even before they exist; `/memory N` opens one in $VISUAL or $EDITOR, the app
suspended meanwhile (no editor set: it says the paths). The files are read when a session starts
(cairn's start, `/clear`: the system prompt is built then; a session keeps its prompt so its
cached prefix holds), which the notices say.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from agent.ui.commands.command import Command
from agent.ui.commands.listing import short_path, show_list

if TYPE_CHECKING:
    from agent.ui.host import Host

MEMORY_PREFIX = "# "  # Claude Code's: `#` then the note; `#word` is no memory
PROJECT_FILES = ("CLAUDE.md", "AGENTS.md")  # at the workspace root, the first that exists


def is_memory(text: str) -> bool:
    return text.startswith(MEMORY_PREFIX) and bool(text[len(MEMORY_PREFIX) :].strip())


def project_memory(workspace: Path) -> Path:
    """The project's memory file: the root's CLAUDE.md or AGENTS.md, else the one to create."""
    from agent.paths import claude_dir

    for name in PROJECT_FILES:
        if (workspace / name).is_file():
            return workspace / name
    return workspace / ("CLAUDE.md" if claude_dir().is_dir() else "AGENTS.md")


def user_memory() -> Path:
    from agent.paths import claude_dir

    return claude_dir() / "CLAUDE.md"


def append_line(path: Path, note: str) -> None:
    """`- note` at the end of `path` (created when missing), on a line of its own."""
    before = path.read_text(encoding="utf-8") if path.is_file() else ""
    gap = "" if not before or before.endswith("\n") else "\n"
    with path.open("a", encoding="utf-8") as out:
        out.write(f"{gap}- {note}\n")


def remember(app: Host, text: str) -> None:
    """`# note`: into the project's memory file, and a notice saying where (never the model)."""
    note = " ".join(text[len(MEMORY_PREFIX) :].split())
    path = project_memory(app.workspace)
    try:
        append_line(path, note)
    except OSError as exc:
        app.chat.add_error(f"Could not add the note to {short_path(path, app.workspace)}: {exc.strerror or exc}")
        return
    where, user = short_path(path, app.workspace), short_path(user_memory(), app.workspace)
    app.chat.add_notice(
        f"Remembered in {where} (this project's memory; new sessions read it: /clear): {note}\n"
        f"For every project, put it in {user} instead: /memory opens it."
    )


def memory_files(workspace: Path) -> list[tuple[Path, str]]:
    """The files a session here loads (agent/instructions/), then the user's and the project's
    memory files when not among them (not there yet), each with what it is."""
    from agent.instructions import load_instructions

    files: list[tuple[Path, str]] = []
    for found in load_instructions(workspace).files:
        shown = found.shown
        path = Path(os.path.expanduser(shown)) if shown.startswith("~") else workspace / shown
        files.append((path, found.description))
    known = {os.path.realpath(p) for p, _ in files}
    for path, what in ((user_memory(), "your memory for every project"), (project_memory(workspace), "this project's")):
        if os.path.realpath(path) not in known:
            files.append((path, f"{what}; not there yet"))
    return files


def editor() -> list[str] | None:
    chosen = os.environ.get("VISUAL") or os.environ.get("EDITOR")
    return shlex.split(chosen) if chosen and chosen.strip() else None


async def run(app: Host, args: str) -> None:
    files = memory_files(app.workspace)
    wanted = args.strip()
    if wanted:
        if not wanted.isdigit() or not 1 <= int(wanted) <= len(files):
            app.chat.add_notice(f"No memory file {wanted!r}: /memory lists them, numbered.", kind="warning")
            return
        _open(app, files[int(wanted) - 1][0])
        return
    lines = ["Memory files (instructions every session here starts with):"]
    lines += [f"  {i}. {short_path(path, app.workspace)} ({what})" for i, (path, what) in enumerate(files, start=1)]
    lines.append("")
    lines.append(f"`# note` adds a line to {short_path(project_memory(app.workspace), app.workspace)}.")
    lines.append("/memory N opens one in your editor." if editor() else "Set $EDITOR to open one from /memory N.")
    show_list(app, "\n".join(lines))


def _open(app: Host, path: Path) -> None:
    command = editor()
    shown = short_path(path, app.workspace)
    if command is None:
        app.chat.add_notice(f"No editor set ($VISUAL or $EDITOR): open {path} yourself.", kind="warning")
        return
    from textual.app import SuspendNotSupported

    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        try:
            with app.suspend():
                done = subprocess.run([*command, str(path)], check=False)  # noqa: S603 - the user's own editor
        except SuspendNotSupported:  # no terminal to hand over (a test's headless app): run it as it is
            done = subprocess.run([*command, str(path)], check=False, capture_output=True)  # noqa: S603
    except OSError as exc:
        app.chat.add_error(f"Could not start {command[0]}: {exc.strerror or exc}")
        return
    if done.returncode != 0:
        app.chat.add_notice(f"{command[0]} exited with {done.returncode} ({shown}).", kind="warning")
        return
    app.chat.add_notice(f"Edited {shown}: new sessions read it (/clear starts one).")


COMMAND = Command("memory", "the instruction files cairn loads; /memory N opens one in $EDITOR", run, usage="[N]")
