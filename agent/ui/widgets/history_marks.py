"""Where a resumed session's history shows `Interrupted`, as the live chat did.

Live, an interrupted turn ends with an `Interrupted` line (agent/ui/turns.py); stored, the
turn keeps the mark in its messages' status (the partial answer or the tool result cut
short is `interrupted`). A resumed session showed the cut-off turn as if it had simply
ended. Pure: decides on stored messages only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

INTERRUPTED_TEXT = "Interrupted"


def _starts_turn(message: Any) -> bool:
    """A prompt the user typed (a `!command` note or a condense summary is no new turn)."""
    return message.role == "user" and message.kind not in ("note", "summary")


def interrupted_turn_ends(messages: Sequence[Any]) -> set[str]:
    """Ids of the last message of each turn that holds an interrupted message."""
    ends: set[str] = set()
    last_id: str | None = None
    cut = False
    for message in messages:
        if _starts_turn(message):
            if cut and last_id is not None:
                ends.add(last_id)
            cut = False
        elif message.status == "interrupted":
            cut = True
        last_id = message.id
    if cut and last_id is not None:
        ends.add(last_id)
    return ends
