"""What a command's body pulls in before it is sent: `` !`cmd` `` output and `@file` text.

Claude Code runs each `` !`git status` `` before the prompt goes and puts its output where it
stood, and puts the text of each `@path` the body names beside it. cairn does both, but the
command runs through whatever `run` the caller gives: the runtime gives the agent's own
`terminal-execute` with its permissions and sandbox (agent/runtime/command_turn.py), so a
command that only reads runs unasked, any other asks (and is refused where nobody can be
asked), exactly as the model's call would be. A failure is put in as its text.

`@path` is read here, not left to the prompt's `@` attachments (agent/turn/attachments.py):
those skip a command's block on purpose (a repository's text must not pick files for the
user). A command's `@path` is read only inside the workspace, through agent/fs/repo_files.py
(no symlink out, no FIFO, capped); the user's own command may also name a file of theirs
(`~/notes.md`, an absolute path). A missing name is prose (`@alice`), a binary file or an
image is not inlined, and each of those is said in a notice.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable
from pathlib import Path

from agent.fs.repo_files import FileMissing, RepoFileError, read_own_file, read_repo_file
from agent.images import IMAGE_SUFFIXES, at_mentions
from agent.tools.workspace import BINARY_SNIFF_BYTES, looks_binary

Runner = Callable[[str], Awaitable[str]]  # a command → its output (or why it did not run), as text
BANG = re.compile(r"(?:(?<=\s)|^)!`([^`\n]+)`", re.M)
MAX_FILE_CHARS = 100_000
MAX_FILES = 20


async def run_bangs(body: str, run: Runner) -> str:
    """The body with each `` !`cmd` `` replaced by its output, run one after another."""
    parts: list[str] = []
    last = 0
    for match in BANG.finditer(body):
        parts.append(body[last : match.start()])
        output = (await run(match.group(1).strip())).rstrip("\n")
        parts.append(output)
        last = match.end()
    parts.append(body[last:])
    return "".join(parts)


def mentioned(body: str) -> list[str]:
    """The `@path`s the body names, outside its `` !`cmd` `` spans."""
    return at_mentions(BANG.sub(lambda m: " " * len(m.group(0)), body))


def _read(raw: str, workspace: Path, own: bool) -> bytes:
    """The file's bytes: inside the workspace through repo_files; the user's own elsewhere."""
    path = Path(os.path.expanduser(raw)) if own else Path(raw)
    root = workspace.resolve()
    target = path if path.is_absolute() else root / path
    if target.resolve().is_relative_to(root) or not own:
        return read_repo_file(root, target, max_bytes=MAX_FILE_CHARS * 4, truncate=True, follow_inside=True)
    return read_own_file(target, max_bytes=MAX_FILE_CHARS * 4, truncate=True)


def inline_files(body: str, workspace: Path, *, own: bool, notices: list[str]) -> str:
    """`<file path="…">` blocks for the body's `@path`s, to follow the body ("" for none)."""
    blocks: list[str] = []
    for raw in mentioned(body)[:MAX_FILES]:
        if raw.lower().endswith(IMAGE_SUFFIXES):
            notices.append(f"@{raw}: an image in a command is not attached.")
            continue
        try:
            data = _read(raw, workspace, own)
        except FileMissing:
            if "/" in raw or "." in raw:
                notices.append(f"@{raw}: no such file; not included.")
            continue
        except RepoFileError as exc:
            notices.append(f"@{raw}: not included: {exc.path} {exc.reason}.")
            continue
        except OSError as exc:
            notices.append(f"@{raw}: not included: {exc.strerror or exc}.")
            continue
        if looks_binary(data[:BINARY_SNIFF_BYTES]):
            notices.append(f"@{raw}: a binary file; not included.")
            continue
        text = data.decode("utf-8", errors="replace")
        if len(text) > MAX_FILE_CHARS:
            text = text[:MAX_FILE_CHARS] + f"\n[… cut at {MAX_FILE_CHARS:,} characters]"
        blocks.append(f'<file path="{raw}">\n{text.rstrip(chr(10))}\n</file>')
    return "\n\n".join(blocks)
