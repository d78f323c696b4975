"""A command's arguments in its body, as Claude Code puts them there.

`$ARGUMENTS` is the whole string as typed; `$1` … `$9` are its words, split as a shell
would (quotes group, and are removed); `$ARGUMENTS[0]` … (0-based, Claude Code's newer form)
name the words too. A word the user did not give is empty, as Claude Code's command docs say.
A body that names none of these gets the arguments after it (Claude Code appends them too),
so `/fix the flaky test` still tells the model what to fix.
"""

from __future__ import annotations

import re
import shlex

ARGUMENTS = "$ARGUMENTS"
_PLACEHOLDER = re.compile(r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS|\$([1-9])(?![0-9])")


def words(args: str) -> list[str]:
    """The arguments split as a shell would; unbalanced quotes: split on white space."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def uses_arguments(body: str) -> bool:
    return _PLACEHOLDER.search(body) is not None


def substitute(body: str, args: str) -> tuple[str, bool]:
    """The body with its placeholders filled, and whether it had any."""
    args = args.strip()
    split = words(args)

    def fill(match: re.Match[str]) -> str:
        if match.group(1) is not None:
            index = int(match.group(1))
        elif match.group(2) is not None:
            index = int(match.group(2)) - 1
        else:
            return args
        return split[index] if index < len(split) else ""

    filled, count = _PLACEHOLDER.subn(fill, body)
    return filled, count > 0
