"""A resumed session's last messages as plain lines, for the first screen (agent/ui/early.py).

The same shapes the chat draws a moment later — `▌` user text, assistant text, `● tool
args` with `▶ summary` — laid out in the same columns, without Markdown: the app's chat
replaces them as soon as Textual is up. Every stored text is made inert first
(agent/fs/terminal_text.py): this screen is written to the terminal as it is, so an escape
sequence in a stored answer or prompt would otherwise run at every resume.
Standard library only (tool_render and terminal_text are pure).
"""

from __future__ import annotations

import re
import textwrap
from types import SimpleNamespace
from typing import Any

from agent.fs.terminal_text import inert
from agent.ui.widgets import tool_render

BAR = "\x1b[38;5;32m▌\x1b[0m"
DIM = "\x1b[2m"
BOLD = "\x1b[1m"
RESET = "\x1b[0m"
MAX_LINES_PER_MESSAGE = 12
_COMMAND = re.compile(r'<command name="([a-z0-9_-]+)">')


def _wrap(text: str, width: int, limit: int = MAX_LINES_PER_MESSAGE) -> list[str]:
    lines: list[str] = []
    for paragraph in inert(text).strip("\n").split("\n"):
        lines += textwrap.wrap(paragraph, width, replace_whitespace=False, drop_whitespace=True) or [""]
        if len(lines) > limit:
            return lines[: limit - 1] + ["…"]
    return lines


def _user(content: str, meta: dict[str, Any]) -> str:
    """As the chat shows it: a project command as `/name`, each attached image as its
    `[image: name, WxH]` line (agent/images.py; read here without pydantic)."""
    command = _COMMAND.match(content)
    text = f"/{command.group(1)}" if command else content
    images = meta.get("images") if isinstance(meta, dict) else None
    labels = [
        f"[image: {i.get('name')}, {i.get('width')}x{i.get('height')}]"
        for i in (images if isinstance(images, list) else [])
        if isinstance(i, dict)
    ]
    return "\n".join([text, *labels]) if text else "\n".join(labels)


def _shell(content: str, shell: dict[str, Any]) -> str:
    """A `!command` note (agent/runtime/shell.py) as the chat shows it: the command, its output."""
    output = [
        content[content.find(f"<{t}>") + len(t) + 2 : content.rfind(f"</{t}>")] for t in ("bash-stdout", "bash-stderr")
    ]
    shown = "\n".join(part for part in output if part.strip())
    return f"! {shell.get('command', '')}" + (f"\n{shown}" if shown else "")


def history_lines(messages: list[dict[str, Any]], width: int) -> list[str]:
    """Lines (with ANSI styles) for `messages` (agent/session/peek.py dicts), oldest first."""
    inner = max(10, width - 8)  # chat padding, Markdown padding and the scrollbar
    results = {m["tool_call_id"]: m for m in messages if m["role"] == "tool" and m.get("tool_call_id")}
    lines: list[str] = []
    for m in messages:
        content = m.get("content") or ""
        if (m.get("meta") or {}).get("restated_from"):
            continue  # a prompt restated after a condense summary: shown where it was typed
        if m["role"] == "notice":  # what a turn told the user (agent/session/peek.py), dimmed as the chat shows it
            lines.append("")
            lines += [f"  {DIM}{line}{RESET}" for line in _wrap(content, inner)]
        elif m.get("kind") == "summary":
            lines += ["", f"  {DIM}── Context condensed ──{RESET}"]
        elif m["role"] == "user" and isinstance((m.get("meta") or {}).get("shell"), dict):
            lines.append("")
            lines += [f" {BAR} {line}" for line in _wrap(_shell(content, m["meta"]["shell"]), inner)]
        elif m["role"] == "user":
            lines.append("")
            lines += [f" {BAR} {line}" for line in _wrap(_user(content, m.get("meta") or {}), inner)]
        elif m["role"] == "assistant":
            if content.strip():
                lines.append("")
                lines += [f"  {line}" for line in _wrap(content, inner)]
            for raw in m.get("tool_calls") or []:
                call = SimpleNamespace(name=str(raw.get("name", "")), arguments=str(raw.get("arguments", "")))
                name = tool_render.fit_line(inert(call.name), inner)
                args = tool_render.fit_line(tool_render.format_args(call), max(0, inner - len(name) - 3))
                lines += ["", f"  {DIM}●{RESET} {BOLD}{name}{RESET} {args}"]
                result = results.get(raw.get("id"))
                if result is not None:
                    summary = tool_render.summarize_result(SimpleNamespace(**result))
                    lines.append(f"    {DIM}▶ {tool_render.fit_line(summary, inner)}{RESET}")
    return lines
