"""`@path` in a prompt attaches the file's text, as the read the model would have made.

Right after the prompt, cairn stores what the model does with a file the user points at: an
assistant message calling `filesystem-read` for it and the tool's result, run through the
registry like any call (the read tool's bounds: 2,000 lines, 100,000 characters; PreToolUse
hooks see it). So the file reaches the model exactly as a read, and the context engine
treats it as one: seed 000's rule (agent/context/passes/file_reads.py) turns it into a
placeholder once newer reads of the file follow, truncation folds it like any read, and a
resumed chat shows it as a read. The alternative, the text inside the user message, would
sit in the prompt for good, outside every rule that manages reads.

Only files inside the workspace (the user's text may name any path, but a read outside would
ask; an image is agent/images.py's); binary files are skipped with a notice (a PDF is not:
the read sends its pages, agent/tools/pdf_read.py); a name that
is not a file (`@alice`, a decorator) is prose. A Claude model that thinks needs its signed
thinking before a tool call it continues from, which this call cannot have: that one request
goes without thinking (agent/llm/reasoning.py `unsigned_tool_loop`).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path

from agent.context.rendered import SessionImages
from agent.context.tokens import TokenCounter
from agent.documents import is_pdf
from agent.images import IMAGE_SUFFIXES, at_mentions
from agent.session.models import Message, ToolCall, new_id
from agent.tools.base import ToolContext
from agent.tools.registry import ToolRegistry
from agent.tools.workspace import BINARY_SNIFF_BYTES, looks_binary
from agent.turn.events import Event, Notice, ToolFinished, ToolStarted
from agent.turn.writer import SessionWriter

READ_TOOL = "filesystem-read"
ATTACHED_META = "attached"  # on the call and its result: the user's `@path`, not the model's choice
MAX_ATTACHED = 20  # files per prompt


def attachable(text: str, workspace: Path) -> tuple[list[str], list[tuple[str, str]]]:
    """The workspace-relative paths of the files and folders `text` attaches with `@path`,
    and notices `(sentence, kind)` for those it names but cannot attach. Reads the disk."""
    root = workspace.resolve()
    paths: list[str] = []
    notices: list[tuple[str, str]] = []
    for raw in at_mentions(text):
        if raw.lower().endswith(IMAGE_SUFFIXES):
            continue  # an image: attached as one (agent/images.py)
        candidate = Path(os.path.expanduser(raw))
        target = (candidate if candidate.is_absolute() else root / candidate).resolve()
        if not target.exists():
            if "/" in raw or "." in raw:
                notices.append((f"@{raw}: no such file in the workspace; not attached.", "warning"))
            continue
        if not target.is_relative_to(root):
            notices.append((f"@{raw}: outside the workspace; not attached (ask the model to read it).", "warning"))
            continue
        rel = target.relative_to(root).as_posix() or "."
        if target.is_file() and _binary(target):
            notices.append((f"@{raw}: a binary file; not attached.", "warning"))
            continue
        if rel in paths:
            continue
        if len(paths) >= MAX_ATTACHED:
            notices.append((f"@{raw}: more than {MAX_ATTACHED} files in one prompt; not attached.", "warning"))
            continue
        paths.append(rel)
    return paths, notices


def _binary(path: Path) -> bool:
    """Binary and not a PDF (a PDF is read as one: agent/tools/pdf_read.py)."""
    try:
        with open(path, "rb") as handle:
            sample = handle.read(BINARY_SNIFF_BYTES)
            return looks_binary(sample) and not is_pdf(sample)
    except OSError:
        return False  # the read tool says what is wrong with it


async def attach_mentioned(
    text: str,
    *,
    workspace: Path,
    registry: ToolRegistry,
    ctx: ToolContext,
    counter: TokenCounter,
    images: SessionImages,
    writer: SessionWriter,
    emit: Callable[[Event], None],
) -> None:
    """Store the reads `text`'s `@path`s ask for, after its user message: through the agent's
    tools (`registry`, `ctx`) and `writer`, each result's tokens remembered by `counter`, the
    documents a result attaches (a PDF's) stored and held by `images` first."""
    paths, notices = await asyncio.to_thread(attachable, text, workspace)
    for sentence, kind in notices:
        emit(Notice(message=sentence, kind=kind))
    if not paths:
        return
    batch = new_id()[:8]
    calls = [
        ToolCall(id=f"attach_{batch}_{n}", name=READ_TOOL, arguments=json.dumps({"filePath": path}))
        for n, path in enumerate(paths, start=1)
    ]
    await writer.append(Message(role="assistant", tool_calls=calls, meta={ATTACHED_META: True}))
    for call in calls:
        emit(ToolStarted(call=call))
        result = await registry.execute(call, ctx)
        message = Message(
            role="tool",
            tool_call_id=call.id,
            tool_name=call.name,
            content=result.content,
            status="error" if result.is_error else "ok",
            meta={**result.meta, ATTACHED_META: True},
        )
        counter.remember_count(message)
        await writer.persist(images.keep(result.blobs, writer.store.put_blobs))  # before it is named
        await writer.append(message)
        emit(ToolFinished(call=call, message=message))
