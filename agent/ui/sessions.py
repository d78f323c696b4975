"""Session flows of the TUI: the picker, opening and deleting sessions, rewind (ESC twice).

Functions take the app; they talk to the runtime only (never the store) and show
failures as notices. Each flow runs in a worker (`start`) because it awaits modal
screens, which a message handler must not do. The screens are imported when a flow
runs, so nothing here weighs on the first frame.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from agent.runtime.ops import DeleteSession, OpenSession, Rewind, SwitchBranch
from agent.ui.error_text import readable
from agent.ui.widgets.chat import MAX_MOUNTED

if TYPE_CHECKING:
    from agent.runtime.runtime import Runtime
    from agent.session.branches import SessionBranch
    from agent.session.rewind import RewindOutcome
    from agent.ui.host import Host

BUSY = "A turn is running: press Esc to interrupt it first."


def start(app: Host, flow: Callable[[Host], Awaitable[None]]) -> None:
    """Run `flow(app)` in a worker; errors become a readable notice, never a traceback."""

    async def guarded() -> None:
        from agent.runtime.errors import RuntimeBusy

        try:
            await flow(app)
        except RuntimeBusy:
            app.chat.add_notice(BUSY, kind="warning")
        except Exception as exc:
            app.chat.add_error(readable(exc))

    app.run_worker(guarded(), group="sessions", exclusive=True, exit_on_error=False)


def _ready(app: Host) -> Runtime | None:
    if app.runtime is None:
        app.notice_not_ready()
        return None
    if app.turn_running:
        app.chat.add_notice(BUSY, kind="warning")
        return None
    return app.runtime


async def rerender(app: Host) -> None:
    """Show the runtime's current history in place of what the chat shows now."""
    assert app.runtime is not None
    history = await app.runtime.history_tail(MAX_MOUNTED)
    await app.chat.clear_messages()
    if history:
        app.chat.show_history(history, await app.runtime.history_notices(history))
    app.todo_panel.restore(history, app.runtime)
    app.refresh_header()
    app.status.reset_session()
    app.refresh_status()


# -- picker ---------------------------------------------------------------------------------
async def pick_session(app: Host) -> None:
    """/resume, /sessions, `cairn --resume` without an id: pick one, open it; Esc stays put."""
    runtime = _ready(app)
    if runtime is None:
        return
    from agent.ui.screens.picker import SessionPicker

    # Empty sessions (cairn started, nothing asked) are not worth resuming.
    summaries = [s for s in await runtime.list_sessions() if s.message_count > 0]
    if not summaries:
        app.chat.add_notice("No saved sessions yet.")
        return
    picker = SessionPicker(summaries, current_id=runtime.session.id, delete=lambda sid: delete_session(app, sid))
    chosen = await app.push_screen_wait(picker)
    if chosen:
        await open_session(app, chosen)


async def open_session(app: Host, session_id: str) -> None:
    assert app.runtime is not None
    session = await app.runtime.submit(OpenSession(session_id))
    await rerender(app)
    workspace = str(app.runtime.settings.workspace)
    if session.cwd and session.cwd != workspace:
        app.chat.add_notice(f"This session was started in {session.cwd}; cairn is working in {workspace}.")
    app.prompt.focus()


async def delete_session(app: Host, session_id: str) -> None:
    """The picker's confirmed delete; deleting the open session leaves a fresh one on screen."""
    assert app.runtime is not None
    was_open = session_id == app.runtime.session.id
    await app.runtime.submit(DeleteSession(session_id))
    if was_open:
        await rerender(app)


# -- rewind ---------------------------------------------------------------------------------
async def rewind(app: Host) -> None:
    """ESC twice: choose a user turn (then, if files changed, what to restore) or another branch."""
    runtime = _ready(app)
    if runtime is None:
        return
    from agent.ui.screens.rewind import RestoreScreen, RewindScreen

    points = await runtime.rewind_points()
    branches = await runtime.branches()
    if not points and not branches:
        app.chat.add_notice("Nothing to rewind yet: this session has no earlier prompts.")
        return
    choice = await app.push_screen_wait(RewindScreen(points, branches))
    if choice is None:
        return
    kind, ident = choice
    if kind == "branch":
        await switch_branch(app, runtime, next(b for b in branches if b.leaf_id == ident))
        return
    point = next(p for p in points if p.message_id == ident)
    restore = False
    if point.files_changed:
        plan = await runtime.plan_file_restore(ident)
        answer = await app.push_screen_wait(RestoreScreen(point, plan))
        if answer is None:
            return
        restore = answer == "files"
    outcome = await runtime.submit(Rewind(ident, restore_files=restore))
    await rerender(app)
    prompt = app.prompt
    draft = prompt.text.strip()
    prompt.replace_draft(outcome.text)  # one edit: Ctrl+Z gives the draft back
    prompt.focus()
    text, kind = rewind_notice(outcome, restore=restore, files_changed=point.files_changed)
    if draft and draft != outcome.text.strip():
        text += "\nThe draft you were typing was replaced: Ctrl+Z in the prompt brings it back."
        kind = "warning"
    app.chat.add_notice(text, kind=kind)


async def switch_branch(app: Host, runtime: Runtime, branch: SessionBranch) -> None:
    """Back to another branch; when a rewind undid its file changes, offer to re-apply them
    (as a rewind offers to undo them), so the conversation and the disk agree."""
    from agent.session.rewind import needs_restore
    from agent.ui.screens.rewind import RestoreScreen

    plan = await runtime.plan_branch_files(branch.leaf_id)
    restore = False
    if needs_restore(plan):
        answer = await app.push_screen_wait(RestoreScreen(None, plan, branch=branch))
        if answer is None:
            return
        restore = answer == "files"
    outcome = await runtime.submit(SwitchBranch(branch.leaf_id, restore_files=restore))
    await rerender(app)
    lines = ["Switched to the other branch (the one you left is kept: Esc Esc to come back)."]
    if restore:
        lines.append(files_summary(outcome, "Re-applied: "))
    elif needs_restore(plan):
        lines.append("Files were left as they are.")
    app.chat.add_notice("\n".join(lines), kind="warning" if outcome.conflicts else "info")


def files_summary(outcome: RewindOutcome, restored_label: str = "Restored: ") -> str:
    lines = []
    if outcome.restored:
        lines.append(restored_label + ", ".join(outcome.restored))
    if outcome.removed:
        lines.append("Removed: " + ", ".join(outcome.removed))
    if outcome.conflicts:
        lines.append("Changed outside cairn, left as they are: " + ", ".join(outcome.conflicts))
    return "\n".join(lines) or "Files: nothing needed restoring."


def rewind_notice(outcome: RewindOutcome, *, restore: bool, files_changed: int) -> tuple[str, str]:
    lines = [
        "Rewound: the prompt is back in the input; edit and send it to continue on a new branch "
        "(the old one is kept: Esc Esc to switch back)."
    ]
    if restore:
        lines.append(files_summary(outcome))
    elif files_changed:
        lines.append("Files were left as they are.")
    return "\n".join(lines), "warning" if outcome.conflicts else "info"
