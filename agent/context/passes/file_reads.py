"""Pass 4: old reads of a file give way to its newest ones (seed 000, SPEC §4, §12).

Agents read the same file again and again (another range, after an edit, to check a
change), and each read stays in the context in full. Only the newest reads of a file tell
the model what the file says now; older ones repeat or contradict them and cost tokens. So
for every file only its newest `keep_recent` successful reads reach the API; older ones
become a one-line placeholder, and the model reads the file again if it needs more.

What is safe to drop, and what is not:
- only `filesystem-read` results are touched, found through their tool call; a result
  whose call, arguments or path cannot be made out is kept and not counted (seed §2.3);
- errors are always kept and never take one of the slots: they stop the model repeating a
  mistake (seed example 3). A batch whose output holds an error block for one of its files
  counts as an error too, and so does an interrupted or empty result;
- the same file named in different ways (`./src/a.py`, `src//a.py`, `src\\a.py`, the
  absolute path inside the workspace) is one file; this is string work only, the disk is
  never consulted, so the pass stays pure;
- a read of several files counts once for each of them but is replaced only when every one
  of them has `keep_recent` newer reads (SPEC §12.3): otherwise the newest read of some file
  would be lost. A batch naming an entry that cannot be made out is never replaced;
- newest means the larger `created_at`; equal timestamps, and a message without one (which
  takes the time of the message before it), are ordered by position (SPEC §12.4).

Storage is never touched: replaced results are copies, and the input list is not changed.
Running the pass on its own output changes nothing (a placeholder still counts as a read).
"""

from __future__ import annotations

import json
import posixpath
import re
from bisect import insort
from itertools import compress
from operator import is_not
from typing import Any

from agent.context.facts import Facts, facts_of
from agent.context.passes.replace import replaced
from agent.context.state import PassMemory
from agent.session.models import Message

NAME = "file_reads"

TOOL_NAME = "filesystem-read"
DEFAULT_PLACEHOLDER = "[该文件的历史读取内容已压缩,请参看最新读取结果]"

# In a batch read each file is its own block, separated by a blank line; a file that could
# not be read is a block starting `Error:` (agent/tools/fs_read.py). File lines always start
# with `N→`, so a blank line followed by `Error:` can only be such a block.
_ERROR_BLOCK = "\n\nError:"
_DRIVE = re.compile(r"^[A-Za-z]:/")
_SLASHES = re.compile(r"/{2,}")


def apply(
    messages: list[Message],
    *,
    workspace: str | None = None,
    keep_recent: int = 5,
    placeholder: str = DEFAULT_PLACEHOLDER,
) -> tuple[list[Message], int]:
    """Replace the successful reads of each file beyond its newest `keep_recent`.

    Returns a new list (the input and its messages are left as they were) and the number
    of results replaced by `placeholder`.
    """
    out, replaced_count = run(
        facts_of(messages), memory=PassMemory(), workspace=workspace, keep_recent=keep_recent, placeholder=placeholder
    )
    return [f.message for f in out], replaced_count


def run(
    facts: list[Facts],
    *,
    memory: PassMemory,
    workspace: str | None = None,
    keep_recent: int = 5,
    placeholder: str = DEFAULT_PLACEHOLDER,
) -> tuple[list[Facts], int]:
    """The pass on records (see `apply`); nothing replaced gives back the same list.

    The loop's next request is the last one's records plus a few: that is answered from
    the last run (see `_State`) in time for the new records only."""
    params = (normalise_root(workspace), max(0, keep_recent), placeholder)
    state = memory.last
    parsed = memory
    result = _extend(state, facts, parsed) if state is not None and state.params == params else None
    if result is None:
        result = _full(facts, params, parsed)
    memory.last = result
    return result.output, result.changed


Read = tuple[tuple[int, int], int, tuple[str, ...], bool]  # (order key, position, files, replaceable)


class _State:
    """A run of the pass, kept to extend it. `reads`: each successful read; `by_file`: per
    file, its reads as (order key, index into `reads`), oldest first; `survives`: per read;
    `results`: positions of every result of a read call (successful or not); `latest`: the
    latest call of each id; `unresolved`: ids of results no call was found for.

    Appending records only ever replaces more: a new read can push an old one out of its
    file's newest, never back in. So a longer list answers from the last run's output,
    looking at the new records and the files they read, unless a new call could belong to
    an old result (an id in `unresolved`). Earlier records may differ from the last run's
    only as copies with other content (the terminal pass's placeholders) of records that
    are no read results."""

    __slots__ = (
        "source",
        "output",
        "changed",
        "params",
        "reads",
        "by_file",
        "survives",
        "results",
        "latest",
        "unresolved",
        "last_time",
    )

    def __init__(
        self, source, output, changed, params, reads, by_file, survives, results, latest, unresolved, last_time
    ) -> None:
        self.source, self.output, self.changed, self.params = source, output, changed, params
        self.reads, self.by_file, self.survives, self.results = reads, by_file, survives, results
        self.latest, self.unresolved, self.last_time = latest, unresolved, last_time


def _newest(entries: list[tuple[tuple[int, int], int]], keep: int) -> list[tuple[tuple[int, int], int]]:
    return entries[-keep:] if keep else []


def _full(facts: list[Facts], params: tuple[str | None, int, str], parsed: PassMemory) -> _State:
    root, keep, placeholder = params
    reads: list[Read] = []
    results: set[int] = set()
    latest: dict[str, tuple[str, str, str]] = {}  # call id -> (id, name, arguments)
    all_calls: dict[str, tuple[str, str, str]] | None = None  # built only if a result precedes its call
    unresolved: set[str] = set()
    last_time = 0
    for position, f in enumerate(facts):
        # A message without a timestamp takes the time of the one before (SPEC §12.4).
        time = last_time = f.time or last_time
        if f.role == "assistant":
            for made in f.calls:
                latest[made[0]] = made  # ids may be reused: a result belongs to the latest
            continue
        if f.role != "tool" or not f.tool_call_id:
            continue
        call = latest.get(f.tool_call_id)
        if call is None:
            if all_calls is None:
                all_calls = {}
                for g in facts:
                    for c in g.calls:
                        all_calls.setdefault(c[0], c)
            call = all_calls.get(f.tool_call_id)
            if call is None:
                unresolved.add(f.tool_call_id)
        if call is not None and call[1] == TOOL_NAME:
            results.add(position)
            read = _read(f, call, time, position, root, parsed)
            if read is not None:
                reads.append(read)

    by_file: dict[str, list[tuple[tuple[int, int], int]]] = {}
    for index, (key, _, files, _) in enumerate(reads):
        for file in files:
            by_file.setdefault(file, []).append((key, index))
    # A read survives when it is among the newest `keep` of at least one of its files.
    survives = [False] * len(reads)
    for entries in by_file.values():
        entries.sort()
        for _, index in _newest(entries, keep):
            survives[index] = True
    out, changed = _replace(facts, facts, reads, survives, range(len(reads)), placeholder)
    return _State(facts, out, changed, params, reads, by_file, survives, results, latest, unresolved, last_time)


def _read(
    f: Facts, call: tuple[str, str, str], time: int, position: int, root: str | None, parsed: PassMemory
) -> Read | None:
    if not read_succeeded(f):
        return None
    files, complete = parsed_files(call[2], root, parsed)
    return ((time, position), position, files, complete) if files else None


def _replace(
    facts: list[Facts], base: list[Facts], reads: list[Read], survives: list[bool], indexes, placeholder: str
) -> tuple[list[Facts], int]:
    """`base` with the reads at `indexes` that do not survive replaced (a new list if any)."""
    out: list[Facts] | None = None
    changed = 0
    size = len(placeholder)
    for i in indexes:
        _, position, _, complete = reads[i]
        if survives[i] or not complete:
            continue
        f = facts[position]
        if f.length == size and f.content == placeholder:
            continue
        if out is None:
            out = list(base)
        out[position] = replaced(f, placeholder)
        changed += 1
    return (base if out is None else out), changed


def _extend(state: _State, facts: list[Facts], parsed: PassMemory) -> _State | None:
    """`state`'s run for `facts`, which starts with its records; None when it must run in full."""
    root, keep, placeholder = state.params
    start = len(state.source)
    if len(facts) < start:
        return None
    # Earlier records that differ: only content copies of records that are not read results.
    for position in compress(range(start), map(is_not, state.source, facts)):
        old, new = state.source[position], facts[position]
        if (old.origin or old) is not (new.origin or new) or position in state.results:
            return None
    latest, last_time, results = state.latest, state.last_time, state.results
    reads = state.reads
    for position in range(start, len(facts)):
        f = facts[position]
        time = last_time = f.time or last_time
        if f.role == "assistant":
            for call in f.calls:
                if call[0] in state.unresolved:
                    return None  # it may belong to an earlier result
                if latest is state.latest:
                    latest = dict(latest)
                latest[call[0]] = call
            continue
        if f.role != "tool" or not f.tool_call_id:
            continue
        call = latest.get(f.tool_call_id)
        if call is None:
            return None  # its call comes later, if at all: rare enough to run in full
        if call[1] == TOOL_NAME:
            if results is state.results:
                results = set(results)
            results.add(position)
            read = _read(f, call, time, position, root, parsed)
            if read is not None:
                if reads is state.reads:
                    reads = list(reads)
                reads.append(read)

    # New reads join their files' lists; only reads that were among a touched file's newest
    # can stop surviving, and only by the new ones.
    if state.output is state.source:
        base = facts
    elif facts is state.source:
        base = state.output
    else:
        base = _overlay(state, facts, start)
    if reads is state.reads:
        return _State(
            facts,
            base,
            state.changed,
            state.params,
            reads,
            state.by_file,
            state.survives,
            results,
            latest,
            state.unresolved,
            last_time,
        )
    by_file, survives = dict(state.by_file), state.survives + [False] * (len(reads) - len(state.reads))
    check: set[int] = set()
    for index in range(len(state.reads), len(reads)):
        key, _, files, _ = reads[index]
        check.add(index)
        for file in files:
            entries = by_file[file] = list(by_file.get(file, ()))
            check.update(i for _, i in _newest(entries, keep))
            insort(entries, (key, index))
    for index in check:
        survives[index] = any((reads[index][0], index) in _newest(by_file[file], keep) for file in reads[index][2])
    out, changed = _replace(facts, base, reads, survives, sorted(check), placeholder)
    return _State(
        facts,
        out,
        state.changed + changed,
        state.params,
        reads,
        by_file,
        survives,
        results,
        latest,
        state.unresolved,
        last_time,
    )


def _overlay(state: _State, facts: list[Facts], start: int) -> list[Facts]:
    """The last output with `facts`' records where they differ from the last input, plus the new ones."""
    out = state.output + facts[start:]
    for position in compress(range(start), map(is_not, state.source, facts)):
        out[position] = facts[position]
    return out


def read_succeeded(f: Facts) -> bool:
    """A successful read: not an error, not interrupted, not empty, no failed file in it."""
    ok = f.read_ok
    if ok is None:  # remembered on the record: a warm build asks again for every read
        content = f.content
        ok = f.read_ok = bool(
            f.status == "ok" and content and not content.lstrip().startswith("Error:") and _ERROR_BLOCK not in content
        )
    return ok


def parsed_files(arguments: str, root: str | None, memory: PassMemory) -> tuple[tuple[str, ...], bool]:
    """`_files_of`, remembered in the pass's memory: a full run (after a rewind or a reload)
    reads every call's arguments again, and parsing dominated such builds."""
    return memory.remembered((arguments, root), lambda: _files_of(arguments, root))


def _files_of(arguments: str, root: str | None) -> tuple[tuple[str, ...], bool]:
    """The normalised files a call read (each once, in order) and whether every entry was usable."""
    try:
        args = json.loads(arguments) if arguments else None
    except (ValueError, RecursionError):
        return (), False
    if not isinstance(args, dict):
        return (), False
    raw = args.get("filePath")
    if isinstance(raw, str) and raw.lstrip().startswith("["):
        # Models sometimes send the list as a JSON string; the tool accepts it, so do we.
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            parsed = raw
        if isinstance(parsed, list):
            raw = parsed
    entries: list[Any] = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    if not entries:
        return (), False
    files: dict[str, None] = {}  # ordered set
    complete = True
    for entry in entries:
        path = entry.get("path") if isinstance(entry, dict) else entry
        file = None
        if isinstance(path, str):
            file = _normalise(path, root)
        if file is None:
            complete = False
        else:
            files[file] = None
    return tuple(files), complete


def normalise_root(workspace: str | None) -> str | None:
    if workspace is None or not str(workspace).strip():
        return None
    root = _clean(str(workspace).strip())
    return root if _is_absolute(root) else None


def _clean(path: str) -> str:
    path = _SLASHES.sub("/", path.replace("\\", "/"))
    path = posixpath.normpath(path)
    if _DRIVE.match(path):
        path = path[0].upper() + path[1:]
    return path


def _is_absolute(path: str) -> bool:
    return path.startswith("/") or bool(_DRIVE.match(path))


def normalise_path(path: str, workspace: str | None = None) -> str | None:
    """The key a file is counted under, or None when the path names nothing.

    Backslashes become `/`, repeated slashes collapse, `.` and `..` fold lexically; a path
    inside the (absolute) workspace becomes relative to it (`.` for the workspace itself),
    a path outside it stays absolute. Pure string work: the disk is never consulted.
    """
    return _normalise(path, normalise_root(workspace))


def _normalise(path: str, root: str | None) -> str | None:
    path = path.strip()
    if not path or "\0" in path:
        return None
    path = _clean(path)
    if root is None:
        return path
    if not _is_absolute(path):
        path = _clean(root + "/" + path)
    if path == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    if path.startswith(prefix):
        return path[len(prefix) :]
    return path
