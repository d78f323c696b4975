"""`lsp`: definition, references and hover from the session's language server (SPEC §13.8),
offered only when one was found (agent/lsp/); and the diagnostics an edit introduced, which
filesystem-edit and filesystem-create append to their results.

The tool holds the session's `LspManager` itself (a subagent's registry carries it along), and
works on files inside the workspace only: the server is rooted there, and its answers are
shown with lines read only from there (agent/lsp/answers.py).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Literal

from pydantic import Field

from agent.fs.repo_files import RepoFileError, read_repo_file
from agent.lsp.answers import hover_text, locations, utf16_column
from agent.lsp.manager import LspManager, LspUnavailable
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.workspace import ResolvedPath, read_text, resolve_path

# The registry group the runtime puts the tool in (agent/tools/registry.py `set_group`).
REGISTRY_GROUP = "lsp"


class LspArgs(ToolArgs):
    operation: Literal["definition", "references", "hover"] = Field(description="What to ask.")
    filePath: str = Field(description="Path of the file, relative to the workspace.")
    line: int = Field(ge=1, description="1-based line number, as filesystem-read shows it.")
    character: int = Field(ge=1, description="1-based column of a character of the symbol on that line.")


async def edit_diagnostics(ctx: ToolContext, rp: ResolvedPath, before: bytes | None, after: bytes) -> str:
    """What the edit from `before` (None: a new file) to `after` introduced, for the result;
    "" without a server for the file (or outside the workspace). Bounded by `[lsp] timeout_ms`."""
    if ctx.lsp is None or not rp.inside:
        return ""
    old = before.decode("utf-8", "replace") if before is not None else None
    return await ctx.lsp.after_edit(rp.path, rp.display, old, after.decode("utf-8", "replace"))


def with_diagnostics(content: str, said: str) -> str:
    return f"{content}\n\n{said}" if said else content


class _Lines:
    """Lines of workspace files for an answer's locations, each file read once, none outside."""

    def __init__(self, workspace: Path, max_bytes: int) -> None:
        self.workspace = workspace
        self.max_bytes = max_bytes
        self.files: dict[Path, list[str] | None] = {}

    def __call__(self, path: Path, line: int) -> str | None:
        if path not in self.files:
            try:
                data = read_repo_file(self.workspace, path, max_bytes=self.max_bytes)
                self.files[path] = data.decode("utf-8", "replace").splitlines()
            except (RepoFileError, OSError):
                self.files[path] = None
        lines = self.files[path]
        return lines[line] if lines is not None and line < len(lines) else None


class Lsp(Tool):
    name = "lsp"
    description = tool_prompt(name)
    Args = LspArgs

    def __init__(self, manager: LspManager) -> None:
        self.manager = manager

    async def run(self, args: LspArgs, ctx: ToolContext) -> ToolResult:
        rp = resolve_path(args.filePath, ctx.workspace)
        if not rp.inside:
            raise ToolError(f"{rp.display} is outside the workspace; lsp answers for the workspace's files")
        file = await asyncio.to_thread(read_text, rp, ctx.max_file_bytes)
        lines = file.text.splitlines()
        if args.line > len(lines):
            raise ToolError(f"{rp.display} has {len(lines)} lines; line {args.line} does not exist")
        line_text = lines[args.line - 1]
        if args.character > len(line_text) + 1:
            raise ToolError(f"line {args.line} of {rp.display} has {len(line_text)} characters")
        column = utf16_column(line_text, args.character - 1)
        try:
            answer = await self.manager.query(args.operation, rp.path, file.text, args.line - 1, column)
        except LspUnavailable as exc:
            raise ToolError(str(exc)) from None
        where = f"{rp.display}:{args.line}:{args.character}"
        if args.operation == "hover":
            text = hover_text(answer)
            return ToolResult(content=text or f"No hover information at {where}.", meta={"path": rp.display})
        root = rp.root or ctx.workspace
        found = await asyncio.to_thread(locations, answer, root, _Lines(root, ctx.max_file_bytes))
        if not found:
            return ToolResult(content=f"No {args.operation} found for {where}.", meta={"path": rp.display})
        noun = "definition" if args.operation == "definition" else "reference"
        head = f"{len(found)} {noun}{'s' if len(found) != 1 else ''} of {where}:"
        return ToolResult(content="\n".join([head, *found]), meta={"path": rp.display})
