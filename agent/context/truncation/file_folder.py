"""Step 3 of smart truncation: every file view becomes its outline (seed 001 §3.2.5, SPEC §12.12).

"识别所有文件查看的tool_result / 从tool_result内容中提取文件路径 / 调用file-folding模块对文件
进行折叠 / 替换原始tool_result内容为折叠后的内容": a file read long ago costs its whole text,
while its class and function names (the folding module, agent/context/folding/) are
enough for the model to know what is there and to read it again when it needs to.

The folding itself is passed in as `fold(paths) -> str` so this step stays a pure function
of its inputs (the folder reads the disk) and can be tested without tree-sitter. An empty
fold — unknown language, file gone, or the default no-op — keeps the read as it is, so the
model never loses a file view for nothing; so does a fold no shorter than the read (a few
lines of a big file can be smaller than the whole file's outline). Errors and interrupted reads are not folded.
"折叠所有文件查看结果 / 遍历所有消息" (fold *all* file-view results, going through *all*
messages): unlike steps 2 and 5, this step is not limited to the middle 1/6–5/6 range — every
file read in the request is folded, the protected ends included. The middle range still
governs which tool calls step 2 drops and which messages step 5 deletes. A unit keeps its
`middle` flag, so folding never widens what those steps may touch.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.context.passes.replace import with_content
from agent.context.truncation.middle_range import Unit
from agent.context.truncation.tool_filter import is_file_view
from agent.session.models import Message, ToolCall

Fold = Callable[[list[str]], str]

# agent/tools/fs_read.py: every file block starts `📄 path (lines a-b/total)`.
_HEADER = re.compile(r"^📄 (.+) \(lines [0-9?]+-[0-9?]+/[0-9?]+\)$", re.MULTILINE)


def no_fold(paths: list[str]) -> str:
    """The default until a folder is given: fold nothing, keep every read."""
    return ""


@dataclass
class FoldStats:
    results_folded: int = 0
    files: list[str] = field(default_factory=list)  # each folded path once, in order


def extract_file_paths(content: str | None, call: ToolCall | None = None) -> list[str]:
    """Paths of a read: the file headers of its output, else the `filePath` of its call."""
    paths = list(dict.fromkeys(_HEADER.findall(content or "")))
    if paths or call is None:
        return paths
    try:
        raw = json.loads(call.arguments) if call.arguments else None
    except (ValueError, RecursionError):
        return []
    raw = raw.get("filePath") if isinstance(raw, dict) else None
    entries = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    out = [e.get("path") if isinstance(e, dict) else e for e in entries]
    return list(dict.fromkeys(p for p in out if isinstance(p, str) and p.strip()))


def _foldable(message: Message) -> bool:
    content = message.content or ""
    return message.status == "ok" and bool(content.strip()) and not content.lstrip().startswith("Error:")


def fold_file_reads(units: list[Unit], fold: Fold = no_fold, stats: FoldStats | None = None) -> list[Unit]:
    """A new list: successful file views of every unit replaced by `fold` of their paths."""
    stats = stats if stats is not None else FoldStats()
    folded: dict[tuple[str, ...], str] = {}  # one fold per distinct set of paths
    seen: dict[str, None] = dict.fromkeys(stats.files)
    out: list[Unit] = []
    for unit in units:
        if not unit.tool_exchange:
            out.append(unit)
            continue
        head = unit.messages[0]
        calls = {tc.id: tc for tc in head.tool_calls}
        messages = [head]
        for result in unit.messages[1:]:
            call = calls.get(result.tool_call_id or "")
            if call is None or not is_file_view(call.name) or not _foldable(result):
                messages.append(result)
                continue
            paths = tuple(extract_file_paths(result.content, call))
            if paths and paths not in folded:
                folded[paths] = fold(list(paths)) or ""
            text = folded.get(paths, "")
            if not text or len(text) >= len(result.content or ""):  # folding must shrink it
                messages.append(result)
                continue
            messages.append(with_content(result, text))
            stats.results_folded += 1
            seen.update(dict.fromkeys(paths))
        out.append(Unit(tuple(messages), middle=unit.middle))
    stats.files = list(seen)
    return out
