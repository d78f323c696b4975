"""MCP prompts as slash commands: `/mcp__server__prompt args` (Claude Code's names and rule).

A server's `prompts/list` names prompts the user may run; cairn offers each as a command
named as Claude Code names it, `mcp__<server>__<prompt>` (the tool names' cleaning,
agent/mcp/names.py). The words typed after it fill the prompt's declared arguments in order,
the last one taking the rest of the line (quotes group words, as a shell would); the messages
`prompts/get` returns become the user's prompt, one paragraph each. A server is untrusted
input: the list, its descriptions and the messages are bounded here, and only text reaches
the prompt (an image or a resource is named, not inlined).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from agent.mcp.names import unique_names
from agent.mcp.paging import read_pages

MAX_PROMPTS_PER_SERVER = 200
MAX_PROMPT_PAGES = 10
MAX_ARGUMENTS = 20
MAX_DESCRIPTION_CHARS = 300
MAX_PROMPT_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class RemotePrompt:
    """A server's prompt as a command: `command` is what the user types after the slash."""

    server: str
    name: str  # the server's own name
    command: str  # mcp__<server>__<prompt>
    description: str
    arguments: tuple[str, ...]  # declared names, in order
    required: tuple[str, ...]

    @property
    def hint(self) -> str:
        """The arguments as `/help` shows them: `<path> [focus]`."""
        return " ".join(f"<{a}>" if a in self.required else f"[{a}]" for a in self.arguments)


def _short(text: str | None, limit: int) -> str:
    text = " ".join(str(text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def list_prompts(client: Any, server: str) -> list[RemotePrompt]:
    """The server's prompts (bounded), or [] when it offers none."""
    listed = await read_pages(
        lambda cursor: client.list_prompts(cursor=cursor),
        "prompts",
        max_pages=MAX_PROMPT_PAGES,
        max_items=MAX_PROMPTS_PER_SERVER,
    )
    commands = unique_names(server, [p.name for p in listed])
    found = []
    for prompt in listed:
        declared = list(prompt.arguments or [])[:MAX_ARGUMENTS]
        found.append(
            RemotePrompt(
                server=server,
                name=prompt.name,
                command=commands[prompt.name],
                description=_short(
                    prompt.description or prompt.title or f"MCP prompt of {server}", MAX_DESCRIPTION_CHARS
                ),
                arguments=tuple(a.name for a in declared),
                required=tuple(a.name for a in declared if a.required),
            )
        )
    return found


def arguments_for(prompt: RemotePrompt, typed: str) -> dict[str, str]:
    """The words typed after the command, given to the declared arguments in order; the last
    declared one takes the rest. Raises ValueError naming a required argument left out."""
    try:
        words = shlex.split(typed)
    except ValueError:  # an unbalanced quote: plain words
        words = typed.split()
    names = list(prompt.arguments)
    values: dict[str, str] = {}
    for i, name in enumerate(names):
        if i >= len(words):
            break
        values[name] = " ".join(words[i:]) if i == len(names) - 1 else words[i]
    missing = [n for n in prompt.required if n not in values]
    if missing:
        raise ValueError(f"/{prompt.command} needs {', '.join(missing)}: /{prompt.command} {prompt.hint}")
    return values


def prompt_text(result: Any) -> str:
    """`prompts/get`'s messages as one user prompt: each message's text, a paragraph each
    (what is not text is named), bounded."""
    parts = []
    for message in list(getattr(result, "messages", None) or []):
        content = getattr(message, "content", None)
        kind = getattr(content, "type", "")
        if kind == "text":
            parts.append(str(getattr(content, "text", "")))
        elif kind == "resource":
            resource = getattr(content, "resource", None)
            text = getattr(resource, "text", None)
            parts.append(str(text) if isinstance(text, str) else f"[resource {getattr(resource, 'uri', '')}]")
        else:
            parts.append(f"[{kind or 'content'} not shown]")
    text = "\n\n".join(p for p in parts if p)
    if len(text) > MAX_PROMPT_TEXT_CHARS:
        text = text[:MAX_PROMPT_TEXT_CHARS] + f"\n… (cut at {MAX_PROMPT_TEXT_CHARS:,} characters)"
    return text
