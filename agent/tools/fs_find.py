"""`filesystem-find`: files by name (a glob), newest first (SPEC §8).

Finding files was only possible with `find`/`ls -R` through terminal-execute, which may ask
for approval; this is read-only and never asks inside the workspace (a `path` outside it asks
like filesystem-read does). ripgrep lists the files the way filesystem-search would search
them: `.gitignore` honoured, `.git/` left out, symlinks never followed, so nothing outside
the workspace is reported through one. Newest first, because the file just changed is the
one usually wanted. Bounded in count and time like filesystem-search.
"""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.globs import compile_glob, type_flags
from agent.tools.ripgrep import COMMON_FLAGS, Ripgrep, folder_cwd
from agent.tools.workspace import confine

DEFAULT_MAX_RESULTS = 100
MAX_RESULTS = 1000
FIND_TIMEOUT_SECONDS = 30.0


class FindArgs(ToolArgs):
    pattern: str = Field(
        description='Glob of the files to find, relative to path: "*.py" matches in every folder, '
        '"src/**/*.ts" only under src, "**/test_*.py" at any depth.'
    )
    path: str | None = Field(
        default=None, description="Folder to look in, relative to the workspace (default: the whole workspace)."
    )
    maxResults: int = Field(default=DEFAULT_MAX_RESULTS, ge=1, le=MAX_RESULTS, description="At most this many paths.")


def _relative(line: bytes) -> str:
    return os.fsdecode(line).removeprefix("./")


class FsFind(Tool):
    name = "filesystem-find"
    description = tool_prompt(name)
    Args = FindArgs

    def __init__(self, rg: Ripgrep | None = None) -> None:
        self.rg = rg or Ripgrep()

    async def run(self, args: FindArgs, ctx: ToolContext) -> ToolResult:
        glob = compile_glob(args.pattern)
        rp = await confine(args.path or ".", ctx, tool=self.name)
        if not await asyncio.to_thread(os.path.isdir, rp.path):
            raise ToolError(f"{rp.display} is not a folder; give the folder to look in as path")
        flags = [*COMMON_FLAGS, "--files", "--sortr", "modified", *type_flags(glob)]
        with folder_cwd(rp) as (cwd, fds):
            out = await self.rg.run(
                flags,
                ctx,
                cwd=cwd,
                max_lines=args.maxResults,
                timeout=FIND_TIMEOUT_SECONDS,
                pass_fds=fds,
                keep=lambda line: glob.matches(_relative(line)),
            )
        if out.failed:
            raise out.error()
        prefix = "" if rp.display == "." else rp.display.rstrip("/") + "/"
        paths = [prefix + _relative(line) for line in out.lines]
        where = "the workspace" if rp.display == "." else rp.display
        notes = []
        if out.more:
            notes.append(f"(stopped at {args.maxResults} paths; narrow the pattern or the path, or raise maxResults)")
        if out.timed_out:
            notes.append(f"(stopped after {FIND_TIMEOUT_SECONDS:g} s the list is incomplete; narrow the path)")
        if not paths:
            return ToolResult(
                content="\n".join([f"No files match {glob.text!r} in {where}", *notes]),
                meta={"files": 0, "timed_out": out.timed_out},
            )
        return ToolResult(
            content="\n".join(paths + notes), meta={"files": len(paths), "more": out.more, "timed_out": out.timed_out}
        )
