"""One session's context files (seed 004, SPEC §6): list, read, tail, grep, history, eviction.

SQLite is the source of truth. An artifact is a stored tool result longer than
`max_inline_chars`; its file is built from the message on first use and may be evicted and
rebuilt (same bytes) at any time. The tool catalog is built the same way from the tool
definitions. History archives are written when a range is condensed and are kept.

An id resolves only through `kind_of` and this session's own data (its messages, its
manifest), never as a path, and every file is opened inside the session folder without
following symlinks (security.py). Blocking file work runs in threads; ripgrep runs as a
subprocess with a time limit (grep.py).
"""

from __future__ import annotations

import asyncio
import builtins
import functools
import hashlib
import json
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from agent.context.files import artifacts, manifest, reading, security
from agent.context.files import grep as grepping
from agent.context.files.refs import ContextRef, catalog_ref_id, history_ref_id, kind_of
from agent.context.files.security import ContextFileError, shown

if TYPE_CHECKING:
    from agent.settings.schema import ContextSettings

__all__ = ["ContextFileError", "ContextFiles", "GrepMatch", "GrepResult", "ReadResult", "TailResult"]

LIST_MAX = 500
GREP_MAX_RESULTS = 200
GREP_MAX_CONTEXT_LINES = 20
TOUCH_EVERY_MS = 60_000  # last-access times are for LRU: a minute's precision is plenty
CATALOG_PATH = "catalog/tools.json"
KINDS = ("artifact", "history", "catalog")


def _now() -> int:
    return int(time.time() * 1000)


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, int(value)))


class ReadResult(BaseModel):
    id: str
    offset: int
    limit: int
    done: bool
    content: str
    nextOffset: int
    byteSize: int


class TailResult(BaseModel):
    id: str
    lines: int
    content: str


class GrepMatch(BaseModel):
    line: int
    content: str
    before: list[str] = []
    after: list[str] = []


class GrepResult(BaseModel):
    id: str
    totalMatches: int
    matches: list[GrepMatch]
    truncated: bool


@dataclass
class _Target:
    """What an id names: its file, and how to build it when it is lazy."""

    ref_id: str
    kind: str
    path: str
    mime: str
    build: Callable[[], Awaitable[bytes]] | None = None  # None: eager, the manifest is the record
    source: dict[str, Any] = field(default_factory=dict)
    entry: dict[str, Any] = field(default_factory=dict)  # manifest fields kept when (re)built


class ContextFiles:
    def __init__(
        self,
        store: Any,
        session_id: str,
        *,
        settings: ContextSettings,
        tool_definitions: Callable[[], list[dict]] | None = None,
        root: Path | None = None,
    ) -> None:
        if root is None:
            from agent.paths import data_dir

            root = data_dir() / "context"
        self.store = store
        self.session_id = security.check_session_id(session_id)
        self.settings = settings
        self.tool_definitions = tool_definitions
        self.root = Path(root)
        self.folder = self.root / self.session_id
        self._lock = asyncio.Lock()
        self._index = artifacts.ArtifactIndex(store, self.session_id)

    # -- listing ----------------------------------------------------------------------
    async def list(self, kind: str | None = None, limit: int = 50) -> list[ContextRef]:
        """This session's refs, newest first."""
        if kind is not None and kind not in KINDS:
            raise ContextFileError(f"unknown kind {shown(kind)}; use one of {', '.join(KINDS)}")
        limit = _clamp(limit, 1, LIST_MAX)
        refs: list[ContextRef] = []
        if kind in (None, "artifact"):
            infos = await self._index.newest(self.settings.max_inline_chars, limit)
            calls = await self._index.calls_of(infos)
            refs += [
                ContextRef(
                    id=i.ref_id,
                    kind="artifact",
                    mimeType=i.mime,
                    byteSize=i.size,
                    createdAt=i.created_at,
                    hint=artifacts.hint(i, calls.get(i.ref_id), redact=self.settings.redact),
                )
                for i in infos
            ]
        if kind in (None, "history"):
            data = await asyncio.to_thread(manifest.load, self.folder)
            refs += [
                ContextRef(
                    id=ref,
                    kind="history",
                    mimeType=e.get("mimeType"),
                    byteSize=e.get("size"),
                    createdAt=int(e.get("created") or 0),
                    hint=str(e.get("hint") or "conversation archive"),
                )
                for ref, e in data["entries"].items()
                if isinstance(e, dict) and e.get("kind") == "history"
            ]
        if kind in (None, "catalog") and self.tool_definitions is not None:
            payload = self._catalog_bytes()
            session = await self.store.get_session(self.session_id)
            refs.append(
                ContextRef(
                    id=catalog_ref_id(self.session_id),
                    kind="catalog",
                    mimeType="application/json",
                    byteSize=len(payload),
                    createdAt=session.created_at if session else 0,
                    hint=f"tool catalog: the {len(self.tool_definitions())} tool definitions sent to the model",
                )
            )
        refs.sort(key=lambda r: r.createdAt, reverse=True)
        return refs[:limit]

    # -- reading ----------------------------------------------------------------------
    async def read(self, ref_id: str, offset: int = 0, limit: int | None = None) -> ReadResult:
        if offset < 0:
            raise ContextFileError("offset must be 0 or more")
        cfg = self.settings
        limit = _clamp(limit if limit is not None else cfg.files_read_default_bytes, 1, cfg.files_read_max_bytes)
        page = await self._on_file(ref_id, lambda fd: reading.read_page(fd, offset, limit))
        return ReadResult(
            id=ref_id,
            offset=page.start,
            limit=limit,
            done=page.done,
            content=page.content,
            nextOffset=page.next_offset,
            byteSize=page.size,
        )

    async def tail(self, ref_id: str, lines: int | None = None) -> TailResult:
        cfg = self.settings
        lines = _clamp(lines if lines is not None else cfg.files_tail_default_lines, 1, cfg.files_tail_max_lines)
        budget = cfg.files_read_max_bytes
        tail = await self._on_file(ref_id, lambda fd: reading.tail_lines(fd, lines, budget))
        content = tail.content
        if tail.capped:
            content = (
                f"[tail capped at {budget:,} bytes: this text starts at byte {tail.start:,}; "
                f"use context-read with a smaller offset for what comes before]\n{content}"
            )
        return TailResult(id=ref_id, lines=tail.lines, content=content)

    async def grep(
        self,
        ref_id: str,
        pattern: str,
        *,
        max_results: int | None = None,
        context_lines: int = 0,
        case_sensitive: bool = False,
    ) -> GrepResult:
        cfg = self.settings
        grepping.compile_pattern(pattern, case_sensitive)  # refuse a bad pattern before building files
        max_results = _clamp(
            max_results if max_results is not None else cfg.files_grep_max_results, 1, GREP_MAX_RESULTS
        )
        context_lines = _clamp(context_lines or 0, 0, GREP_MAX_CONTEXT_LINES)
        for attempt in range(2):
            target = await self._materialise(ref_id)
            try:
                found = await grepping.grep(
                    functools.partial(security.open_file, self.folder, target.path),
                    pattern,
                    max_results=max_results,
                    context_lines=context_lines,
                    case_sensitive=case_sensitive,
                    timeout=cfg.files_grep_timeout,
                )
                break
            except FileNotFoundError:  # evicted meanwhile (another process): build it again
                if attempt or target.build is None:
                    raise ContextFileError(f"context file {shown(ref_id)} is missing") from None
            except OSError as exc:
                raise ContextFileError(f"cannot read context file {shown(ref_id)}: {exc.strerror or exc}") from None
        matches = [GrepMatch(line=h.line, content=h.content, before=h.before, after=h.after) for h in found.hits]
        return GrepResult(id=ref_id, totalMatches=found.total, matches=matches, truncated=found.total > len(matches))

    async def _on_file(self, ref_id: str, work: Callable[[int], Any]) -> Any:
        """Run `work(fd)` in a thread on the id's file, building it first if needed."""
        for attempt in range(2):
            target = await self._materialise(ref_id)
            try:
                return await asyncio.to_thread(self._with_fd, target.path, work)
            except FileNotFoundError:
                if attempt or target.build is None:
                    raise ContextFileError(f"context file {shown(ref_id)} is missing") from None
            except OSError as exc:
                raise ContextFileError(f"cannot read context file {shown(ref_id)}: {exc.strerror or exc}") from None
        raise AssertionError("unreachable")

    def _with_fd(self, path: str, work: Callable[[int], Any]) -> Any:
        fd = security.open_file(self.folder, path)
        try:
            return work(fd)
        finally:
            os.close(fd)

    # -- resolving and building -------------------------------------------------------
    async def _target(self, ref_id: str, entries: dict[str, Any]) -> _Target:
        kind = kind_of(ref_id)
        if kind == "artifact":
            info = await self._index.get(ref_id, self.settings.max_inline_chars)
            if info is not None:
                return _Target(
                    ref_id,
                    kind,
                    info.path,
                    info.mime,
                    build=lambda: self._artifact_bytes(info),
                    source={"messageId": info.message_id},
                )
        elif kind == "history":
            # The archive is the record; when its file (or its entry: an import of an older
            # export) is missing it is rebuilt from the store: the summary naming this id.
            entry = entries.get(ref_id)
            if isinstance(entry, dict) and entry.get("kind") == "history":
                kept = {
                    "policy": "eager",
                    "hint": entry.get("hint") or "conversation archive",
                    "created": int(entry.get("created") or _now()),
                }
                return _Target(
                    ref_id,
                    kind,
                    str(entry.get("path")),
                    str(entry.get("mimeType") or "text/markdown"),
                    build=lambda: self._history_bytes(ref_id),
                    source=entry.get("source") or {},
                    entry=kept,
                )
            found = await self._history_range(ref_id)
            if found is not None:
                summary, replaced = found
                stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(summary.created_at / 1000))
                when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(summary.created_at / 1000))
                kept = {
                    "policy": "eager",
                    "created": summary.created_at,
                    "hint": f"conversation archive: {len(replaced)} messages condensed {when}",
                }
                return _Target(
                    ref_id,
                    kind,
                    f"history/archive/{stamp}-{ref_id[5:]}.md",
                    "text/markdown",
                    build=lambda: self._history_bytes(ref_id),
                    source={"first": replaced[0].id, "last": replaced[-1].id},
                    entry=kept,
                )
        elif kind == "catalog" and ref_id == catalog_ref_id(self.session_id) and self.tool_definitions is not None:

            async def build() -> bytes:
                return self._catalog_bytes()

            return _Target(
                ref_id, kind, CATALOG_PATH, "application/json", build=build, source={"toolDefinitions": True}
            )
        raise ContextFileError(f"unknown context id {shown(ref_id)}; context-list shows this session's ids")

    async def _artifact_bytes(self, info: artifacts.ArtifactInfo) -> bytes:
        message = await self.store.get_message(info.message_id)
        if message is None or message.session_id != self.session_id:
            raise ContextFileError(f"unknown context id {shown(info.ref_id)}")
        return artifacts.render(info, message.content or "", redact=self.settings.redact)

    async def _history_range(self, ref_id: str) -> tuple[Any, builtins.list[Any]] | None:
        """(the summary whose condensed range has this id, the messages it replaced), or None.

        The id comes from the summary's `meta.condensed` first/last ids (as the summary's text
        names it); the range is walked back from the summary's parent along parent links, which
        an import keeps consistent even when it replaces message ids."""
        messages = await self.store.all_messages(self.session_id)
        by_id = {m.id: m for m in messages}
        for summary in reversed(messages):
            condensed = (summary.meta or {}).get("condensed") if summary.kind == "summary" else None
            if not isinstance(condensed, dict) or not condensed.get("first_id") or not condensed.get("last_id"):
                continue
            if history_ref_id(str(condensed["first_id"]), str(condensed["last_id"])) != ref_id:
                continue
            count = condensed.get("count") if isinstance(condensed.get("count"), int) else None
            chain: list[Any] = []
            current = by_id.get(summary.parent_id or "")
            while current is not None and len(chain) < len(by_id):
                chain.append(current)
                if (count is not None and len(chain) >= count) or current.id == condensed["first_id"]:
                    break
                current = by_id.get(current.parent_id or "")
            if chain:
                return summary, chain[::-1]
        return None

    async def _history_bytes(self, ref_id: str) -> bytes:
        from agent.context.condense_prompt import history_markdown

        found = await self._history_range(ref_id)
        if found is None:
            raise ContextFileError(f"context file {shown(ref_id)} is missing and cannot be rebuilt from the session")
        summary, replaced = found
        session = await self.store.get_session(self.session_id)
        text = history_markdown(replaced, workspace=Path(session.cwd if session else ""), now_ms=summary.created_at)
        return (security.redact(text) if self.settings.redact else text).encode("utf-8", errors="surrogatepass")

    def _catalog_bytes(self) -> bytes:
        text = json.dumps(self.tool_definitions() if self.tool_definitions else [], ensure_ascii=False, indent=2) + "\n"
        return (security.redact(text) if self.settings.redact else text).encode("utf-8")

    async def _materialise(self, ref_id: str) -> _Target:
        """Resolve the id and make sure its file exists (building a lazy one), under the lock."""
        async with self._lock:
            data = await asyncio.to_thread(manifest.load, self.folder)
            target = await self._target(ref_id, data["entries"])
            entry = data["entries"].get(ref_id)
            now = _now()
            if target.build is not None:
                stale = not isinstance(entry, dict) or entry.get("path") != target.path
                if not stale:
                    size = None if target.kind == "history" else entry.get("size")  # the record: any size
                    stale = not await asyncio.to_thread(self._present, target.path, size)
                payload = None
                if target.kind == "catalog":  # cheap to build; the tool set may have changed
                    payload = await target.build()
                    stale = stale or hashlib.sha256(payload).hexdigest() != entry.get("sha256")
                if stale:
                    payload = payload if payload is not None else await target.build()
                    try:
                        await asyncio.to_thread(security.write_atomic, self.folder, target.path, payload)
                    except OSError as exc:
                        raise ContextFileError(
                            f"cannot write context file {shown(ref_id)}: {exc.strerror or exc}"
                        ) from None
                    entry = data["entries"][ref_id] = {
                        "kind": target.kind,
                        "path": target.path,
                        "source": target.source,
                        "sha256": hashlib.sha256(payload).hexdigest(),
                        "size": len(payload),
                        "created": now,
                        "accessed": now,
                        "policy": "lazy",
                        "mimeType": target.mime,
                        **target.entry,
                    }
                    await asyncio.to_thread(manifest.save, self.folder, data)
                    await self._evict(keep={(self.session_id, ref_id)})
                    return target
            if isinstance(entry, dict) and now - int(entry.get("accessed") or 0) > TOUCH_EVERY_MS:
                entry["accessed"] = now
                await asyncio.to_thread(manifest.save, self.folder, data)
            return target

    def _present(self, path: str, size: Any) -> bool:
        """The file is there with the size recorded, if one is given (a symlink or worse raises,
        refusing it)."""
        try:
            fd = security.open_file(self.folder, path)
        except FileNotFoundError:
            return False
        try:
            return size is None or os.fstat(fd).st_size == size
        finally:
            os.close(fd)

    # -- history and eviction ---------------------------------------------------------
    async def add_history(self, first_message_id: str, last_message_id: str, text: str, *, hint: str) -> ContextRef:
        """Write a condensed range of the conversation now (eager: it is the record, never evicted)."""
        ref_id = history_ref_id(first_message_id, last_message_id)
        body = security.redact(text) if self.settings.redact else text
        payload = body.encode("utf-8", errors="surrogatepass")
        hint = " ".join(hint.split())[: artifacts.HINT_CHARS] or "conversation archive"
        async with self._lock:
            data = await asyncio.to_thread(manifest.load, self.folder)
            old = data["entries"].get(ref_id)
            now = _now()
            if isinstance(old, dict) and old.get("kind") == "history":
                path, created = str(old.get("path")), int(old.get("created") or now)
            else:
                stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(now / 1000))
                path, created = f"history/archive/{stamp}-{ref_id[5:]}.md", now
            await asyncio.to_thread(security.write_atomic, self.folder, path, payload)
            data["entries"][ref_id] = {
                "kind": "history",
                "path": path,
                "source": {"first": first_message_id, "last": last_message_id},
                "sha256": hashlib.sha256(payload).hexdigest(),
                "size": len(payload),
                "created": created,
                "accessed": now,
                "policy": "eager",
                "mimeType": "text/markdown",
                "hint": hint,
            }
            await asyncio.to_thread(manifest.save, self.folder, data)
        return ContextRef(
            id=ref_id, kind="history", mimeType="text/markdown", byteSize=len(payload), createdAt=created, hint=hint
        )

    async def evict(self) -> int:
        """Apply the TTL and the size cap over the whole context root; returns files removed."""
        async with self._lock:
            return await self._evict(keep=set())

    async def _evict(self, keep: set[tuple[str, str]]) -> int:
        cfg = self.settings
        return await asyncio.to_thread(
            manifest.evict,
            self.root,
            max_bytes=cfg.files_cache_max_bytes,
            ttl_days=cfg.files_ttl_days,
            now=_now(),
            keep=keep,
        )
