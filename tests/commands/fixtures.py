"""A Claude Code user's command files as they sit on disk (written here, not copied)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

# anthropics' style `/commit`: allowed-tools for git, the status inlined, the user's words.
COMMIT = """---
allowed-tools: Bash(git add:*), Bash(git status:*), Bash(git commit:*)
description: Create a git commit
argument-hint: [message]
---

## Context

- Current git status: !`git status --short`
- Current branch: !`git branch --show-current`

## Your task

Based on the above changes, create a single git commit. $ARGUMENTS
"""

COMPONENT = """---
description: Scaffold a React component
argument-hint: <Name> [folder]
---
Create the component $1 in src/components/$2, with a test beside it.
"""

REVIEW = """Review @src/x.py for bugs; say which line.
"""

TOUCH = """---
description: Make a marker file
---
Made: !`touch made.txt`
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def git_repo(workspace: Path) -> None:
    """A repository with one commit and a changed and a new file."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=workspace, check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "dev@example.com")
    git("config", "user.name", "Dev")
    (workspace / "app.py").write_text("print('hi')\n")
    git("add", "app.py")
    git("commit", "-q", "-m", "first")
    (workspace / "app.py").write_text("print('hello')\n")
    (workspace / "notes.txt").write_text("new\n")


def user_message(request: dict) -> str:
    """The last user message's text as the fake got it."""
    content = [m for m in request["messages"] if m["role"] == "user"][-1]["content"]
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content)
    return content


def tool_results(request: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}
