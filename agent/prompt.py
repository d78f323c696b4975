"""The system prompt: who cairn is, the environment, and the project's instructions."""

from __future__ import annotations

import os
import platform
import stat
from datetime import date
from pathlib import Path

# Project instructions, first found wins (SPEC §9).
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTION_CHARS = 40_000

BASE_PROMPT = """\
You are cairn, a coding agent working in the user's terminal, inside their project folder.
You help with software engineering tasks: reading and changing code, running commands,
debugging, explaining. Work like a careful senior engineer:
- Read the relevant files before you change them; keep changes minimal and in the
  project's style. Prefer editing existing files to creating new ones.
- Use the tools: filesystem-read to look at files and folders, filesystem-edit to change
  a file (the search text must match exactly once unless replaceAll is set),
  filesystem-create for new files, terminal-execute to run commands (tests, builds, git,
  search with rg/grep). Commands run non-interactively with a timeout.
- When a tool returns an error, read it and adapt instead of repeating the same call.
- Be concise. Answer in Markdown. Do not invent file contents or command output.
"""


def read_project_instructions(workspace: Path, notices: list[str] | None = None) -> tuple[str, str] | None:
    """(name, text) of the first instruction file found in the workspace, or None.

    A file that resolves outside the workspace (a symlink planted in a cloned repository,
    `AGENTS.md -> ~/.ssh/id_rsa`) is not read: it would go into every request. It counts as
    absent, and `notices` gets one line naming it. Symlinks that stay inside are followed
    (`CLAUDE.md -> AGENTS.md`). The file is opened through the resolved path without
    following symlinks, so it cannot be swapped between the check and the read."""
    ws = Path(workspace).expanduser().resolve()
    for name in INSTRUCTION_FILES:
        path = ws / name
        if not os.path.lexists(path):
            continue
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError):  # dangling symlink, loop
            continue
        if real != ws and ws not in real.parents:
            if notices is not None:
                notices.append(f"Not reading {name} as project instructions: it resolves to {real}, "
                               f"outside the workspace {ws}")
            continue
        text = _read_inside(ws, real.relative_to(ws).parts)
        if text is not None:
            return name, text
    return None


def instruction_notices(workspace: Path) -> list[str]:
    """What `read_project_instructions` skipped, for a front end to show once at start."""
    notices: list[str] = []
    read_project_instructions(workspace, notices)
    return notices


def _read_inside(ws: Path, parts: tuple[str, ...]) -> str | None:
    """A regular file under `ws`, each component opened with O_NOFOLLOW; None if it is not one."""
    if not parts:
        return None
    nofollow, cloexec = getattr(os, "O_NOFOLLOW", 0), getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(ws, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | cloexec)
    except OSError:
        return None
    try:
        for part in parts[:-1]:
            child = os.open(part, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow | cloexec, dir_fd=fd)
            os.close(fd)
            fd = child
        file_fd = os.open(parts[-1], os.O_RDONLY | os.O_NONBLOCK | nofollow | cloexec, dir_fd=fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    with os.fdopen(file_fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read(MAX_INSTRUCTION_CHARS * 4)  # a UTF-8 character is at most 4 bytes
    return data.decode("utf-8", errors="replace")[:MAX_INSTRUCTION_CHARS]


def build_system_prompt(workspace: Path, *, today: date | None = None, notices: list[str] | None = None) -> str:
    """`notices`: gets a line for each instruction file skipped (see read_project_instructions)."""
    parts = [BASE_PROMPT]
    parts.append(
        "Environment:\n"
        f"- Working directory: {workspace}\n"
        f"- Platform: {platform.system()} {platform.release()}\n"
        f"- Date: {(today or date.today()).isoformat()}\n"
    )
    found = read_project_instructions(workspace, notices)
    if found:
        name, text = found
        parts.append(f"Project instructions from {name} (follow them):\n<{name}>\n{text}\n</{name}>\n")
    return "\n".join(parts)
