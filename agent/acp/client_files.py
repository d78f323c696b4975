"""`filesystem-read` through the editor, when it offers `fs/read_text_file`: a file open in
the editor is read as the user sees it, unsaved changes included.

The tool is cairn's own (same name, arguments, description, path confinement, approvals for
paths outside the workspace, output format); only the bytes of a text file come from the
editor. A directory, or a file the editor cannot give, is read from disk as always.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from agent.tools.base import ToolContext
from agent.tools.fs_read import FsRead, check_range, format_whole
from agent.tools.registry import ToolRegistry

log = logging.getLogger("agent.acp")


class EditorRead(FsRead):
    def __init__(self, conn: Any, session_id: Callable[[], str]) -> None:
        self.conn = conn
        self.session_id = session_id

    async def read_one(self, rp, start: int | None, end: int | None, ctx: ToolContext) -> str:
        if not rp.path.is_file():
            return await super().read_one(rp, start, end, ctx)
        check_range(rp.display, start, end)
        try:
            response = await self.conn.read_text_file(session_id=self.session_id(), path=str(rp.path))
        except Exception as exc:  # the editor could not: the file on disk is the answer
            log.info("editor read of %s failed (%s); reading the disk", rp.display, exc)
            return await super().read_one(rp, start, end, ctx)
        return format_whole(rp, response.content.encode("utf-8", "surrogatepass"), start, end, ctx.max_read_lines)


def with_editor_reads(registry: ToolRegistry, conn: Any, session_id: Callable[[], str]) -> ToolRegistry:
    """The same tools, `filesystem-read` reading through the editor."""
    return ToolRegistry(
        [
            EditorRead(conn, session_id) if name == FsRead.name else tool
            for name in registry.names
            if (tool := registry.get(name)) is not None  # always: the name is the registry's
        ]
    )
