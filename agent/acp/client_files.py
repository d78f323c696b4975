"""`filesystem-read` through the editor, when it offers `fs/read_text_file`: a file open in
the editor is read as the user sees it, unsaved changes included.

The tool is cairn's own (same name, arguments, description, path confinement, approvals for
paths outside the workspace, output format); only the bytes of a text file come from the
editor. A directory, or a file the editor cannot give, is read from disk as always.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from agent.tools.base import ToolContext, ToolError, ToolResult, short_error
from agent.tools.fs_read import FsRead, ReadArgs, _check_range, _format_whole, _read_one
from agent.tools.registry import ToolRegistry
from agent.tools.workspace import confine

log = logging.getLogger("agent.acp")


class EditorRead(FsRead):
    def __init__(self, conn: Any, session_id: Callable[[], str]) -> None:
        self.conn = conn
        self.session_id = session_id

    async def _read(self, rp, start: int | None, end: int | None, ctx: ToolContext) -> str:
        if not rp.path.is_file():
            return await _on_disk(rp, start, end, ctx)
        _check_range(rp.display, start, end)
        try:
            response = await self.conn.read_text_file(session_id=self.session_id(), path=str(rp.path))
        except Exception as exc:  # the editor could not: the file on disk is the answer
            log.info("editor read of %s failed (%s); reading the disk", rp.display, exc)
            return await _on_disk(rp, start, end, ctx)
        return _format_whole(rp, response.content.encode("utf-8", "surrogatepass"), start, end, ctx.max_read_lines)

    async def run(self, args: ReadArgs, ctx: ToolContext) -> ToolResult:
        specs = [args.filePath] if isinstance(args.filePath, str) else list(args.filePath)
        if not specs:
            raise ToolError("filePath is an empty list; give at least one path")
        blocks: list[str] = []
        paths: list[str] = []
        failed = 0
        for spec in specs:
            raw, start, end = (spec, None, None) if isinstance(spec, str) else (spec.path, spec.startLine, spec.endLine)
            if start is None and end is None:
                start, end = args.startLine, args.endLine
            try:
                rp = await confine(raw, ctx, tool=self.name)
                blocks.append(await self._read(rp, start, end, ctx))
                paths.append(rp.display)
            except ToolError as exc:
                failed += 1
                blocks.append(f"Error: {short_error(str(exc))}")
        return ToolResult(content="\n\n".join(blocks), is_error=failed == len(specs), meta={"paths": paths})


async def _on_disk(rp, start, end, ctx: ToolContext) -> str:
    import asyncio

    return await asyncio.to_thread(_read_one, rp, start, end, ctx)


def with_editor_reads(registry: ToolRegistry, conn: Any, session_id: Callable[[], str]) -> ToolRegistry:
    """The same tools, `filesystem-read` reading through the editor."""
    return ToolRegistry([EditorRead(conn, session_id) if name == FsRead.name else registry.get(name)
                         for name in registry.names])
