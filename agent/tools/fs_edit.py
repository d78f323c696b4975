"""`filesystem-edit`: replace an exact piece of text in a file, shown as a unified diff.

Exact search-and-replace (not line numbers) because the model's view of a file may be
stale; demanding a unique match by default stops it from editing the wrong spot. The
bytes before and after go into the result's `edits`, which the loop keeps as a checkpoint.
"""

from __future__ import annotations

import asyncio
import difflib

from pydantic import Field

from agent.tools.base import FileEdit, Tool, ToolArgs, ToolContext, ToolError, ToolResult, tool_prompt
from agent.tools.lsp_tool import edit_diagnostics, with_diagnostics
from agent.tools.permissions import ApprovalRequest
from agent.tools.workspace import confine, read_text, write_file

DIFF_CONTEXT_LINES = 3
MAX_LISTED_OCCURRENCES = 10
NO_NEWLINE_MARKER = "\\ No newline at end of file\n"


class EditArgs(ToolArgs):
    filePath: str = Field(description="Path of the file to edit, relative to the workspace.")
    searchContent: str = Field(
        description=(
            "Exact text to find, including indentation and line breaks, copied from the current "
            "file. Include enough surrounding lines to make it unique."
        )
    )
    replaceContent: str = Field(description="Text that replaces searchContent (may be empty to delete it).")
    replaceAll: bool = Field(
        default=False,
        description="Replace every occurrence. When false the search text must occur exactly once.",
    )


def _diff_lines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n" + NO_NEWLINE_MARKER)
    return lines


def make_diff(old: str, new: str, display: str) -> str:
    """Unified diff with `a/path` and `b/path` headers and 3 lines of context."""
    return "".join(
        difflib.unified_diff(
            _diff_lines(old),
            _diff_lines(new),
            fromfile=f"a/{display}",
            tofile=f"b/{display}",
            n=DIFF_CONTEXT_LINES,
        )
    )


def is_pure_crlf(text: str) -> bool:
    """Every line break is CRLF: the file is edited as LF text and written back as CRLF."""
    crlf = text.count("\r\n")
    return crlf > 0 and crlf == text.count("\n")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _not_found_hint(text: str, search: str) -> str:
    """Why an exact match failed, in terms the model can act on."""
    file_lines = [line.strip() for line in text.split("\n")]
    wanted = [line.strip() for line in search.strip("\n").split("\n")]
    if any(wanted):
        n = len(wanted)
        for i in range(len(file_lines) - n + 1):
            if file_lines[i : i + n] == wanted:
                return (
                    f"Text matching except for whitespace/indentation starts at line {i + 1}; "
                    "copy it exactly as it is in the file."
                )
        first = next(line for line in wanted if line)
        hits = [str(i + 1) for i, line in enumerate(file_lines) if line == first]
        if hits:
            return (
                f"Its first line occurs at line(s) {', '.join(hits[:MAX_LISTED_OCCURRENCES])} but the "
                "following lines differ; read that part of the file again."
            )
    return "The file may have changed; read it again with filesystem-read and copy the exact text."


def plan_edit(text: str, search: str, replace: str, replace_all: bool, display: str) -> tuple[str, int]:
    """The new text and the number of replacements; ToolError when the match rule fails."""
    if search == "":
        raise ToolError("searchContent is empty; give the exact text to replace")
    if search == replace:
        raise ToolError("searchContent and replaceContent are identical; nothing would change")
    count = text.count(search)
    if count == 0:
        raise ToolError(f"searchContent was not found in {display}. {_not_found_hint(text, search)}")
    if count > 1 and not replace_all:
        lines: list[str] = []
        start = 0
        while len(lines) < MAX_LISTED_OCCURRENCES and (idx := text.find(search, start)) != -1:
            lines.append(str(_line_of(text, idx)))
            start = idx + len(search)
        raise ToolError(
            f"searchContent occurs {count} times in {display} (starting at lines {', '.join(lines)}). "
            "Add surrounding lines to make it unique, or set replaceAll=true to replace every occurrence."
        )
    return text.replace(search, replace) if replace_all else text.replace(search, replace, 1), count


class FsEdit(Tool):
    name = "filesystem-edit"
    description = tool_prompt(name)
    Args = EditArgs

    async def run(self, args: EditArgs, ctx: ToolContext) -> ToolResult:
        rp = await confine(args.filePath, ctx, tool=self.name)
        original = await asyncio.to_thread(read_text, rp, ctx.max_file_bytes, purpose="edit")
        crlf = is_pure_crlf(original.text)
        text = original.text.replace("\r\n", "\n") if crlf else original.text
        search, replace = args.searchContent, args.replaceContent
        if crlf:
            search, replace = search.replace("\r\n", "\n"), replace.replace("\r\n", "\n")
        new_text, count = plan_edit(text, search, replace, args.replaceAll, rp.display)
        diff = make_diff(text, new_text, rp.display)

        request = ApprovalRequest(tool=self.name, kind="edit", key="edit", title=f"Edit {rp.display}", detail=diff)
        if not await ctx.permissions.check(request):
            return ToolResult.error("the user denied this edit", path=rp.display)

        data = (new_text.replace("\n", "\r\n") if crlf else new_text).encode("utf-8")
        # The approval may take a while: the file must still hold what the diff was made
        # from, and be reached through the same folders (workspace.write_file).
        await asyncio.to_thread(write_file, rp, data, before=original.data, mode=original.mode)
        said = await edit_diagnostics(ctx, rp, original.data, data)  # the errors it introduced (agent/lsp/)
        return ToolResult(
            content=with_diagnostics(diff, said),
            meta={"path": rp.display, "diff": diff, "replacements": count, **({"diagnostics": said} if said else {})},
            edits=[FileEdit(path=str(rp.path), before=original.data, after=data)],
        )
