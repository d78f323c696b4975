"""`cairn session list | export | import` (SPEC §11): sessions as files, for scripts and people.

agent/cli.py parses the arguments and imports this module only when a session command runs,
so the store, aiosqlite and pydantic stay off the path to the TUI's first screen.
Bad input (unknown session, unreadable file, wrong format) prints `Error: …` on stderr and
returns 2; nothing here lets a traceback reach the terminal.

Titles (the model writes them), first prompts, folders and imported text come from outside:
the listing and every line on stderr are made inert (agent/fs/terminal_text.py), always (they
are for people; scripts read `--json`); an export is inert only when stdout is a terminal
(piped to a file it must import again exactly); JSON keeps its values, written inert.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from agent.fs.terminal_text import inert, inert_json, is_terminal

log = logging.getLogger("agent.session.cli")

PREVIEW_CHARS = 60


class _BadInput(Exception):
    """A user mistake: shown as `Error: …`, exit code 2."""


def _write_stdout(text: str) -> None:
    """UTF-8 bytes whatever the locale: an export piped to a file must import again exactly.
    On a terminal, inert text."""
    if is_terminal(sys.stdout):
        text = inert(text)
    sys.stdout.flush()
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.buffer.flush()


def _say(text: str) -> None:
    """A line on stderr, inert."""
    print(inert(text), file=sys.stderr)


def _local(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M") if ms > 0 else "-"


def _with_subagents(summaries: list[Any]) -> list[tuple[int, Any]]:
    """(depth, summary) with each subagent's session right under the session it worked for,
    oldest first there; one whose parent is not listed stays at the top."""
    listed = {s.session.id for s in summaries}
    children: dict[str, list] = {}
    for s in summaries:
        parent = s.session.parent_session_id
        if s.session.agent and parent in listed:
            children.setdefault(parent, []).append(s)
    out: list[tuple[int, Any]] = []

    def add(summary, depth: int) -> None:
        out.append((depth, summary))
        for child in sorted(children.get(summary.session.id, []), key=lambda c: c.session.created_at):
            add(child, depth + 1)

    for s in summaries:
        if not (s.session.agent and s.session.parent_session_id in listed):
            add(s, 0)
    return out


async def _list(store, args: argparse.Namespace) -> int:
    # A session without a message (a launch quit at once, or one still starting) is not listed.
    summaries = _with_subagents(await store.list_summaries(with_messages=True, subagents=True))
    worktrees = await store.worktrees(removed=True)  # a session on a worktree: its cwd is in one

    def worktree(cwd: str):
        return next((w for w in reversed(worktrees) if w.holds(cwd)), None)

    if args.json:
        rows = []
        for _, s in summaries:
            wt = worktree(s.session.cwd)
            rows.append(
                {
                    **s.session.model_dump(),
                    "first_prompt": s.first_prompt,
                    "message_count": s.message_count,
                    "worktree": wt.model_dump(include={"name", "branch", "repo", "removed_at"}) if wt else None,
                }
            )
        _write_stdout(inert_json(json.dumps(rows, ensure_ascii=False)) + "\n")
        return 0
    lines = []
    for depth, s in summaries:
        label = " ".join((s.session.title or s.first_prompt or "(empty)").split())[:PREVIEW_CHARS]
        if depth:  # a subagent's session, under the session it worked for
            lines.append(f"{'  ' * depth}└ {s.session.id}  {s.message_count:>5} msgs  {label}")
            continue
        wt = worktree(s.session.cwd)
        on = f"  (worktree {wt.name}{', removed' if wt.removed_at else ''})" if wt else ""
        lines.append(
            f"{s.session.id}  {_local(s.session.updated_at)}  {s.message_count:>5} msgs  {label}  [{s.session.cwd}]{on}"
        )
    _write_stdout(inert("\n".join(lines) + "\n") if lines else "")  # titles: the model's words
    if not lines:
        _say("No sessions yet.")
    return 0


def _context_settings(workspace: Path):
    from agent.settings.config import load_settings

    return load_settings(workspace).context


async def _export(store, args: argparse.Namespace, workspace: Path) -> int:
    from agent.session.exporting import export_text

    session = await store.find_session(args.session_id)
    if session is None:
        raise _BadInput(f"no session matches '{args.session_id}'.")
    text = await export_text(
        store,
        session,
        args.format,
        context=_context_settings(workspace),
        warn=lambda problem: _say(f"Warning: {problem}"),
    )
    if args.output is None:
        _write_stdout(text)
        return 0
    try:
        Path(args.output).expanduser().write_bytes(text.encode("utf-8"))
    except OSError as exc:
        raise _BadInput(f"cannot write {args.output}: {exc.strerror or exc}.") from None
    return 0


def _read_input(name: str) -> str:
    try:
        data = sys.stdin.buffer.read() if name == "-" else Path(name).expanduser().read_bytes()
    except OSError as exc:
        raise _BadInput(f"cannot read {name}: {exc.strerror or exc}.") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _BadInput(f"{name} is not UTF-8 text.") from None


async def _import(store, args: argparse.Namespace, workspace: Path) -> int:
    from agent.session.importers import ImportFormatError, import_session, parse_any
    from agent.session.importers.cairn import restore_context_files

    text = _read_input(args.file)
    id_map: dict[str, str] = {}
    try:
        imported = parse_any(text, args.format)
        session = await import_session(store, imported, cwd_default=str(workspace.resolve()), id_map=id_map)
    except ImportFormatError as exc:
        raise _BadInput(f"{args.file}: {exc}") from None
    if imported.context_files:
        notes = await restore_context_files(
            store, session, imported.context_files, id_map=id_map, settings=_context_settings(workspace)
        )
        for note in notes:
            _say(f"Warning: {note}")
    from agent.session.importers.report import report, report_text

    summary = report(imported)  # what was imported and what was not: never lossy in silence
    if args.json:
        _write_stdout(inert_json(json.dumps({"session_id": session.id, **summary}, ensure_ascii=False)) + "\n")
    else:
        print(inert(report_text(summary)), end="", file=sys.stderr)
        _write_stdout(session.id + "\n")
    return 0


async def _run(args: argparse.Namespace, workspace: Path) -> int:
    from agent.session.store import Store

    # list and export only read: they work on a data folder cairn may not write.
    store = await Store.open(read_only=args.session_command in ("list", "export"))
    try:
        if args.session_command == "list":
            return await _list(store, args)
        if args.session_command == "export":
            return await _export(store, args, workspace)
        return await _import(store, args, workspace)
    finally:
        await store.close()


def run(args: argparse.Namespace, workspace: Path) -> int:
    import asyncio

    from agent.session.errors import StoreOpenError

    try:
        return asyncio.run(_run(args, workspace))
    except _BadInput as exc:
        _say(f"Error: {exc}")
        return 2
    except KeyboardInterrupt:
        return 130
    except StoreOpenError as exc:  # already one line naming the file and what to do
        _say(f"Error: {exc}")
        return 1
    except Exception as exc:  # the store or the disk failed: say so, keep the details in the log
        log.exception("cairn session %s failed", args.session_command)
        _say(f"Error: {type(exc).__name__}: {exc}")
        return 1
