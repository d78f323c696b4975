"""The other branches of a session: where the turns a rewind left behind end, for the rewind
menu's "switch back" list (the branch itself stays stored; switching is session/rewind.py)."""

from __future__ import annotations

from pydantic import BaseModel

from agent.session.models import Session
from agent.session.rewind import one_line


class SessionBranch(BaseModel):
    """Another branch of the session, for the rewind menu's "switch back" list."""

    leaf_id: str
    created_at: int
    messages: int
    preview: str


async def other_branches(store, session: Session, limit: int) -> list[SessionBranch]:
    """Ends of the branches other than the one at `session`'s head, newest first."""
    out: list[SessionBranch] = []
    for leaf in await store.branch_leaves(session.id):
        if leaf.id == session.head_id:
            continue
        path = await store.active_path(session.id, head_id=leaf.id)
        last_user = next((m for m in reversed(path) if m.role == "user"), None)
        out.append(
            SessionBranch(
                leaf_id=leaf.id,
                created_at=leaf.created_at,
                messages=len(path),
                preview=one_line(last_user.content if last_user else leaf.content or ""),
            )
        )
        if len(out) >= limit:
            break
    return out
