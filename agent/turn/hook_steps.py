"""The loop's side of the hooks (agent/hooks/): the agent's `Hooks`, and a Stop hook's "go on".

The dispatcher decides what hooks say; this module does what that needs from a running
session: it shows their warnings as notices and what they did as HookActed lines, and stores
a Stop hook's reason as a user-side note so the next request carries it (and a resumed
session still shows why the model went on).
"""

from __future__ import annotations

from collections.abc import Callable

from agent.hooks.dispatch import Hooks
from agent.session.models import Message
from agent.settings.schema import Settings
from agent.tools.permissions import Permissions
from agent.turn.events import Event, HookActed, Notice
from agent.turn.writer import SessionWriter

STOP_NOTE = "[A Stop hook asks you to go on before you finish]\n{reason}"


def turn_hooks(
    settings: Settings,
    *,
    session_id: Callable[[], str],
    permissions: Callable[[], Permissions],
    emit: Callable[[Event], None],
    turn_events: bool,
) -> Hooks:
    """An agent's hooks: `session_id` and `permissions` read as each hook runs, warnings shown
    as notices. `turn_events`: False for a subagent's child, which runs only the tool hooks and
    PreCompact."""
    return Hooks(
        settings,
        session_id=session_id,
        permissions=permissions,
        warn=lambda message, kind: emit(Notice(message=message, kind=kind)),
        acted=lambda action: emit(
            HookActed(
                hook_event_name=action.event,
                hook=action.hook,
                action=action.action,
                detail=action.detail,
                message=action.message,
            )
        ),
        turn_events=turn_events,
    )


async def stop_hook_goes_on(hooks: Hooks, writer: SessionWriter, *, active: bool) -> bool:
    """Run the Stop hooks as the turn would end; True when one sent the model back to work
    (its reason is stored for the next request). `active`: this turn already went on once."""
    reason = await hooks.stop(active)
    if reason is None:
        return False
    await writer.append(
        Message(role="user", kind="note", content=STOP_NOTE.format(reason=reason), meta={"hook": "Stop"})
    )
    return True  # its line ("Stop hook x sent the model back to work: …", HookActed) was shown as it answered
