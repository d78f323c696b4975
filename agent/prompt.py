"""The system prompt: who cairn is, the environment, and the project's instructions."""

from __future__ import annotations

import platform
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


def read_project_instructions(workspace: Path) -> tuple[str, str] | None:
    for name in INSTRUCTION_FILES:
        path = workspace / name
        try:
            if path.is_file():
                text = path.read_text(encoding="utf-8", errors="replace")
                return name, text[:MAX_INSTRUCTION_CHARS]
        except OSError:
            continue
    return None


def build_system_prompt(workspace: Path, *, today: date | None = None) -> str:
    parts = [BASE_PROMPT]
    parts.append(
        "Environment:\n"
        f"- Working directory: {workspace}\n"
        f"- Platform: {platform.system()} {platform.release()}\n"
        f"- Date: {(today or date.today()).isoformat()}\n"
    )
    found = read_project_instructions(workspace)
    if found:
        name, text = found
        parts.append(f"Project instructions from {name} (follow them):\n<{name}>\n{text}\n</{name}>\n")
    return "\n".join(parts)
