"""What an import brought in, and what it did not: `cairn session import` prints this.

`report(imported)` counts the messages, tool calls and results a parser made, and lists the
items it skipped or kept only as notes (each `{"where", "what", "reason"}`), plus the pairing
problems any format can have: a tool call without a result (seed 002 leaves its assistant
message out when the session loads) and a result whose call is not in the file.
"""

from __future__ import annotations

from typing import Any


def report(imported: Any) -> dict[str, Any]:
    messages = imported.messages
    calls = [tc.id for m in messages if m.role == "assistant" for tc in m.tool_calls]
    results = [m.tool_call_id for m in messages if m.role == "tool" and m.tool_call_id]
    answered, made = set(results), set(calls)
    skipped = [dict(item) for item in imported.skipped]
    skipped += [
        {
            "where": f"tool call {call_id}",
            "what": "tool call without a result",
            "reason": "no result in the file: its assistant message is left out when the session loads",
        }
        for call_id in calls
        if call_id not in answered
    ]
    skipped += [
        {
            "where": f"tool result {call_id}",
            "what": "tool result without its call",
            "reason": "no tool call with this id in the file",
        }
        for call_id in results
        if call_id not in made
    ]
    counts = {
        "messages": len(messages),
        "user": sum(m.role == "user" and m.kind == "message" for m in messages),
        "assistant": sum(m.role == "assistant" and m.kind == "message" for m in messages),
        "tool_calls": len(calls),
        "tool_results": sum(m.role == "tool" for m in messages),
        "tool_errors": sum(m.role == "tool" and m.status == "error" for m in messages),
        "notes": sum(m.kind == "note" for m in messages),
    }
    return {"format": imported.source, "imported": counts, "skipped": skipped}


def report_text(summary: dict[str, Any]) -> str:
    """The report for people (stderr): one line of counts, then one line per skipped item."""
    c = summary["imported"]
    lines = [
        f"Imported {c['messages']} messages ({summary['format']}): {c['user']} user, "
        f"{c['assistant']} assistant, {c['tool_calls']} tool calls, {c['tool_results']} tool results "
        f"({c['tool_errors']} errors), {c['notes']} notes."
    ]
    skipped = summary["skipped"]
    if skipped:
        lines.append(f"Skipped or kept as notes: {len(skipped)}")
        lines += [f"  {s['where']}: {s['what']} ({s['reason']})" for s in skipped]
    return "\n".join(lines) + "\n"
