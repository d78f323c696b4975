"""What a large tool output looks like as a context file: its name, hint, size and bytes.

The file is derived from the stored message alone, so it can be deleted and rebuilt byte for
byte at any time (SQLite is the source of truth). Three formats:

- a terminal result (`{"command","stdout","stderr","exitCode"}`) becomes a plain log,
  `artifacts/terminal/<call>.log`: stdout as the command printed it, then, if there was
  any, a `--- stderr ---` line and stderr. Line numbers in grep are the command's own
  stdout line numbers, and tail ends with what the command printed last. (As one JSON line
  grep and tail would be useless.) The exit code is in the inline preview and the status.
- any other JSON object/array stays as stored: `artifacts/tool/<call>.json`;
- everything else as stored: `artifacts/tool/<call>.txt`.

The size of each is known from the store without reading the text (list shows it before
the file exists); tests check that it equals the size of the file built later.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from agent.context.files.refs import artifact_ref_id
from agent.context.files.security import redact as mask
from agent.session.models import ToolCall

TERMINAL_TOOL = "terminal-execute"
STDERR_MARK = "--- stderr ---\n"
HINT_CHARS = 120
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


@dataclass
class ArtifactInfo:
    ref_id: str
    message_id: str
    seq: int
    path: str  # relative to the session folder
    format: str  # "terminal", "json" or "text"
    mime: str
    size: int  # bytes of the file
    created_at: int
    tool_name: str
    call_id: str
    status: str
    hint: str = ""


def describe(row: dict[str, Any], shape: dict[str, Any]) -> ArtifactInfo:
    """The artifact a `Store.large_tool_results` row becomes, given its
    `Store.tool_result_shapes` entry (the hint is added when listing)."""
    ref_id = artifact_ref_id(row["id"])
    call_id = row["tool_call_id"] or ""
    stem = (_UNSAFE.sub("_", call_id).strip("_")[:64] or "call") + "-" + ref_id[4:12]
    if row["tool_name"] == TERMINAL_TOOL and shape.get("split"):
        size = shape["stdout_bytes"]
        if shape["stderr_bytes"]:
            size += len(STDERR_MARK) + shape["stderr_bytes"] + (1 if size and not shape["stdout_nl"] else 0)
        fmt, path, mime = "terminal", f"artifacts/terminal/{stem}.log", "text/plain"
    elif shape.get("json_kind") in ("object", "array"):
        fmt, path, mime, size = "json", f"artifacts/tool/{stem}.json", "application/json", shape["bytes"]
    else:
        fmt, path, mime, size = "text", f"artifacts/tool/{stem}.txt", "text/plain", shape["bytes"]
    return ArtifactInfo(
        ref_id=ref_id,
        message_id=row["id"],
        seq=row["seq"],
        path=path,
        format=fmt,
        mime=mime,
        size=size,
        created_at=row["created_at"],
        tool_name=row["tool_name"] or "tool",
        call_id=call_id,
        status=row["status"],
    )


def terminal_log(stdout: str, stderr: str) -> str:
    if not stderr:
        return stdout
    joint = "\n" if stdout and not stdout.endswith("\n") else ""
    return f"{stdout}{joint}{STDERR_MARK}{stderr}"


def render(info: ArtifactInfo, content: str, *, redact: bool) -> bytes:
    """The file's bytes. Redaction keeps lengths, so `info.size` stays exact."""
    text = content
    if info.format == "terminal":
        try:
            data = json.loads(content)
            text = terminal_log(data["stdout"], data["stderr"])
        except (ValueError, KeyError, TypeError):
            text = content
    if redact:
        text = mask(text)
    return text.encode("utf-8", errors="surrogatepass")


def _one_line(text: str, limit: int = HINT_CHARS) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _paths(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(_paths(v) for v in value)
    if isinstance(value, dict):
        return str(value.get("path", ""))
    return str(value)


def hint(info: ArtifactInfo, call: ToolCall | None, *, redact: bool) -> str:
    """One line saying where the output came from, e.g. "output of terminal-execute `pytest -q`"."""
    try:
        args = json.loads(call.arguments) if call and call.arguments else {}
    except ValueError:
        args = {}
    args = args if isinstance(args, dict) else {}
    name = info.tool_name
    if name == TERMINAL_TOOL and args.get("command"):
        text = f"output of {name} `{_one_line(args['command'], 80)}`"
    elif name == "filesystem-read" and args.get("filePath"):
        text = f"{name} {_paths(args['filePath'])}"
    else:
        first = next((v for v in args.values() if isinstance(v, str) and v.strip()), None)
        text = f"output of {name}" + (f" {first}" if first else "")
    if info.status != "ok":
        text += f" ({info.status})"
    text = _one_line(text)
    return mask(text) if redact else text


class ArtifactIndex:
    """What the store says about one session's large tool results, asked for sparingly.

    A tool result is written once, so each scan asks only for rows after the last seq seen,
    and each result's shape (which parses its JSON inside SQLite) is asked for once, when the
    result is first listed or opened."""

    def __init__(self, store: Any, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.threshold = -1
        self.scanned_seq = 0
        self.rows: dict[str, dict[str, Any]] = {}  # ref id → Store.large_tool_results row
        self.infos: dict[str, ArtifactInfo] = {}

    async def scan(self, threshold: int) -> None:
        if threshold != self.threshold:  # the inline limit changed: what counts as large too
            self.threshold, self.scanned_seq, self.rows, self.infos = threshold, 0, {}, {}
        for row in await self.store.large_tool_results(self.session_id, threshold, self.scanned_seq):
            self.rows[artifact_ref_id(row["id"])] = row
            self.scanned_seq = max(self.scanned_seq, row["seq"])

    async def describe(self, ref_ids: list[str]) -> list[ArtifactInfo]:
        missing = [r for r in ref_ids if r not in self.infos]
        if missing:
            shapes = await self.store.tool_result_shapes(self.rows[r]["id"] for r in missing)
            for ref in missing:
                shape = shapes.get(self.rows[ref]["id"])
                if shape is not None:
                    self.infos[ref] = describe(self.rows[ref], shape)
        return [self.infos[r] for r in ref_ids if r in self.infos]

    async def newest(self, threshold: int, limit: int) -> list[ArtifactInfo]:
        await self.scan(threshold)
        order = sorted(self.rows, key=lambda r: (self.rows[r]["created_at"], self.rows[r]["seq"]), reverse=True)
        return await self.describe(order[:limit])

    async def get(self, ref_id: str, threshold: int) -> ArtifactInfo | None:
        """The artifact with this id in this session, or None (another session's ids included)."""
        if ref_id not in self.rows or threshold != self.threshold:
            await self.scan(threshold)
        found = await self.describe([ref_id]) if ref_id in self.rows else []
        return found[0] if found else None

    async def calls_of(self, infos: list[ArtifactInfo]) -> dict[str, ToolCall]:
        """Each artifact's tool call: the nearest earlier call with its id (ids may repeat)."""
        found = await self.store.tool_calls_by_id(self.session_id, [i.call_id for i in infos if i.call_id])
        out: dict[str, ToolCall] = {}
        for info in infos:
            best = max(
                ((seq, call) for seq, call in found if call.id == info.call_id and seq < info.seq),
                key=lambda pair: pair[0],
                default=None,
            )
            if best is not None:
                out[info.ref_id] = best[1]
        return out
