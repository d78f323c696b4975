"""What the build needs to know about each message, kept where a warm build can reach it fast.

Reading a pydantic field costs about 60 ns (the model's `__getattr__` hook defeats Python's
attribute fast path), and the passes read a dozen per message per build; at 20,000 messages
those scattered reads made a warm build grow faster than the history. So each message
object gets one `Facts` record (plain slots, made once) holding the fields the pipeline
reads, what the passes derive from them, and its API form and token count. The records
belong to one session's request builder (`Records`, held by agent/context/state.py).

A record is valid while the message's fields are the ones it was made from: every build
takes a snapshot of those fields per message in C (`itemgetter` over `__dict__`), so an
in-place edit (the loop finalising a streamed message) is seen. The last history's records
are kept by position: a build of the same history, or of a longer one, reuses them after
comparing identities and snapshots without running Python code per message, and gets back
the very same list when nothing changed (agent/context/memo.py relies on that). A list of
tool calls is taken as replaced, never edited in place.
"""

from __future__ import annotations

from itertools import repeat
from operator import and_, attrgetter, eq, is_, itemgetter, ne
from typing import TYPE_CHECKING, Any

from agent.context.rendered import Rendered, api_form
from agent.context.tokens import REPLY_PRIMING

if TYPE_CHECKING:
    from agent.context.tokens import TokenCounter
    from agent.session.models import Message

# Every field the passes and the API form read.
FIELDS = ("id", "role", "content", "tool_calls", "tool_call_id", "tool_name", "created_at", "status", "kind")
_DICT = attrgetter("__dict__")
_SNAPSHOT = itemgetter(*FIELDS)
_SNAPSHOT_OF = attrgetter("snapshot")
ENCODING = attrgetter("encoding")
# Records kept per builder before they are dropped all at once (a session of 100,000 messages).
CACHE_LIMIT = 300_000
TOKENS = attrgetter("tokens")
API = attrgetter("api")
CALLS = attrgetter("calls")


class Facts(Rendered):
    """One message as the passes see it.

    `calls` are `(id, name, arguments)` as in the API form. `error`, `stderr_error` and
    `read_ok` are filled in by the passes (each the first time it needs it); `origin` is
    the original a content copy shares its structure with (see `copy`)."""

    __slots__ = (
        "snapshot",
        "id",
        "role",
        "tool_call_id",
        "tool_name",
        "created_at",
        "status",
        "kind",
        "time",
        "length",
        "calls",
        "blank",
        "error",
        "stderr_error",
        "read_ok",
        "origin",
        "copy_key",
        "copied",
        "copies",
    )

    def __init__(self, message: Message, snapshot: tuple) -> None:
        # Not Rendered.__init__: the fields come from the snapshot, not from pydantic again.
        self.message = message
        self.snapshot = snapshot
        (
            self.id,
            self.role,
            content,
            tool_calls,
            self.tool_call_id,
            self.tool_name,
            created,
            self.status,
            self.kind,
        ) = snapshot
        self.content = content
        self.tool_calls = tool_calls
        self.api = api_form(message)
        self.encoding = None
        self.tokens = 0
        self.created_at = created
        # A timestamp counts when it is a positive int; 0 stands for "none" (SPEC §12.2, §12.4).
        self.time = created if isinstance(created, int) and created > 0 else 0
        self.length = len(content) if content else 0
        self.calls: tuple[tuple[str, str, str], ...] = (
            tuple((tc.id, tc.name, tc.arguments or "{}") for tc in tool_calls)
            if self.role == "assistant" and tool_calls
            else ()
        )
        # An assistant message with nothing to say (orphans drops it when it has no calls).
        self.blank = self.role == "assistant" and not (content or "").strip()
        self.error: bool | None = None
        self.stderr_error: bool | None = None
        self.read_ok: bool | None = None
        # For a copy with other content, the original record: roles, calls, times and
        # positions are the same. None for an original (not itself: no reference cycle).
        self.origin: Facts | None = None
        # Copies the passes made of this message: the first in two slots, any more in a dict.
        self.copy_key: Any = None
        self.copied: Facts | None = None
        self.copies: dict[Any, Facts] | None = None

    def copy(self, key: Any, field: str, value: Any) -> Facts:
        """The record of a copy of this message with `field` set to `value` (or to what
        `value()` gives, when callable), made once per `key`.

        A warm rebuild replaces the same results with the same placeholders again; the copy
        made last time is still right, since this record is only used while the message is
        unchanged. Copies are never mutated."""
        if self.copied is not None and self.copy_key == key:
            return self.copied
        made = self.copies.get(key) if self.copies else None
        if made is None:
            message = self.message.model_copy(update={field: value() if callable(value) else value})
            made = _make(message)
            if field == "content":
                made.origin = self.origin or self
            if self.copied is None:
                self.copy_key, self.copied = key, made
            else:
                if self.copies is None:
                    self.copies = {}
                self.copies[key] = made
        return made


def _snapshot(message: Message) -> tuple:
    try:
        return _SNAPSHOT(message.__dict__)
    except (KeyError, AttributeError):
        return tuple(getattr(message, name, None) for name in FIELDS)


def _make(message: Message) -> Facts:
    return Facts(message, _snapshot(message))


def facts_of(messages: list[Message]) -> list[Facts]:
    """Fresh records of `messages` (the passes' message-level entry points, which remember nothing)."""
    return Records().facts_of(messages)


class Records:
    """The records of one session's builds (owned by its request builder, see
    agent/context/state.py): one per message object, and the last history built, so that
    the next build of the same or a longer history reuses them by position."""

    __slots__ = ("_by_message", "_last")

    def __init__(self) -> None:
        # Keyed by the message object's id; an entry keeps its message alive, so the id
        # cannot be reused by another object meanwhile.
        self._by_message: dict[int, Facts] = {}
        # The last history built (a copy of the list), its records and their snapshots (a
        # list of its own: comparing against it does not touch the records).
        self._last: tuple[list[Message], list[Facts], list[tuple]] = ([], [], [])

    def lookup(self, message: Message) -> Facts:
        snap = _snapshot(message)
        facts = self._by_message.get(id(message))
        if facts is not None and facts.message is message and facts.snapshot == snap:
            return facts
        if len(self._by_message) >= CACHE_LIMIT:
            self._by_message.clear()
        facts = self._by_message[id(message)] = Facts(message, snap)
        return facts

    def facts_of(self, messages: list[Message]) -> list[Facts]:
        """The records of `messages`, looked up one by one."""
        return list(map(self.lookup, messages))

    def unchecked_records(self, history: list[Message]) -> tuple[list[Facts], list[tuple], int] | None:
        """`(records, snapshots, unchecked)` for a `history` that starts with the very message
        objects of the last one: their last records, not compared yet (the first `unchecked`;
        see `holds`), then new ones for the messages after them. None for any other history.

        The same list of records comes back when the history is the same; a longer one becomes
        the last history, so a stale record found later is found again by `facts_for`."""
        last_messages, last_facts, last_snapshots = self._last
        known = len(last_messages)
        if len(history) < known or not all(map(is_, last_messages, history)):
            return None
        if len(history) == known:
            return last_facts, last_snapshots, known
        added = list(map(self.lookup, history[known:]))
        facts, snapshots = last_facts + added, last_snapshots + list(map(_SNAPSHOT_OF, added))
        self._last = (list(history), facts, snapshots)
        return facts, snapshots, known

    def facts_for(self, history: list[Message]) -> list[Facts]:
        """The records of `history`, reusing the last history's by position where they still hold.

        The same list object comes back when nothing changed since the last call."""
        last_messages, last_facts, last_snapshots = self._last
        if (
            len(history) == len(last_messages)
            and all(map(is_, history, last_messages))
            and holds(history, last_snapshots, 0, len(history))
        ):
            return last_facts  # nothing changed
        try:  # where the same object still has the same fields
            same = list(
                map(
                    and_, map(is_, history, last_messages), map(eq, map(_SNAPSHOT, map(_DICT, history)), last_snapshots)
                )
            )
        except (KeyError, AttributeError):
            same = list(map(and_, map(is_, history, last_messages), map(eq, map(_snapshot, history), last_snapshots)))
        try:
            kept = same.index(False)
        except ValueError:
            kept = len(same)
        facts = last_facts[:kept]
        for index in range(kept, len(history)):
            facts.append(last_facts[index] if index < len(same) and same[index] else self.lookup(history[index]))
        self._last = (list(history), facts, last_snapshots[:kept] + list(map(_SNAPSHOT_OF, facts[kept:])))
        return facts


def holds(history: list[Message], snapshots: list[tuple], start: int, stop: int) -> bool:
    """Whether `history[start:stop]` still has the fields of `snapshots[start:stop]`
    (`Records.unchecked_records`' promise).

    Compared in C; each new snapshot is dropped once compared (keeping 20,000 new tuples
    to the end of a build set off garbage collections costing more than the rest of it)."""
    try:
        return all(map(eq, map(_SNAPSHOT, map(_DICT, history[start:stop])), snapshots[start:stop]))
    except (KeyError, AttributeError):
        return all(map(eq, map(_snapshot, history[start:stop]), snapshots[start:stop]))


def ensure_counted(facts: list[Facts], counter: TokenCounter) -> None:
    """Give every record its token count in the counter's encoding."""
    encoding = counter.encoding_name
    if not any(map(ne, map(ENCODING, facts), repeat(encoding))):
        return  # the warm path: all counted already, checked in C
    for f in facts:
        if f.encoding != encoding:
            f.tokens = counter.count_stored(f.message)
            f.encoding = encoding


def request_tokens(facts: list[Facts]) -> int:
    """Tokens of `facts` as a request (counted, see `ensure_counted`), with the reply priming."""
    return sum(map(TOKENS, facts)) + REPLY_PRIMING if facts else 0
