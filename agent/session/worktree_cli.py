"""`cairn --worktree NAME` before a session starts, and `cairn worktree list | remove NAME`.

agent/cli.py imports this module only when `-w` or a worktree command is given, so git and
the store stay off the plain TUI's path to its first screen. The git is in
agent/session/worktrees.py (hardened), the records in the store's `worktrees` table.

A user's mistake (a bad NAME, no repository, no such worktree, uncommitted changes without
--force) prints `Error: …` and exits 2; git or the store failing exits 1. Paths, names and
git's words are printed inert (agent/fs/terminal_text.py): a repository names its folders.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path

from agent.fs.terminal_text import inert, inert_json
from agent.session.errors import StoreError
from agent.session.worktrees import (
    Worktree,
    WorktreeError,
    WorktreeRefused,
    open_worktree,
    remove_worktree,
    repository,
    valid_name,
)

USAGE_ERROR = 2
FAILURE = 1


def _say(text: str) -> None:
    print(inert(text), file=sys.stderr)


async def _record(worktree: Worktree) -> None:
    from agent.session.store import Store

    store = await Store.open()
    try:
        await store.record_worktree(worktree)
    finally:
        await store.close()


def _failed(exc: WorktreeError | StoreError) -> int:
    """Say why, and the exit code: a refusal is the user's mistake (usage), the rest a failure."""
    _say(f"Error: {exc}")
    return USAGE_ERROR if isinstance(exc, WorktreeRefused) else FAILURE


def enter(name: str, folder: Path) -> Path | int:
    """The workspace for a session on worktree NAME of `folder`'s repository (made, or reused
    when it exists), recorded in the store; else the exit code, after saying why."""
    try:
        opened = open_worktree(folder, name)
        asyncio.run(_record(opened.worktree))
    except (WorktreeError, StoreError) as exc:
        return _failed(exc)
    wt = opened.worktree
    _say(f"cairn: {'made' if opened.made else 'reusing'} worktree {wt.name} (branch {wt.branch}) at {wt.path}")
    return opened.workspace


async def _list(store, args: argparse.Namespace) -> int:
    found = await store.worktrees()
    if args.json:
        rows = [{**w.model_dump(), "exists": Path(w.path).is_dir()} for w in found]
        print(inert_json(json.dumps(rows, ensure_ascii=False)))
        return 0
    if not found:
        _say("No worktrees; `cairn --worktree NAME` makes one.")
        return 0
    width = max(len(w.name) for w in found)
    for w in found:
        missing = "" if Path(w.path).is_dir() else "  (folder missing)"
        print(inert(f"{w.name:<{width}}  {w.branch}  {w.path}  [{w.repo}]{missing}"))
    return 0


def _the_one(found: list[Worktree], name: str, workspace: Path) -> Worktree:
    """The live worktree NAME: of the workspace's repository when NAME names several."""
    named = [w for w in found if w.name == name]
    if len(named) > 1:
        try:
            repo_id = repository(workspace).repo_id
        except WorktreeError:
            repo_id = ""
        named = [w for w in named if w.repo_id == repo_id]
        if len(named) != 1:
            raise WorktreeRefused(f"{name} names worktrees of several repositories; run this in the one you mean.")
    if not named:
        raise WorktreeRefused(f"no worktree named {name}; `cairn worktree list` shows them.")
    return named[0]


async def _remove(store, args: argparse.Namespace, workspace: Path) -> int:
    valid_name(args.name)
    worktree = _the_one(await store.worktrees(), args.name, workspace)
    branch = remove_worktree(worktree, force=args.force)
    await store.worktree_removed(worktree.path)
    _say(f"removed worktree {worktree.name} ({worktree.path}); {branch}")
    return 0


async def _run(args: argparse.Namespace, workspace: Path) -> int:
    from agent.session.store import Store

    store = await Store.open(read_only=args.worktree_command == "list")
    try:
        if args.worktree_command == "list":
            return await _list(store, args)
        return await _remove(store, args, workspace)
    finally:
        await store.close()


def run(args: argparse.Namespace, workspace: Path) -> int:
    """`cairn worktree list|remove`: the exit code."""
    try:
        return asyncio.run(_run(args, workspace))
    except (WorktreeError, StoreError) as exc:
        return _failed(exc)
    except KeyboardInterrupt:
        return 130
