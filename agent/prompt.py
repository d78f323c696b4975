"""The system prompt: who cairn is, the environment, and the project's instructions."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

from agent.fs.repo_files import FileMissing, OutsideWorkspace, RepoFileError, read_repo_file

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

    Read through agent/fs/repo_files.py (the text goes into every request): a file that
    resolves outside the workspace (a symlink planted in a cloned repository,
    `AGENTS.md -> ~/.ssh/id_rsa`), a FIFO (it would block cairn), a folder or an unreadable
    file is not read. It counts as absent, and `notices` gets one line naming it. Symlinks
    that stay inside are followed (`CLAUDE.md -> AGENTS.md`); a dangling one is absent.
    Longer files are cut at MAX_INSTRUCTION_CHARS."""
    ws = Path(workspace).expanduser().resolve()
    for name in INSTRUCTION_FILES:
        try:
            # A UTF-8 character is at most 4 bytes: enough bytes for the characters kept.
            raw = read_repo_file(ws, name, max_bytes=MAX_INSTRUCTION_CHARS * 4, truncate=True, follow_inside=True)
        except FileMissing:
            continue
        except OutsideWorkspace as exc:
            if notices is not None:
                notices.append(
                    f"Not reading {name} as project instructions: it resolves to {exc.resolved}, "
                    f"outside the workspace {ws}"
                )
            continue
        except RepoFileError as exc:
            if notices is not None:
                notices.append(f"Not reading {name} as project instructions: it {exc.reason}")
            continue
        return name, raw.decode("utf-8", errors="replace")[:MAX_INSTRUCTION_CHARS]
    return None


def instruction_notices(workspace: Path) -> list[str]:
    """What `read_project_instructions` skipped, for a front end to show once at start."""
    notices: list[str] = []
    read_project_instructions(workspace, notices)
    return notices


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
