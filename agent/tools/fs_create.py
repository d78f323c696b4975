"""`filesystem-create`: write a new file (folders included); overwriting must be explicit.

Refusing to overwrite by default stops the model from clobbering a file it never read;
edits of existing files belong to `filesystem-edit`.
"""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from agent.tools.base import FileEdit, Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.fs_edit import make_diff
from agent.tools.lsp_tool import edit_diagnostics, with_diagnostics
from agent.tools.permissions import ApprovalRequest
from agent.tools.workspace import ResolvedPath, TextFile, confine, read_text, write_file


class CreateArgs(ToolArgs):
    filePath: str = Field(
        description="Path of the file to create, relative to the workspace. Missing folders are created."
    )
    content: str = Field(description="The complete content of the file.")
    overwrite: bool = Field(
        default=False, description="Replace the file if it already exists. Without it an existing file is refused."
    )


def count_lines(text: str) -> int:
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _existing(rp: ResolvedPath, overwrite: bool, max_bytes: int) -> TextFile | None:
    if not os.path.lexists(rp.path):
        return None
    if rp.path.is_dir():
        raise ToolError(f"{rp.display} is a directory")
    if not overwrite:
        raise ToolError(
            f"{rp.display} already exists. Use filesystem-edit to change it, or set overwrite=true "
            "to replace its whole content."
        )
    return read_text(rp, max_bytes, purpose="overwrite")


class FsCreate(Tool):
    name = "filesystem-create"
    description = tool_prompt(name)
    Args = CreateArgs

    async def run(self, args: CreateArgs, ctx: ToolContext) -> ToolResult:
        rp = await confine(args.filePath, ctx, tool=self.name)
        if args.filePath.rstrip().endswith(("/", os.sep)):
            raise ToolError(f"{args.filePath} names a folder; give a file path")
        before = await asyncio.to_thread(_existing, rp, args.overwrite, ctx.max_file_bytes)
        old_text = before.text if before else None
        diff = make_diff(old_text or "", args.content, rp.display)
        verb = "Overwrite" if before else "Create"
        request = ApprovalRequest(
            tool=self.name,
            kind="edit",
            key="edit",
            title=f"{verb} {rp.display}",
            detail=diff if before else args.content,
        )
        if not await ctx.permissions.check(request):
            return ToolResult.error(
                f"the user denied {'overwriting' if before else 'creating'} this file", path=rp.display
            )

        data = args.content.encode("utf-8")
        # At write time, through the folders that were approved: a path swapped meanwhile is
        # refused, and a file that appeared meanwhile is never replaced (workspace.write_file).
        await asyncio.to_thread(
            write_file, rp, data, before=before.data if before else None, mode=before.mode if before else None
        )
        done = "Overwrote" if before else "Created"
        said = await edit_diagnostics(ctx, rp, before.data if before else None, data)  # agent/lsp/
        return ToolResult(
            content=with_diagnostics(
                f"{done} {rp.display} ({plural(len(data), 'byte')}, {plural(count_lines(args.content), 'line')})", said
            ),
            meta={"path": rp.display, "diff": diff, **({"diagnostics": said} if said else {})},
            edits=[FileEdit(path=str(rp.path), before=before.data if before else None, after=data)],
        )
