"""File results the file's own later history made stale are sent as one line (issue 31).

Seed 000 keeps the newest five reads of each file whole. Measured on recorded sessions
(bench/cost.py, with recall), what the model went on to use was almost never in a file
result that the same file's later history had replaced, and those results stay in every
request until the session ends. Three such results become a one-line note:

- a read whose line range a later read of the same file covers: the newer read shows all
  of it as the file is now (`file_read_placeholder`, seed 000's "see the newest read");
- a read made before an edit (or re-creation) of its file, once that edit is
  `EDITED_READ_GRACE_REQUESTS` requests old: the model has had its turns to use the old
  text, which no longer says what the file holds (measured: a grace of 5 requests kept
  recall at 0.991, a grace of 3 lost facts the model used right after its edit). It gets
  the same placeholder: seed 000 may retire the read later too, and a sent message whose
  text changed twice would cost the prompt cache twice;
- an edit's result (its diff) once the same file was read, edited or created again: the
  newer result shows the file as it is after it.

A read of another range stays, and so does every error: they may be the only copy of what
they show. A read of several files, or a result whose call cannot be made out, is never
replaced and makes nothing stale. Savings rules beyond the seeds: the pipeline runs this
pass under the `auto` cache policy only, and the policy holds its replacements of already-
sent messages while the prompt cache is warm, like the seeds' own. Pure: storage is never
touched, replaced results are copies.
"""

from __future__ import annotations

import json
import re
import sys
from itertools import compress
from operator import is_not

from agent.context.facts import Facts, facts_of
from agent.context.passes.file_reads import (
    DEFAULT_PLACEHOLDER,
    normalise_root,
    parsed_files,
    read_succeeded,
)
from agent.context.passes.file_reads import TOOL_NAME as READ_TOOL
from agent.context.passes.replace import replaced
from agent.context.state import PassMemory
from agent.session.models import Message

NAME = "stale_file_results"
EDIT_TOOLS = ("filesystem-edit", "filesystem-create")
EDITED_READ_GRACE_REQUESTS = 5
SUPERSEDED_EDIT_NOTE = "[Edit applied. The file was read or changed again later: the newer result shows it.]"
# An edit result shorter than this is kept: the note would save nothing.
EDIT_NOTE_MIN_CHARS = 2 * len(SUPERSEDED_EDIT_NOTE)
TO_THE_END = sys.maxsize
_HEADER = re.compile(r"📄 .*? \(lines (\d+)-(\d+)/(\d+|\?)\)")


def apply(
    messages: list[Message], *, workspace: str | None = None, read_placeholder: str = DEFAULT_PLACEHOLDER
) -> tuple[list[Message], int]:
    """The stale file results of `messages` as notes: a new list and how many were replaced."""
    out, changed = run(facts_of(messages), memory=PassMemory(), workspace=workspace, read_placeholder=read_placeholder)
    return [f.message for f in out], changed


class _State:
    """The last run, kept to extend it: the loop's next request is the last one's records
    plus a few, and new records only ever make more results stale, never fewer."""

    __slots__ = ("source", "output", "changed", "params", "calls", "reads", "edits", "due", "requests")

    def __init__(self, params: tuple[str | None, str]) -> None:
        self.params = params
        self.source: list[Facts] = []
        self.output: list[Facts] = []
        self.changed = 0
        self.calls: dict[str, tuple[str, str]] = {}  # call id → (tool, arguments) of file tools
        self.reads: dict[str, list[tuple[int, int, int]]] = {}  # file → (position, first, last) still whole
        self.edits: dict[str, list[int]] = {}  # file → positions of edit results still whole
        self.due: list[tuple[int, str, int]] = []  # (requests count, file, edit position): reads before it go then
        self.requests = 0  # assistant messages seen: one request each


def run(
    facts: list[Facts],
    *,
    memory: PassMemory,
    workspace: str | None = None,
    read_placeholder: str = DEFAULT_PLACEHOLDER,
) -> tuple[list[Facts], int]:
    """The pass on records (see `apply`); nothing replaced gives back the same list."""
    params = (normalise_root(workspace), read_placeholder)
    state: _State | None = memory.last
    changed_before = _upstream_changes(state, facts, params)
    if state is None or changed_before is None:
        state = _State(params)
        start, output = 0, list(facts)
    else:
        start = len(state.source)
        output = state.output + facts[start:]
        for position in changed_before:
            # Another pass replaced a result since (seed 000's placeholder on a read): it
            # stands, unless this pass had replaced the record itself. A record of ours that
            # seed 000 retired too is seed 000's now: a run from scratch does not count it.
            if state.output[position] is state.source[position]:
                output[position] = facts[position]
            elif facts[position].content == read_placeholder:
                output[position] = facts[position]
                state.changed -= 1
    for position in range(start, len(facts)):
        _see(state, facts, output, position, memory)
    state.source, state.output = facts, output
    memory.last = state
    return (output if state.changed else facts), state.changed


def _upstream_changes(state: _State | None, facts: list[Facts], params: tuple[str | None, str]) -> list[int] | None:
    """Where `facts` differs from the last run's input, when the last run can be extended:
    `facts` continues it and differs only in tool results made copies of by the passes
    before this one (the seeds' placeholders). None: run from scratch."""
    if state is None or state.params != params or len(facts) < len(state.source):
        return None
    source = state.source
    changed = list(compress(range(len(source)), map(is_not, source, facts)))
    for position in changed:
        before, now = source[position], facts[position]
        if now.id != before.id or now.role != "tool" or now.tool_call_id != before.tool_call_id:
            return None  # another history (a rewind, an edited message)
    return changed


def _see(state: _State, facts: list[Facts], output: list[Facts], position: int, memory: PassMemory) -> None:
    f = facts[position]
    if f.role == "assistant":
        state.requests += 1
        _retire_edited_reads(state, facts, output)
        for call_id, name, arguments in f.calls or ():
            if name == READ_TOOL or name in EDIT_TOOLS:
                state.calls[call_id] = (name, arguments)
        return
    call = state.calls.get(f.tool_call_id or "") if f.role == "tool" else None
    if call is None or not read_succeeded(f):
        return
    name, arguments = call
    if f.content == state.params[1]:
        # Seed 000 retired the read: its lines are gone, but the file was read then (as a
        # run that saw the read whole, before seed 000 retired it, counted).
        files, complete = parsed_files(arguments, state.params[0], memory)
        if len(files) == 1 and complete:
            _touch(state, facts, output, files[0])
        return
    span = _span(arguments, f.content or "", state.params[0], memory)
    if span is None:
        return
    file, first, last = span
    _touch(state, facts, output, file)
    if name == READ_TOOL:
        kept = state.reads.setdefault(file, [])
        for entry in [e for e in kept if first <= e[1] and e[2] <= last]:
            _replace(state, facts, output, entry[0], state.params[1])
            kept.remove(entry)
        kept.append((position, first, last))
        return
    state.due.append((state.requests + EDITED_READ_GRACE_REQUESTS, file, position))
    if f.length >= EDIT_NOTE_MIN_CHARS:
        state.edits.setdefault(file, []).append(position)


def _touch(state: _State, facts: list[Facts], output: list[Facts], file: str) -> None:
    """Whatever touches the file again makes its earlier edit results stale."""
    for older in state.edits.pop(file, ()):
        _replace(state, facts, output, older, SUPERSEDED_EDIT_NOTE)


def _retire_edited_reads(state: _State, facts: list[Facts], output: list[Facts]) -> None:
    """The reads made before an edit whose grace is over: `EDITED_READ_GRACE_REQUESTS`
    assistant messages (one request each) came after the edit's result. Done in the scan, at
    the message that ends the grace, so a run extended from the last one decides as a run
    from scratch does."""
    if not state.due or state.due[0][0] > state.requests:
        return
    ready = [d for d in state.due if d[0] <= state.requests]
    state.due = [d for d in state.due if d[0] > state.requests]
    for _, file, edit_position in ready:
        kept = state.reads.get(file, [])
        for entry in [e for e in kept if e[0] < edit_position]:
            _replace(state, facts, output, entry[0], state.params[1])
            kept.remove(entry)


def _replace(state: _State, facts: list[Facts], output: list[Facts], position: int, note: str) -> None:
    if facts[position].content == state.params[1]:
        return  # seed 000 retired it since this pass saw it: it is a placeholder already
    output[position] = replaced(facts[position], note)
    state.changed += 1


def _span(arguments: str, content: str, root: str | None, memory: PassMemory) -> tuple[str, int, int] | None:
    """The one file a call names and the lines its result showed (`TO_THE_END`: through the
    last line), or None when it names several or none."""
    files, complete = parsed_files(arguments, root, memory)
    if len(files) != 1 or not complete:
        return None
    header = _HEADER.match(content)
    if header is not None:
        first, last, total = int(header[1]), int(header[2]), header[3]
        return files[0], first, TO_THE_END if total != "?" and last >= int(total) else last
    try:
        args = json.loads(arguments)
    except (ValueError, RecursionError):
        return None
    if not isinstance(args, dict) or not isinstance(args.get("filePath"), str):
        return None  # a list names its ranges per entry, and only the header says what was shown
    start, end = args.get("startLine"), args.get("endLine")
    first = start if isinstance(start, int) and start > 0 else 1
    return files[0], first, end if isinstance(end, int) and end >= first else TO_THE_END
