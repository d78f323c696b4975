"""The system prompt: who cairn is, the environment, and the instructions (agent/instructions/)."""

from __future__ import annotations

import platform
from datetime import date
from pathlib import Path

from agent.instructions import Instructions, load_instructions, render

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


def instruction_notices(workspace: Path) -> list[str]:
    """What loading the instructions skipped or cut, for a front end to show once at start."""
    return load_instructions(workspace).notices


def build_system_prompt(
    workspace: Path,
    *,
    today: date | None = None,
    notices: list[str] | None = None,
    instructions: Instructions | None = None,
) -> str:
    """`notices`: gets a line for each instruction file skipped or cut (agent/instructions/);
    `instructions`: what was loaded already (`/context` shows the same files), else loaded here."""
    parts = [BASE_PROMPT]
    parts.append(
        "Environment:\n"
        f"- Working directory: {workspace}\n"
        f"- Platform: {platform.system()} {platform.release()}\n"
        f"- Date: {(today or date.today()).isoformat()}\n"
    )
    loaded = instructions if instructions is not None else load_instructions(workspace)
    if notices is not None:
        notices.extend(loaded.notices)
    parts.extend(render(found) for found in loaded.files)
    return "\n".join(parts)
