"""`/fork`: a new session holding a copy of another's active path and the file checkpoints of
those messages, so its rewinds restore files as the original's would."""

from __future__ import annotations

from agent.session.models import Session, new_id


async def fork_session(store, source: Session, model: str) -> Session:
    """Store the copy (new ids, same parent links, seq from 1) and return it; the source is untouched."""
    path = await store.active_path(source.id)
    ids = {m.id: new_id() for m in path}
    copies = [
        m.model_copy(update={"id": ids[m.id], "parent_id": ids.get(m.parent_id) if m.parent_id else None, "seq": i})
        for i, m in enumerate(path, start=1)
    ]
    fork = Session(
        title=f"{source.title or 'untitled'} (fork)",
        cwd=source.cwd,
        model=model,
        head_id=copies[-1].id if copies else None,
        parent_session_id=source.id,
    )
    await store.insert_session(fork, copies)
    changes = [
        c.model_copy(update={"session_id": fork.id, "message_id": ids[c.message_id]})
        for c in await store.file_changes(source.id)
        if c.message_id in ids
    ]
    await store.copy_file_changes(changes)
    return fork
