"""When a seed 000/003 replacement of an already-sent message is applied (SPEC §12.11).

The seeds decide *which* old results become a placeholder. Applied the moment they become
eligible, they rewrite a message deep inside the prefix the provider has cached, and
everything after it is billed again as new input: measured on real sessions, that made
the cached bill 31-37% higher than sending everything. So under `auto` a replacement of a
message that an earlier request already carried is *held* (sent as it was) while the cache
is warm, and the pending ones are applied together when

- the cache is cold anyway (no request within the provider's TTL),
- the tokens they free, read from the cache on the requests to come, pay for writing the
  changed suffix again at the model's prices (`paying_cut`), or
- the budget needs the room (the caller asks with `flush`).

An applied replacement stays applied: every request records, in its assistant message's
meta (`SENT_META`), which replacements it applied for the first time. That record is what
"sent before" means for the next build, so the build stays a function of the stored history
and survives `--resume`; a rewind drops the records of the abandoned branch with it.
`exact` holds nothing (the seeds to the letter). A replacement of a message no request has
carried yet costs nothing to apply and is never held.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, count
from operator import is_, is_not
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

if TYPE_CHECKING:
    from agent.context.facts import Facts
    from agent.session.models import Message

# The assistant message's meta key: {"at": ms the request was built for, "applied": [ids]}.
SENT_META = "sent"
# How many requests the tokens a batch frees are expected to be read on before the cache
# goes cold anyway (a new batch would then be applied for free).
FLUSH_HORIZON_REQUESTS = 8
# Prompt-cache prices as a share of the input price, when the model's are not known:
# Anthropic's (reads 0.1×, writes 1.25×); automatic prefix caches do not charge for writes.
DEFAULT_READ_SHARE = 0.1
DEFAULT_WRITE_SHARE = 1.25

Mode = Literal["auto", "exact"]


class CachePolicy(BaseModel):
    """How one model's requests treat replacements (resolved by the session's builder)."""

    model_config = ConfigDict(frozen=True)

    mode: Mode = "exact"
    ttl_ms: int = 5 * 60 * 1000
    read_share: float = DEFAULT_READ_SHARE
    write_share: float = DEFAULT_WRITE_SHARE
    horizon_requests: int = FLUSH_HORIZON_REQUESTS


EXACT = CachePolicy()


@dataclass(frozen=True)
class SentLog:
    """What the stored history says earlier requests carried.

    `at`: when the newest request was built (None: no request yet); `applied`: ids of the
    messages sent as their replacement so far; `unsent`: ids of the messages after the
    newest request (no request carried them yet)."""

    at: int | None
    applied: frozenset[str]
    unsent: frozenset[str]


NOTHING_SENT = SentLog(None, frozenset(), frozenset())


def sent_log(history: list[Message]) -> SentLog:
    """Read the request records of the active path (`history`, oldest first).

    A history without any (imported, or written before these records existed) counts the
    newest assistant message as its last request, with nothing applied."""
    return SentScan().log(history)


class SentScan:
    """`sent_log`, kept up to date across builds of one session (its `BuildState` owns one):
    the loop's next history is the last one plus a few messages, and only those are read.
    A request's record is written with its assistant message and never changed after."""

    __slots__ = ("_messages", "_applied", "_frozen", "_at", "_last")

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._messages: list[Message] = []
        self._applied: set[str] = set()
        self._frozen: frozenset[str] = frozenset()
        self._at: int | None = None
        self._last = -1

    def log(self, history: list[Message]) -> SentLog:
        known = len(self._messages)
        if len(history) < known or not all(map(is_, self._messages, history)):
            self._reset()  # another history (a rewind, a reload): read it from the start
            known = 0
        grew = False
        for index in range(known, len(history)):
            message = history[index]
            if message.role != "assistant":
                continue
            self._last = index
            record = message.meta.get(SENT_META) if message.meta else None
            if isinstance(record, dict):
                when = record.get("at")
                self._at = when if isinstance(when, int) else message.created_at
                ids = record.get("applied")
                if isinstance(ids, list) and ids:
                    self._applied.update(i for i in ids if isinstance(i, str))
                    grew = True
            else:
                self._at = message.created_at or self._at
        if grew:
            self._frozen = frozenset(self._applied)
        if known != len(history):
            self._messages = list(history)
        if self._last < 0:
            return NOTHING_SENT
        return SentLog(self._at, self._frozen, frozenset(m.id for m in history[self._last + 1 :]))


class CacheDecision(BaseModel):
    """What the build did with the replacements the seed passes made."""

    mode: Mode
    at: int  # the build's `now`: when the request goes out
    held: int = 0  # replacements sent as the original, waiting for a cold cache
    held_tokens: int = 0  # what sending them whole costs this request
    applied_now: list[str] = []  # ids of messages sent as their replacement for the first time
    reason: str | None = None  # why a pending batch was applied: cold, pays, budget


def decide(
    before: list[Facts], after: list[Facts], log: SentLog, policy: CachePolicy, *, now_ms: int, flush: bool
) -> tuple[list[int], CacheDecision]:
    """The positions of `after` to send as in `before` (held), and the decision to record.

    `before`/`after`: the records before and after the replacing passes (same positions,
    counted); the positions where they differ are the replacements."""
    changed = list(compress(count(), map(is_not, after, before)))
    applied = log.applied
    pending = [i for i in changed if after[i].id not in applied and after[i].id not in log.unsent]
    held: list[int] = []
    reason = None
    if pending and policy.mode == "auto":
        if flush:
            reason = "budget"
        elif log.at is None or now_ms - log.at >= policy.ttl_ms:
            reason = "cold"
        else:
            cut = paying_cut(before, after, pending, log, policy)
            held = pending[:cut]
            if cut < len(pending):
                reason = "pays"
    keep = set(held)
    applied_now = [after[i].id for i in changed if i not in keep and after[i].id not in applied]
    held_tokens = sum(before[i].tokens - after[i].tokens for i in held)
    return held, CacheDecision(
        mode=policy.mode, at=now_ms, held=len(held), held_tokens=held_tokens, applied_now=applied_now, reason=reason
    )


def paying_cut(before: list[Facts], after: list[Facts], pending: list[int], log: SentLog, policy: CachePolicy) -> int:
    """How many of `pending` (oldest first) to keep holding: the newest ones are applied when
    what they free, read from the cache on the requests expected to follow, pays for
    writing again what the last request carried from the earliest of them on (it was
    cached: read at `read_share` if held, written at `write_share` if applied). What no
    request carried yet is written either way. All of them held: `len(pending)`."""
    end = len(after)
    while end > 0 and after[end - 1].id in log.unsent:
        end -= 1
    best, best_gain = len(pending), 0.0
    freed = suffix = 0
    position = end
    horizon = policy.horizon_requests
    for k in range(len(pending) - 1, -1, -1):
        index = pending[k]
        freed += before[index].tokens - after[index].tokens
        suffix += sum(f.tokens for f in after[index:position])
        position = index
        extra_now = suffix * policy.write_share - (suffix + freed) * policy.read_share
        gain = freed * policy.read_share * horizon - extra_now
        if gain > best_gain:
            best, best_gain = k, gain
    return best
