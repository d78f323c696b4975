"""A stored project-command prompt shown as the user typed it: `/name args`, not the
`<command name=…>` block the model got (agent/runtime/command_turn.py). The chat's history and
the first screen draw it so; the arguments are recovered from the command's current body.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_COMMAND = re.compile(r'<command name="([a-z0-9_-]+)">\n(.*?)\n</command>(?:\n\n(.*))?', re.S)
_COMMAND_NAME = re.compile(r'<command name="([a-z0-9_-]+)">')


def command_arguments(template: str, body: str) -> str | None:
    """What `$ARGUMENTS` stood for, given the command's body and its expansion (None: no match)."""
    parts = template.split("$ARGUMENTS")
    if len(parts) < 2:
        return None
    pattern = re.escape(parts[0]) + "(.*?)" + re.escape(parts[1]) + "".join(r"\1" + re.escape(p) for p in parts[2:])
    match = re.fullmatch(pattern, body, re.S)
    return match.group(1) if match else None


def shown_user_text(
    content: str, command_body: Callable[[str], str | None] | None = None, images: dict | None = None
) -> str:
    """A stored project-command expansion as the user typed it, `/name args`; else `content`.
    `command_body(name)` gives the command's current body, to recover substituted arguments.
    `images`: the message's meta; each attached image is shown as `[image: name, WxH]`."""
    if images and images.get("images"):
        from agent.images import refs_of, with_labels

        return with_labels(shown_user_text(content, command_body), refs_of(images))
    name = _COMMAND_NAME.match(content)
    if name is None:
        return content
    match = _COMMAND.fullmatch(content)
    if match is None:
        return f"/{name.group(1)}"
    name_text, body, appended = match.groups()
    args = appended or ""
    if not args and command_body is not None:
        template = command_body(name_text)
        args = (command_arguments(template, body) or "") if template else ""
    return f"/{name_text} {args.strip()}".rstrip()
