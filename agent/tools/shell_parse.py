"""Shell commands parsed for approvals: the simple commands bash will run, or why we cannot tell.

`parse_command` is conservative by construction. tree-sitter-bash gives the structure (lists,
pipelines, simple commands, redirections: agent/tools/shell_walk.py); the value of every word
is then computed by our own strict evaluator from the raw text (agent/tools/shell_words.py),
for a small subset of bash whose meaning is exact: plain characters, `\\x` escapes, '…' and
"…" without `$` or backquotes. Anything outside that subset, anything the parser reports as an
error, any node type the walk does not list and any place where the parser's word boundaries
might differ from bash's is *unsafe*: the command asks. So is a command that hands a string to
another program or changes the shell (agent/tools/shell_runners.py).
Why not trust the parser alone: tree-sitter-bash reads `"$\\<newline>(cmd)"` as a plain
string while bash joins the backslash-newline and runs `cmd` (SPEC §8), so a backslash-newline
anywhere makes a command unsafe before it is parsed at all.

Which parsed commands only read is agent/tools/read_only.py. Nothing here touches the file
system.

tree-sitter is imported on first use only: never on the path to the first screen.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from agent.tools.shell_runners import runs_other_code
from agent.tools.shell_walk import CommandWalk, SimpleCommand
from agent.tools.shell_words import Unsafe, raw_problem

# Longer commands always ask: no real command needs more (the kernel's limit for one
# argument, `bash -c <command>`, is 128 KiB).
MAX_COMMAND_BYTES = 128 * 1024


@dataclass(frozen=True)
class ParsedCommand:
    commands: tuple[SimpleCommand, ...] = ()
    unsafe: str = ""  # why the command cannot be fully accounted for; "" when it can


# -- the parser ------------------------------------------------------------------------

_parser_lock = threading.Lock()
_parser = None


def _parse_tree(source: bytes):
    global _parser
    with _parser_lock:  # a tree-sitter Parser is not thread-safe
        if _parser is None:
            from tree_sitter_language_pack import get_parser

            _parser = get_parser("bash")
        return _parser.parse(source)


def parse_command(command: str) -> ParsedCommand:
    """The simple commands of `command`, or why it cannot be fully accounted for."""
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError:
        return ParsedCommand(unsafe="it contains characters that are not valid Unicode")
    if len(source) > MAX_COMMAND_BYTES:
        return ParsedCommand(unsafe="the command is too long to check")
    if not command.strip():
        return ParsedCommand(unsafe="it is empty")
    problem = raw_problem(command)
    if problem:
        return ParsedCommand(unsafe=problem)
    try:
        tree = _parse_tree(source)
    except Exception as exc:  # noqa: BLE001 - no parser (or a broken one): nothing can be checked
        return ParsedCommand(unsafe=f"it cannot be parsed (the shell parser failed: {type(exc).__name__})")
    walk = CommandWalk(source)
    try:
        if tree.root_node.has_error:
            raise Unsafe("it cannot be parsed")
        walk.run(tree.root_node)
        if not walk.commands:
            raise Unsafe("it is empty")
        for cmd in walk.commands:
            reason = runs_other_code(cmd.words)
            if reason:
                raise Unsafe(reason)
    except Unsafe as exc:
        return ParsedCommand(tuple(walk.commands), unsafe=str(exc))
    except Exception as exc:  # noqa: BLE001 - a tree this walk does not expect: ask, never crash
        return ParsedCommand(unsafe=f"it cannot be parsed ({type(exc).__name__})")
    return ParsedCommand(tuple(walk.commands))
