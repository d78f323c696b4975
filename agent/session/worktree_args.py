"""The command line's worktree parts (SPEC §11): `--worktree/-w NAME` and `cairn worktree
list|remove`. Standard library only: agent/cli.py builds its parser from this before the
TUI's first frame; the bodies are in worktree_cli.py, imported only when one is given."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def add_worktree_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-w",
        "--worktree",
        metavar="NAME",
        help="run in git worktree NAME on branch cairn/NAME (made from HEAD under <data dir>/worktrees, "
        "or reused); `cairn worktree list|remove` manage them",
    )


def add_worktree_parser(add_parser: Callable[..., argparse.ArgumentParser]) -> None:
    """`cairn worktree list|remove NAME`, added by the subparsers' `add_parser`."""
    worktree = add_parser("worktree", help="list or remove the git worktrees --worktree made")
    commands = worktree.add_subparsers(dest="worktree_command", metavar="{list,remove}", required=True)
    listing = commands.add_parser("list", help="every worktree cairn made: name, branch, folder, repository")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    remove = commands.add_parser("remove", help="remove a worktree, and its branch when merged")
    remove.add_argument("name", metavar="NAME", help="the worktree's name (as given to --worktree)")
    remove.add_argument(
        "--force", action="store_true", help="discard its uncommitted changes and delete its branch even unmerged"
    )
