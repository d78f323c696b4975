"""The worktrees `cairn --worktree NAME` made (the `worktrees` table): which repository and
branch each checkout belongs to, so `cairn session list` can say a session ran on one and
`cairn worktree list|remove` find them again. The git side is agent/session/worktrees.py."""

from __future__ import annotations

from agent.session.models import now_ms
from agent.session.store.connection import StoreConnection
from agent.session.worktrees import Worktree

_COLUMNS = "path, name, branch, repo, repo_id, created_at, removed_at"


class WorktreesTable(StoreConnection):
    async def record_worktree(self, worktree: Worktree) -> None:
        """Remember a worktree made or reused; one made again at a removed one's path is live again."""
        async with self._transaction():
            await self.conn.execute(
                f"INSERT INTO worktrees ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL)"
                " ON CONFLICT(path) DO UPDATE SET name = excluded.name, branch = excluded.branch,"
                " repo = excluded.repo, repo_id = excluded.repo_id, removed_at = NULL,"
                " created_at = CASE WHEN worktrees.removed_at IS NULL THEN worktrees.created_at"
                " ELSE excluded.created_at END",
                (worktree.path, worktree.name, worktree.branch, worktree.repo, worktree.repo_id, now_ms()),
            )

    async def worktrees(self, *, removed: bool = False) -> list[Worktree]:
        """Every worktree recorded, oldest first; `removed`: removed ones too."""
        sql = f"SELECT {_COLUMNS} FROM worktrees" + ("" if removed else " WHERE removed_at IS NULL")
        async with self.conn.execute(sql + " ORDER BY created_at, rowid") as cur:
            rows = await cur.fetchall()
        return [Worktree(**{k: row[k] for k in row.keys()}) for row in rows]  # noqa: SIM118 (a Row's keys)

    async def worktree_removed(self, path: str) -> None:
        async with self._transaction():
            await self.conn.execute("UPDATE worktrees SET removed_at = ? WHERE path = ?", (now_ms(), path))
