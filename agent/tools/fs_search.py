"""`filesystem-search`: a regular expression over the workspace's files, as ripgrep lines (SPEC §8).

Read-only, so it never asks inside the workspace; a `path` outside it asks like
filesystem-read does (`confine`). The pattern is compiled with RE2 first: RE2 and ripgrep's
engine both run in linear time, and RE2's refusal (backreferences, lookaround) comes back in
words before anything runs. ripgrep then walks the folder the way a developer expects:
`.gitignore` honoured, binary files skipped, symlinks never followed (so nothing outside the
workspace is read or reported through one), results sorted by path so the same search gives
the same answer. The answer is bounded: `maxResults` lines of at most `MAX_COLUMNS`
characters each, and a time limit after which the lines found so far are returned with a note.
"""

from __future__ import annotations

import asyncio
import os

from pydantic import Field

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.globs import Glob, compile_glob, type_flags
from agent.tools.ripgrep import COMMON_FLAGS, RgOutput, Ripgrep, folder_cwd
from agent.tools.workspace import BINARY_SNIFF_BYTES, ResolvedPath, confine, looks_binary, open_regular

DEFAULT_MAX_RESULTS = 100
MAX_RESULTS = 1000
MAX_COLUMNS = 500  # a minified line shows its first 500 characters, then rg's "[... omitted end of long line]"
SEARCH_TIMEOUT_SECONDS = 30.0


class SearchArgs(ToolArgs):
    pattern: str = Field(description="Regular expression to search for (RE2 syntax: no backreferences or lookaround).")
    path: str | None = Field(
        default=None, description="File or folder to search, relative to the workspace (default: the whole workspace)."
    )
    glob: str | None = Field(
        default=None, description='Only search files whose path matches this glob, e.g. "*.py" or "src/**/*.{ts,tsx}".'
    )
    caseSensitive: bool = Field(default=False, description="Match case exactly (default: ignore case).")
    maxResults: int = Field(
        default=DEFAULT_MAX_RESULTS, ge=1, le=MAX_RESULTS, description="At most this many matching lines."
    )


def _validate(pattern: str, case_sensitive: bool) -> None:
    from agent.context.files.grep import compile_pattern
    from agent.context.files.security import ContextFileError

    try:
        compile_pattern(pattern, case_sensitive)
    except ContextFileError as exc:
        raise ToolError(str(exc)) from None


def _flags(args: SearchArgs, glob: Glob | None) -> list[str]:
    flags = [
        *COMMON_FLAGS,
        "--line-number",
        "--sort",
        "path",
        "--max-columns",
        str(MAX_COLUMNS),
        "--max-columns-preview",
        "--case-sensitive" if args.caseSensitive else "--ignore-case",
    ]
    return flags + (type_flags(glob) if glob else []) + ["-e", args.pattern]


def _in_glob(glob: Glob):
    """Keeps rg's `path NUL line:text` lines whose path matches the glob."""
    return lambda line: glob.matches(os.fsdecode(line.partition(b"\0")[0]).removeprefix("./"))


def _decode(raw: bytes) -> str:
    return os.fsdecode(raw).removesuffix("\r")


def _lines(out: RgOutput, prefix: str, single_file: str | None) -> list[str]:
    """`path:line:text`, from rg's `path NUL line:text` (a file name may hold colons) or, for
    one file read from stdin, `line:text`. Anything else (rg's "binary file matches") is left out."""
    shown = []
    for raw in out.lines:
        if single_file is None:
            name, nul, rest = raw.partition(b"\0")
            if not nul:
                continue
            path = prefix + _decode(name).removeprefix("./")
        else:
            path, rest = single_file, raw
        number, colon, text = rest.partition(b":")
        if not colon or not number.isdigit():
            continue
        shown.append(f"{path}:{int(number)}:{_decode(text)}")
    return shown


class FsSearch(Tool):
    name = "filesystem-search"
    description = tool_prompt(name)
    Args = SearchArgs

    def __init__(self, rg: Ripgrep | None = None) -> None:
        self.rg = rg or Ripgrep()

    async def run(self, args: SearchArgs, ctx: ToolContext) -> ToolResult:
        if not args.pattern:
            raise ToolError("pattern is empty; give a regular expression to search for")
        if "\x00" in args.pattern:  # no program argument can hold it; text files hold none
            raise ToolError("pattern contains a NUL character; files with NUL bytes are binary and not searched")
        _validate(args.pattern, args.caseSensitive)
        glob = compile_glob(args.glob) if args.glob else None
        rp = await confine(args.path or ".", ctx, tool=self.name)
        if await asyncio.to_thread(os.path.isdir, rp.path):
            out, single = await self._folder(rp, args, glob, ctx), None
        else:
            out, single = await self._file(rp, args, ctx), rp.display
        if out.failed:
            raise out.error()
        prefix = "" if rp.display == "." else rp.display.rstrip("/") + "/"
        lines = _lines(out, prefix, single)
        where = "the workspace" if rp.display == "." else rp.display
        notes = []
        if out.more:
            notes.append(
                f"(stopped at {args.maxResults} matching lines; narrow the pattern, path or glob, or raise maxResults)"
            )
        if out.timed_out:
            notes.append(
                f"(stopped after {SEARCH_TIMEOUT_SECONDS:g} s: the results are incomplete; narrow the path or the glob)"
            )
        if not lines:
            text = f"No matches for {args.pattern!r} in {where}" + (
                f" (files matching {args.glob!r})" if args.glob else ""
            )
            return ToolResult(content="\n".join([text, *notes]), meta={"matches": 0, "timed_out": out.timed_out})
        return ToolResult(
            content="\n".join(lines + notes), meta={"matches": len(lines), "more": out.more, "timed_out": out.timed_out}
        )

    async def _folder(self, rp: ResolvedPath, args: SearchArgs, glob: Glob | None, ctx: ToolContext) -> RgOutput:
        with folder_cwd(rp) as (cwd, fds):
            return await self.rg.run(
                [*_flags(args, glob), "--with-filename", "--null"],
                ctx,
                cwd=cwd,
                max_lines=args.maxResults,
                timeout=SEARCH_TIMEOUT_SECONDS,
                pass_fds=fds,
                keep=_in_glob(glob) if glob else None,
            )

    async def _file(self, rp: ResolvedPath, args: SearchArgs, ctx: ToolContext) -> RgOutput:
        """One file: rg reads the descriptor that was checked (stdin), never the path again."""
        try:
            f, _ = await asyncio.to_thread(open_regular, rp)
        except OSError as exc:
            raise ToolError(f"cannot search {rp.display}: {exc.strerror or exc}") from None
        with f:
            if looks_binary(await asyncio.to_thread(f.read, BINARY_SNIFF_BYTES)):
                raise ToolError(f"{rp.display} is a binary file; filesystem-search only searches text")
            f.seek(0)
            return await self.rg.run(
                [*_flags(args, None), "--no-filename", "-"],
                ctx,
                cwd=str(rp.root or rp.path.parent),
                max_lines=args.maxResults,
                timeout=SEARCH_TIMEOUT_SECONDS,
                stdin=f.fileno(),
            )
