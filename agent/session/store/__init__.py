"""The session log: the only package that runs SQL (besides session/peek.py's first-screen SELECT).

SQLite in WAL mode through aiosqlite. Messages form a tree (`parent_id`); each session
has a `head_id`, and the active path is the chain from the head back to the root.
Every message is written the moment it exists; nothing here deletes history except an
explicit session delete.

`Store` is the one entry: one class made of a table group per module, all on one connection
and one write lock (connection.py): sessions.py, messages.py, blobs.py (checkpoints),
events.py, requests.py (the request sent last), tool_results.py (context files' facts),
notices.py (what a turn told the user), worktrees.py (the git worktrees `--worktree` made).
"""

from __future__ import annotations

from agent.session.store.events import ContextEventsTable
from agent.session.store.messages import MessagesTable
from agent.session.store.notices import NoticesTable
from agent.session.store.requests import SentRequestsTable
from agent.session.store.tool_results import ToolResultQueries
from agent.session.store.worktrees import WorktreesTable


class Store(MessagesTable, ToolResultQueries, ContextEventsTable, SentRequestsTable, NoticesTable, WorktreesTable):
    """The session database, open: `await Store.open()`, then `store.<method>` for every table."""


__all__ = ["Store"]
