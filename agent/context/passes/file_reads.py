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

import functools
import json
import posixpath
import re
from typing import Any

from agent.context.facts import Facts, facts_of
from agent.context.passes.replace import replaced
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


PARSE_CACHE_SIZE = 65_536

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
    out, replaced_count = run(facts_of(messages), workspace=workspace, keep_recent=keep_recent,
                              placeholder=placeholder)
    return [f.message for f in out], replaced_count


def run(
    facts: list[Facts],
    *,
    workspace: str | None = None,
    keep_recent: int = 5,
    placeholder: str = DEFAULT_PLACEHOLDER,
) -> tuple[list[Facts], int]:
    """The pass on records (see `apply`); nothing replaced gives back the same list."""
    keep = max(0, keep_recent)
    root = _normalise_root(workspace)

    # Each successful read: (order key, position, its files, may it be replaced at all).
    reads: list[tuple[tuple[int, int], int, tuple[str, ...], bool]] = []
    by_file: dict[str, list[int]] = {}  # file -> indexes into `reads`
    calls_so_far: dict[str, tuple[str, str, str]] = {}  # call id -> (id, name, arguments)
    all_calls: dict[str, tuple[str, str, str]] | None = None  # built only if a result precedes its call
    last_time = 0
    for position, f in enumerate(facts):
        # A message without a timestamp takes the time of the one before (SPEC §12.4).
        time = last_time = f.time or last_time
        if f.role == "assistant":
            for call in f.calls:
                calls_so_far[call[0]] = call  # ids may be reused: a result belongs to the latest
            continue
        if f.role != "tool" or not f.tool_call_id:
            continue
        call = calls_so_far.get(f.tool_call_id)
        if call is None:
            if all_calls is None:
                all_calls = {}
                for g in facts:
                    for c in g.calls:
                        all_calls.setdefault(c[0], c)
            call = all_calls.get(f.tool_call_id)
        if call is None or call[1] != TOOL_NAME or not _succeeded(f):
            continue
        files, complete = _files_of(call[2], root)
        if not files:
            continue
        index = len(reads)
        reads.append(((time, position), position, files, complete))
        for file in files:
            by_file.setdefault(file, []).append(index)

    # A read survives when it is among the newest `keep` of at least one of its files.
    survives = [False] * len(reads)
    for indexes in by_file.values():
        if len(indexes) > keep:
            indexes.sort(key=lambda i: reads[i][0], reverse=True)
            newest = indexes[:keep]
        else:
            newest = indexes
        for i in newest:
            survives[i] = True

    out: list[Facts] | None = None
    replaced_count = 0
    size = len(placeholder)
    for i, (_, position, _, complete) in enumerate(reads):
        if survives[i] or not complete:
            continue
        f = facts[position]
        if f.length == size and f.content == placeholder:
            continue
        if out is None:
            out = list(facts)
        out[position] = replaced(f, placeholder)
        replaced_count += 1
    return (facts if out is None else out), replaced_count


def _succeeded(f: Facts) -> bool:
    """A successful read: not an error, not interrupted, not empty, no failed file in it."""
    ok = f.read_ok
    if ok is None:  # remembered on the record: a warm build asks again for every read
        content = f.content
        ok = f.read_ok = bool(f.status == "ok" and content and not content.lstrip().startswith("Error:")
                              and _ERROR_BLOCK not in content)
    return ok


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _files_of(arguments: str, root: str | None) -> tuple[tuple[str, ...], bool]:
    """The normalised files a call read (each once, in order) and whether every entry was usable.

    Cached: every build re-reads every call's arguments, and parsing dominated warm builds.
    """
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


def _normalise_root(workspace: str | None) -> str | None:
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
    return _normalise(path, _normalise_root(workspace))


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
        return path[len(prefix):]
    return path
