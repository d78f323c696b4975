"""Step 2 of smart truncation: tool calls in the middle go, file views stay (seed 001 §3.2.5).

"保留text类型的content block / 删除所有tool_use类型的block / 保留文件查看的tool_result /
删除其他tool_result": old command runs, edits and searches in the middle of a long session
are what the model needs least, while the files it looked at are its picture of the code
(and step 3 shrinks them to their outline). The seed tells file views apart by "大量文本内容";
cairn knows the tool, so a file view is a `filesystem-read` result (errors included: they
are short and stop the model retrying a bad path). A `skill-load` result stays too: a loaded
skill stays loaded for the session (SPEC §13.3).

A call and its result go together, so nothing is orphaned: an assistant message keeps its
text when its calls go, and disappears when it had nothing else. Only middle units change.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.context.truncation.middle_range import Unit

FILE_VIEW_TOOL = "filesystem-read"
# A loaded skill stays loaded for the session (SPEC §13.3): its instructions are kept like a file view.
SKILL_TOOL = "skill-load"


@dataclass
class FilterStats:
    calls_removed: int = 0
    results_removed: int = 0
    messages_removed: int = 0


def is_file_view(tool_name: str | None) -> bool:
    return tool_name == FILE_VIEW_TOOL


def filter_tool_calls(units: list[Unit], stats: FilterStats | None = None) -> list[Unit]:
    """A new list: middle units without their non-file-view calls and results."""
    stats = stats if stats is not None else FilterStats()
    out: list[Unit] = []
    for unit in units:
        if not unit.middle_tool_exchange:
            out.append(unit)
            continue
        head = unit.messages[0]
        kept_calls = [tc for tc in head.tool_calls if is_file_view(tc.name) or tc.name == SKILL_TOOL]
        if len(kept_calls) == len(head.tool_calls):
            out.append(unit)
            continue
        kept_ids = {tc.id for tc in kept_calls}
        results = [m for m in unit.messages[1:] if m.tool_call_id in kept_ids]
        stats.calls_removed += len(head.tool_calls) - len(kept_calls)
        stats.results_removed += len(unit.messages) - 1 - len(results)
        if not kept_calls and not (head.content or "").strip():
            stats.messages_removed += len(unit.messages)
            continue
        stats.messages_removed += len(unit.messages) - 1 - len(results)
        head = head.model_copy(update={"tool_calls": kept_calls})
        out.append(Unit((head, *results), middle=True))
    return out
