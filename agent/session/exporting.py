"""A stored session read into the text of its export, for `cairn session export` and `/export`
alike: both write the same file for the same session (agent/session/export.py formats it).

Markdown is the active path as a reader sees it (with what its turns told the user, quoted),
then each subagent's. JSONL is every stored
message of every branch, the images they name, the session's context files (each history
archive its summaries name is rebuilt first, so it is carried) and its subagents' messages.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.session.models import Message, Session
from agent.settings.schema import ContextSettings


async def export_text(
    store, session: Session, fmt: str, *, context: ContextSettings, warn: Callable[[str], None]
) -> str:
    """`warn`: a context file that could not be rebuilt (the export goes on without it).
    ValueError: `fmt` is neither "md" nor "jsonl"."""
    from agent.session.export import export_jsonl, export_markdown, image_records
    from agent.session.loading import load_session_messages

    children = await store.subagent_sessions(session.id)
    if fmt == "md":
        path = await load_session_messages(store, session.id)
        return export_markdown(
            session,
            path,
            [(child, await store.active_path(child.id)) for child in children],
            await store.notices(session.id, [None, *(m.id for m in path)]),
        )
    if fmt != "jsonl":
        raise ValueError(f"unknown export format '{fmt}' (use md or jsonl)")
    messages = await store.all_messages(session.id)
    return export_jsonl(
        session,
        messages,
        await _context_records(store, session, messages, context, warn),
        images=await image_records(messages, store.get_blob),
        subagents=[(child, await store.all_messages(child.id)) for child in children],
    )


async def _context_records(
    store, session: Session, messages: list[Message], context: ContextSettings, warn: Callable[[str], None]
) -> list[dict]:
    from agent.context.files import manifest
    from agent.context.files.manager import ContextFileError, ContextFiles
    from agent.context.files.refs import history_ref_id
    from agent.session.export import context_file_records

    files = ContextFiles(store, session.id, settings=context)
    named = {
        ref
        for ref, e in manifest.load(files.folder)["entries"].items()
        if isinstance(e, dict) and e.get("kind") == "history"
    }
    for m in messages:
        condensed = (m.meta or {}).get("condensed") if m.kind == "summary" else None
        if isinstance(condensed, dict) and condensed.get("first_id") and condensed.get("last_id"):
            named.add(history_ref_id(str(condensed["first_id"]), str(condensed["last_id"])))
    for ref in sorted(named):
        try:
            await files.read(ref, limit=1)
        except ContextFileError as exc:
            warn(str(exc))
    return context_file_records(files.folder)
