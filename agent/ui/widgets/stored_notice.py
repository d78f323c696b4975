"""A resumed session's stored lines: the errors, notices and hooks' actions its turns showed.

Without them a prompt that hit a 401 looked ignored on `--continue`. They come back where they
were said (after the message they followed, agent/runtime/notice_log.py), dimmed: they are
what was, not what is.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from textual.widgets import Static

from agent.fs.terminal_text import inert

if TYPE_CHECKING:
    from agent.session.models import SessionNotice


class StoredNotice(Static):
    """One stored line, styled as the live notice of its kind (app.tcss `.notice-*`), dimmed."""

    DEFAULT_CSS = """
    StoredNotice {
        text-opacity: 60%;
    }
    """

    def __init__(self, notice: SessionNotice) -> None:
        super().__init__(inert(notice.text), markup=False, classes=f"notice notice-{notice.kind} stored-notice")
        self.text = notice.text
        self.kind = notice.kind


def notices_after(notices: Sequence[SessionNotice]) -> dict[str | None, list[StoredNotice]]:
    """Each message id (None: before the first message) → the lines said after it, in order."""
    out: dict[str | None, list[StoredNotice]] = {}
    for notice in notices:
        out.setdefault(notice.after_id, []).append(StoredNotice(notice))
    return out
