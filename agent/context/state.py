"""What one session's builds remember between requests, in one object its builder owns.

A warm build reuses the last build's records (agent/context/facts.py), each step's last
result (agent/context/memo.py), each pass's last run (its `PassMemory`) and the request
records read so far (cache_policy.SentScan), so the loop's
next request costs about what is new in it. None of this changes what a build returns: a
build with a fresh `BuildState` gives the same request (tests/context/test_warm_builds.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.context.cache_policy import SentScan
from agent.context.facts import Records
from agent.context.memo import Memo

# Entries a pass's cache keeps before it is emptied at once (a session of 100,000 messages).
PASS_CACHE_LIMIT = 65_536


class PassMemory:
    """One pass's state between runs: its last run (`last`, the pass's own shape) and a
    bounded cache of what it derived from messages (`remembered`). A pass given a fresh one
    runs from scratch."""

    __slots__ = ("last", "cache")

    def __init__(self) -> None:
        self.last: Any = None
        self.cache: dict[Any, Any] = {}

    def remembered(self, key: Any, make: Callable[[], Any], limit: int = PASS_CACHE_LIMIT) -> Any:
        """`make()` for `key`, made once while the cache (at most `limit` entries) holds it."""
        found = self.cache.get(key)
        if found is None:
            if len(self.cache) >= limit:
                self.cache.clear()
            found = self.cache[key] = make()
        return found


class BuildState:
    __slots__ = ("records", "memo", "sent", "_passes")

    def __init__(self) -> None:
        self.records = Records()
        self.memo = Memo()
        self.sent = SentScan()  # what earlier requests carried (agent/context/cache_policy.py)
        self._passes: dict[str, PassMemory] = {}

    def memory(self, name: str) -> PassMemory:
        memory = self._passes.get(name)
        if memory is None:
            memory = self._passes[name] = PassMemory()
        return memory
