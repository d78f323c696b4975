"""Facts about tool results for context files (seed 004), read in SQL so their text never reaches Python.

Large results' sizes and shapes, and the tool calls named by id: queries over the `messages`
table that only the context-files side asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent.session.models import ToolCall
from agent.session.rows import chunks
from agent.session.store.connection import StoreConnection

# Store.large_tool_results: tool results over a number of characters, counted as Python's
# len() counts them (code points). A UTF-8 text has as many characters as bytes that are not
# continuation bytes (0x80-0xBF). `length(content)` is exact unless the text holds a NUL
# (SQLite stops there), and bytes bound characters from above, so only a text with a NUL and
# enough bytes is counted byte by byte: over its first 4 × (limit + 1) bytes (a character
# has at most 4), the characters beginning there = Σ over the 64 continuation byte values b
# of len(prefix without b) − 63 × len(prefix). More than `limit` of them ⇔ more than
# `limit` characters in all (if not, the whole text fits in the prefix). `replace()` works on
# all bytes of a value; only its pattern must not start with NUL.
_LARGE_PREFIX = "substr(CAST(content AS BLOB), 1, ?)"
_LARGE_PREFIX_USES = 65
_LARGE_CHARS = (
    " + ".join(f"length(CAST(replace({_LARGE_PREFIX}, x'{b:02X}', '') AS BLOB))" for b in range(0x80, 0xC0))
    + f" - 63 * length({_LARGE_PREFIX})"
)
_LARGE_TOOL_RESULT = (
    "SELECT id, seq, tool_call_id, tool_name, created_at, status FROM messages"
    " WHERE session_id = ? AND seq > ? AND role = 'tool' AND length(CAST(content AS BLOB)) > ?"
    f" AND (length(content) > ? OR (instr(CAST(content AS BLOB), x'00') > 0 AND ({_LARGE_CHARS}) > ?))"
    " ORDER BY seq"
)


class ToolResultQueries(StoreConnection):
    async def large_tool_results(self, session_id: str, min_chars: int, after_seq: int = 0) -> list[dict[str, Any]]:
        """Tool results of a session (all branches) longer than `min_chars` characters and
        written after `after_seq`, oldest first, without their content (a tool result is
        written once, so callers can scan incrementally).

        Characters as Python's `len()` counts them — the request side's measure (the
        externalize pass), so every output sent as a ref has a context file. SQLite's
        `length()` stops at the first NUL of a TEXT, so a text with a NUL is counted on its
        UTF-8 bytes instead (`_LARGE_TOOL_RESULT`)."""
        prefix = 4 * (max(min_chars, 0) + 1)
        async with self.conn.execute(
            _LARGE_TOOL_RESULT,
            (session_id, after_seq, min_chars, min_chars, *([prefix] * _LARGE_PREFIX_USES), min_chars),
        ) as cur:
            return [dict(row) for row in await cur.fetchall()]

    async def tool_result_shapes(self, message_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """For each tool result: its UTF-8 size; `json_kind` 'object'/'array' when it is JSON;
        and when it is `{"stdout": …, "stderr": …}` the UTF-8 sizes of both and whether stdout
        ends with a newline (a terminal result's context file is a log of the two). Parses the
        JSON in SQLite (three passes) so the text never reaches Python."""
        out: dict[str, dict[str, Any]] = {}
        for chunk, marks in chunks(message_ids, 200):
            async with self.conn.execute(
                f"""
                WITH shaped AS MATERIALIZED (
                    SELECT id, length(CAST(content AS BLOB)) AS bytes,
                           CASE WHEN substr(content, 1, 1) IN ('{{', '[') AND json_valid(content)
                                THEN CASE substr(content, 1, 1) WHEN '{{' THEN 'object' ELSE 'array' END
                           END AS json_kind,
                           content
                    FROM messages WHERE id IN ({marks}) AND role = 'tool'
                ), parts AS MATERIALIZED (
                    SELECT id, bytes, json_kind,
                           CASE WHEN json_kind = 'object' THEN json_extract(content, '$.stdout') END AS stdout,
                           CASE WHEN json_kind = 'object' THEN json_extract(content, '$.stderr') END AS stderr
                    FROM shaped
                )
                SELECT id, bytes, json_kind,
                       CASE WHEN typeof(stdout) = 'text' AND typeof(stderr) = 'text' THEN 1 ELSE 0 END AS split,
                       length(CAST(stdout AS BLOB)) AS stdout_bytes, substr(stdout, -1) = char(10) AS stdout_nl,
                       length(CAST(stderr AS BLOB)) AS stderr_bytes
                FROM parts
                """,
                chunk,
            ) as cur:
                for row in await cur.fetchall():
                    out[row["id"]] = dict(row)
        return out

    async def tool_calls_by_id(self, session_id: str, call_ids: Iterable[str]) -> list[tuple[int, ToolCall]]:
        """The calls with these ids in the session's assistant messages, with the calling
        message's seq (providers may reuse ids across turns: the caller picks the nearest)."""
        found: list[tuple[int, ToolCall]] = []
        for chunk, marks in chunks(call_ids):
            async with self.conn.execute(
                "SELECT m.seq, json_extract(j.value, '$.id') AS id, json_extract(j.value, '$.name') AS name,"
                " json_extract(j.value, '$.arguments') AS arguments"
                " FROM messages m, json_each(m.tool_calls) j"
                " WHERE m.session_id = ? AND m.role = 'assistant' AND m.tool_calls IS NOT NULL"
                f" AND json_extract(j.value, '$.id') IN ({marks})",
                (session_id, *chunk),
            ) as cur:
                for row in await cur.fetchall():
                    found.append(
                        (row["seq"], ToolCall(id=row["id"], name=row["name"] or "", arguments=row["arguments"] or ""))
                    )
        return found
