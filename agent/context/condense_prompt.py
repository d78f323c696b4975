"""The texts of condense (seed 001 §3.4.5 steps 3, 4 and 7): what the summary model reads,
the summary message built from its answer, and the Markdown archive of the replaced range.

The conversation goes to the summary model as text, not as chat messages: tool calls
become `[called name: args]`, results `[result of name: …]` ("将所有tool_use/tool_result块
转换为文本表示"), so the request can hold no `tool` role, no orphaned call and no tool
definitions, and any provider accepts it. A call without a recorded result gets a
synthetic one ("注入合成工具结果处理孤立工具调用") so the summariser knows it never finished.
Images are dropped ("移除图片块"): they cost tokens and the summary is text.
Long tool payloads are cut in the middle: the summariser needs the gist, and the whole
text stays in the history context file.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent.session.models import Message, Session
from agent.tools.todos import Todo, as_text

# A tool output or argument text longer than this is shown as its head and tail.
MAX_RESULT_CHARS = 2_000
MAX_ARGUMENT_CHARS = 1_000
TAIL_FRACTION = 0.25
IMAGE_PLACEHOLDER = "[image omitted]"
# data: URLs (alone or inside Markdown image syntax) are how an image reaches a text message.
_IMAGE = re.compile(r"!\[[^\]]*\]\(data:image/[^)]*\)|data:image/[\w.+-]+;base64,[A-Za-z0-9+/=\s]+")
SYNTHETIC_RESULT = "none recorded — the call was interrupted or never ran"

SYSTEM_PROMPT = """\
You summarise a coding session between a user and an AI coding agent so that the agent \
can continue the work from your summary alone: the conversation it replaces will no longer \
be in its context. Be precise and complete about facts the agent needs (paths, names, \
commands, decisions, errors and their fixes); leave out chit-chat and anything superseded.

Write the summary in Markdown with these sections:
1. Previous conversation: what was asked and done, in order.
2. Current work: what was being worked on right before this summary, in detail.
3. Key technical concepts: technologies, conventions and constraints that matter.
4. Relevant files and code: each file touched or read and why it matters; short snippets \
only when essential.
5. Problem solving: problems solved and ongoing troubleshooting.
6. Pending tasks and next steps: what remains, with the user's own words for open requests.

Output only the summary, with no preamble."""

REQUEST_HEADER = "Summarise the conversation below (from the start of the session or the previous summary)."
PREVIOUS_SUMMARY = "## Previous summary (everything before it was already summarised)\n\n{text}"
TRIMMED_NOTE = (
    "[{count} older messages of this range were left out of this request because it was too "
    "long; they are kept in the conversation archive. Summarise what remains.]"
)
KEPT_USER = "[recent user message, kept verbatim after your summary: {preview}]"
ATTACHED = (
    "Attached to your summary automatically (do not repeat them): {items}. "
    "Mention a file only for what was learned or changed in it."
)
INSTRUCTIONS = "Additional instructions from the user for this summary:\n{text}"
FINAL_ASK = "Now write the summary."
TODO_LIST = "## Todo list\nYour current todo list, as todo-write last set it (keep it up to date with it):\n{text}"


def strip_images(text: str) -> str:
    return _IMAGE.sub(IMAGE_PLACEHOLDER, text)


def _text(message: Message) -> str:
    """A user message's text with its attached images as `[image: name, WxH]` lines: the
    summary model reads text only (agent/images.py)."""
    if message.role != "user" or not message.meta:
        return message.content or ""
    from agent.images import refs_of, with_labels

    return with_labels(message.content, refs_of(message.meta))


def clip(text: str, limit: int) -> str:
    """`text` whole when short, else its head and tail around a note of what was cut."""
    if len(text) <= limit:
        return text
    tail = int(limit * TAIL_FRACTION)
    head = limit - tail
    return f"{text[:head]}\n… [{len(text) - limit} characters omitted] …\n{text[len(text) - tail :]}"


def render_message(message: Message, answered: set[str], names: dict[str, str]) -> str:
    """One message as transcript text. `answered`: call ids that have a result in the range;
    `names`: call id → tool name, for results that do not carry their tool's name."""
    content = strip_images(_text(message)).strip()
    if message.role == "tool":
        name = message.tool_name or names.get(message.tool_call_id or "", "tool")
        label = "error from" if message.status == "error" or content.startswith("Error:") else "result of"
        return f"[{label} {name}: {clip(content, MAX_RESULT_CHARS) or '(empty)'}]"
    title = {"user": "User", "assistant": "Assistant", "system": "System"}.get(message.role, message.role)
    if message.status == "interrupted":
        title += " (interrupted)"
    parts = [f"## {title}"]
    if content:
        parts.append(content)
    for call in message.tool_calls:
        parts.append(f"[called {call.name}: {clip(call.arguments or '{}', MAX_ARGUMENT_CHARS)}]")
        if call.id not in answered:
            parts.append(f"[result of {call.name}: {SYNTHETIC_RESULT}]")
    return "\n".join(parts)


def render_kept(message: Message, preview_chars: int = 200) -> str:
    """A kept user message's place in the transcript: a pointer, not the text a second time."""
    text = " ".join(strip_images(_text(message)).split())
    return "## User\n" + KEPT_USER.format(preview=clip(text, preview_chars))


def request_messages(
    entries: list[str], *, previous: str | None, attached: list[str], instructions: str | None, dropped: int
) -> list[dict]:
    """Step 4's request: the system prompt, then one user message holding the previous summary,
    the transcript (`dropped` oldest entries left out, said so), what is attached anyway, and
    the user's `/compact` instructions."""
    parts = [REQUEST_HEADER]
    if previous is not None:
        parts.append(PREVIOUS_SUMMARY.format(text=previous.strip()))
    if dropped:
        parts.append(TRIMMED_NOTE.format(count=dropped))
    parts += entries
    if attached:
        parts.append(ATTACHED.format(items="; ".join(attached)))
    if instructions and instructions.strip():
        parts.append(INSTRUCTIONS.format(text=instructions.strip()))
    parts.append(FINAL_ASK)
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]


def reminder(text: str) -> str:
    return f"<system-reminder>\n{text}\n</system-reminder>"


def history_markdown(messages: list[Message], *, workspace: Path, now_ms: int) -> str:
    """The replaced range as Markdown, every message whole: the record the model can grep later."""
    from agent.session.export import export_markdown

    title = f"Conversation archive: {len(messages)} messages condensed"
    session = Session(
        id=messages[0].session_id or "-",
        title=title,
        cwd=str(workspace),
        created_at=messages[0].created_at,
        updated_at=now_ms,
    )
    return export_markdown(session, messages)


def summary_content(
    text: str,
    *,
    ref: str,
    kept: list[Message],
    blocks: list[str],
    folded: str,
    environment: str,
    todos: list[Todo] | None = None,
) -> str:
    """Step 7: the summary, then what it must carry verbatim, each part in its own block."""
    parts = [
        text.strip(),
        reminder(
            f"## Conversation archive\nThe messages this summary replaces are in context "
            f"file {ref} (read or grep it with the context tools)."
        ),
    ]
    if kept:
        parts.append(
            reminder("## Recent user messages (verbatim)\n\n" + "\n\n".join((m.content or "").strip() for m in kept))
        )
    if blocks:
        parts.append(reminder("## Active workflows\n" + "\n".join(blocks)))
    if todos:
        parts.append(reminder(TODO_LIST.format(text=as_text(todos))))
    parts += [p for p in (folded.strip(), environment) if p]
    return "\n\n".join(parts)
