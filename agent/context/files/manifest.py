"""Each session folder's `manifest.json`, and eviction over all of them (seed 004, SPEC §12.9).

The manifest says which files exist: ref id → relative path, source (message id or history
range), sha256, size, created, last access, policy. Lazy entries (artifacts, the tool
catalog) are a cache of SQLite: eviction deletes their files and entries, and the next
access rebuilds them. Eager entries (history archives, written when a range is condensed)
are a record and are never evicted.

Eviction works on the whole context root, not one session: the size cap (1 GiB by default)
is a budget for the cache on this machine, so a thousand sessions under their own caps
could not add up to a thousand GiB. The manifest is re-read before every change and
written atomically, so another process's eviction at worst costs a rebuild.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agent.context.files import security

MANIFEST = "manifest.json"
VERSION = 1
DAY_MS = 24 * 60 * 60 * 1000


def empty() -> dict[str, Any]:
    return {"version": VERSION, "entries": {}}


def load(session_dir: Path) -> dict[str, Any]:
    """The manifest, or an empty one when it is missing or unreadable (it is rebuilt as used)."""
    try:
        fd = security.open_file(session_dir, MANIFEST)
    except (FileNotFoundError, NotADirectoryError, security.ContextFileError):
        return empty()
    try:
        with os.fdopen(fd, "rb") as f:
            data = json.loads(f.read())
    except (OSError, ValueError):
        return empty()
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        return empty()
    return data


def save(session_dir: Path, data: dict[str, Any]) -> None:
    security.write_atomic(session_dir, MANIFEST, json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8"))


def evict(root: Path, *, max_bytes: int, ttl_days: float, now: int, keep: set[tuple[str, str]] = frozenset()) -> int:  # type: ignore[assignment]
    """Remove lazy files unused for `ttl_days`, then least recently used ones while the root
    holds more than `max_bytes`. `keep` holds (session id, ref id) pairs in use right now.
    Returns how many files were removed."""
    try:
        children = sorted(root.iterdir())
    except OSError:
        return 0
    manifests: dict[str, tuple[Path, dict[str, Any]]] = {}
    for child in children:
        if child.is_symlink() or not child.is_dir():
            continue
        try:
            security.check_session_id(child.name)
        except security.ContextFileError:
            continue
        manifests[child.name] = (child, load(child))

    removed = 0
    dropped: dict[str, dict[str, str]] = {}  # session → {ref: path}
    cutoff = now - ttl_days * DAY_MS
    total = 0
    candidates: list[tuple[int, str, str]] = []  # (last access, session, ref)
    for session, (folder, data) in manifests.items():
        for ref, entry in list(data["entries"].items()):
            if not isinstance(entry, dict):
                continue
            lazy = entry.get("policy") == "lazy" and (session, ref) not in keep
            accessed = int(entry.get("accessed") or entry.get("created") or 0)
            if lazy and accessed < cutoff:
                removed += _drop(folder, data, ref, dropped.setdefault(session, {}))
                continue
            total += int(entry.get("size") or 0)
            if lazy:
                candidates.append((accessed, session, ref))
    for _accessed, session, ref in sorted(candidates):
        if total <= max_bytes:
            break
        folder, data = manifests[session]
        total -= int(data["entries"][ref].get("size") or 0)
        removed += _drop(folder, data, ref, dropped.setdefault(session, {}))
    for session, refs in dropped.items():
        folder = manifests[session][0]
        fresh = load(folder)  # re-read: keep whatever was added meanwhile, drop only these
        for ref, path in refs.items():
            if isinstance(fresh["entries"].get(ref), dict) and fresh["entries"][ref].get("path") == path:
                del fresh["entries"][ref]
        save(folder, fresh)
    return removed


def _drop(folder: Path, data: dict[str, Any], ref: str, dropped: dict[str, str]) -> int:
    entry = data["entries"].pop(ref)
    dropped[ref] = entry.get("path", "")
    try:
        return int(security.remove_file(folder, entry.get("path", "")))
    except (OSError, security.ContextFileError):
        return 0
