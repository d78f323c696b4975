"""How context management shows in the chat (seed 001): the condense marker and the notices.

A condense leaves the originals in place (dimmed by the chat) and adds one rule-like line
saying what it saved; expanding it shows the summary the model now works from. The body is
built on first expand: a long session can hold several summaries of thousands of tokens.
Truncation touches only the request copy, so it gets a one-line notice, not a marker.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from textual.containers import Vertical
from textual.widgets import Static

from agent.fs.terminal_text import inert
from agent.ui.widgets.block_select import Foldable

if TYPE_CHECKING:
    from textual.content import Content
    from textual.widgets import Collapsible

    from agent.session.models import ContextEvent, Message

FAILED_PREFIX = "Condensing failed: "
TITLE_CHROME = 2 + 2  # the title's padding (app.tcss: `0 1`) and its "▶ " symbol
# The summary the model reads wraps its appendices (archive, recent prompts, environment) in
# these tags; on screen they are noise, the sections' own headings say what each one is.
_REMINDER = re.compile(r"<system-reminder>\n?(.*?)\n?</system-reminder>", re.S)


def readable_summary(text: str) -> str:
    return _REMINDER.sub(lambda m: m.group(1), text).strip()


def _change(before: int, after: int) -> str:
    pct = round((after - before) * 100 / before)
    return f"−{-pct}%" if pct < 0 else f"+{pct}%"


def marker_title(trigger: str, before: int | None, after: int | None, duration_ms: int = 0) -> str:
    """ "── Context condensed (auto) · history 120,431 → 8,210 tokens (−93%) · 3.2 s ──": the
    conversation's tokens, not the whole request's (the status bar's figure also holds the
    system prompt and the tools, which condensing leaves as they are)."""
    parts = [f"Context condensed ({trigger})"]
    if before and after is not None:
        parts.append(f"history {before:,} → {after:,} tokens ({_change(before, after)})")
    if duration_ms:
        parts.append(f"{duration_ms / 1000:.1f} s")
    return "── " + " · ".join(parts) + " ──"


def condense_failed_text(record: ContextEvent) -> str:
    error = (record.error or "no summary came back").strip()
    if error.startswith(FAILED_PREFIX):  # the condenser's own errors already say so
        error = error[len(FAILED_PREFIX) :]
    return f"{FAILED_PREFIX}{error.rstrip('.')}. Falling back to truncating the request."


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def truncated_text(record: ContextEvent) -> str:
    """ "Request shortened for the model: A → B tokens (N older messages left out; …)"."""
    detail = record.detail or {}
    notes = []
    if detail.get("messages_deleted"):
        notes.append(_plural(detail["messages_deleted"], "older message") + " left out")
    if detail.get("calls_removed"):
        notes.append(_plural(detail["calls_removed"], "tool call") + " dropped")
    if detail.get("results_folded"):
        notes.append(_plural(detail["results_folded"], "file read") + " folded to outlines")
    if record.outcome == "partial":
        target = detail.get("target")
        notes.append(f"still over the {target:,}-token target" if isinstance(target, int) else "still over target")
    notes.append("history keeps everything")
    return (
        f"Request shortened for the model: {record.tokens_before:,} → {record.tokens_after:,} tokens "
        f"({'; '.join(notes)})"
    )


class CondensedMarker(Vertical, Foldable):
    """One condense: a collapsed rule-like title; expanding shows the summary text."""

    def __init__(
        self,
        *,
        trigger: str,
        tokens_before: int | None,
        tokens_after: int | None,
        duration_ms: int = 0,
        summary: str = "",
        count: int | None = None,
        instructions: str | None = None,
        summary_id: str | None = None,
    ) -> None:
        super().__init__(classes="condensed-marker")
        self.trigger = trigger
        self.tokens_before = tokens_before
        self.tokens_after = tokens_after
        self.summary = summary
        self.count = count
        self.instructions = instructions
        self.summary_id = summary_id
        self.text = marker_title(trigger, tokens_before, tokens_after, duration_ms)
        self._body_pending = True
        self.fold_hint = ""  # set by the chat: which key opens it

    @classmethod
    def from_event(cls, record: ContextEvent, summary: Message | None) -> CondensedMarker:
        if summary is not None and summary.meta.get("condensed"):
            # The stored summary's own numbers, as a resumed history shows them: the marker
            # must not change when the session is opened again.
            return cls.from_summary(summary)
        return cls(
            trigger=record.trigger,
            tokens_before=record.tokens_before,
            tokens_after=record.tokens_after,
            duration_ms=record.duration_ms,
            summary=(summary.content or "") if summary else "",
            summary_id=record.summary_id,
        )

    @classmethod
    def from_summary(cls, message: Message) -> CondensedMarker:
        """A stored summary (history): the numbers its meta recorded when it was made."""
        meta = message.meta.get("condensed") or {}
        trigger = meta.get("trigger") or ("auto" if meta.get("automatic") else "manual")
        return cls(
            trigger=trigger,
            tokens_before=meta.get("tokens_before"),
            tokens_after=meta.get("tokens_after"),
            duration_ms=meta.get("duration_ms") or 0,
            summary=message.content or "",
            count=meta.get("count"),
            instructions=meta.get("instructions"),
            summary_id=message.id,
        )

    def compose(self):
        from textual.widgets import Collapsible

        yield Collapsible(title=self._title(), collapsed=True)  # type: ignore[arg-type]  # textual takes Content (typed str)

    def _title(self) -> Content:
        """The rule-like line, then the chat's hint when the row has room for both."""
        from textual.content import Content

        hint = f" {self.fold_hint}" if self.fold_hint else ""
        fits = len(self.text) + len(hint) <= self.size.width - TITLE_CHROME
        return Content.assemble(self.text, (hint if fits else "", "dim"))

    def on_resize(self) -> None:
        self.show_fold_hint(self.fold_hint)

    # -- the keyboard's side (agent/ui/widgets/block_select.py) ---------------------------
    def _collapsible(self) -> Collapsible | None:
        from textual.widgets import Collapsible

        found = self.query_children(Collapsible)
        return found.first() if found else None

    @property
    def can_fold(self) -> bool:
        return True  # its summary, always behind its line

    @property
    def folded(self) -> bool:
        collapsible = self._collapsible()
        return collapsible is None or collapsible.collapsed

    def toggle_fold(self) -> None:
        collapsible = self._collapsible()
        if collapsible is not None:
            collapsible.collapsed = not collapsible.collapsed

    def show_fold_hint(self, hint: str) -> None:
        self.fold_hint = hint
        collapsible = self._collapsible()
        if collapsible is not None:
            collapsible.title = self._title()  # type: ignore[assignment]  # textual takes Content (typed str)

    def on_collapsible_expanded(self, event) -> None:
        if self._body_pending:
            self._body_pending = False
            event.collapsible.query_one("Contents").mount_all(self._body())

    def _body(self) -> list[Static]:
        about = []
        if self.count:
            about.append(f"Summary of {_plural(self.count, 'message')}")
        if self.instructions:
            about.append(f"instructions: {inert(self.instructions)}")
        widgets = [Static(" · ".join(about), markup=False, classes="condensed-about")] if about else []
        widgets.append(
            Static(
                inert(readable_summary(self.summary)) or "(no summary text)", markup=False, classes="condensed-summary"
            )
        )
        return widgets
