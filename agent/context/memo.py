"""The last result of each build step, reused when the step gets the very same input again.

The loop builds the same history more than once (the budget check, a retry, /context),
and between two steps most of it is unchanged. Each pass is a pure function of its input
records and its parameters, so a second run on the same list object with equal parameters
gives what the first gave. Lists of records are never mutated once made
(agent/context/facts.py hands back the same list for an unchanged history), so identity is
a sound key, and the entry's strong reference keeps it so. One `Memo` belongs to one
session's request builder (agent/context/state.py). A step may also reuse part of
its last run for a longer list that starts with the same items (`recall_prefix`,
`latest`): the loop's next request is the last one's history plus a few messages.
"""

from __future__ import annotations

from operator import is_
from typing import Any


class Memo:
    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[str, tuple[Any, Any, list, Any]] = {}

    def recall(self, step: str, source: Any, params: Any) -> tuple[list, Any] | None:
        """`(output, extra)` of `step` for this very `source` with equal `params` last time, else None."""
        entry = self._last.get(step)
        if entry is not None and entry[0] is source and entry[1] == params:
            return entry[2], entry[3]
        return None

    def latest(self, step: str) -> tuple[Any, Any, list, Any] | None:
        """`(source, params, output, extra)` of the step's last run, if any."""
        return self._last.get(step)

    def recall_prefix(self, step: str, source: list, params: Any) -> tuple[int, list, Any] | None:
        """For a `source` that starts with the very items of the step's last source (the loop's
        next request: the history a few messages longer): how many, and `(output, extra)` then."""
        entry = self._last.get(step)
        if (
            entry is not None
            and entry[1] == params
            and len(entry[0]) <= len(source)
            and all(map(is_, entry[0], source))
        ):
            return len(entry[0]), entry[2], entry[3]
        return None

    def remember(self, step: str, source: Any, params: Any, output: list, extra: Any = None) -> list:
        """Keep `(output, extra)` for `source` and return `output`, or the step's last output when
        the two hold the very same items (a pass re-run because the clock moved usually replaces
        the same results again): the next step then finds the list it saw last time."""
        entry = self._last.get(step)
        if entry is not None and len(entry[2]) == len(output) and all(map(is_, entry[2], output)):
            output = entry[2]
        self._last[step] = (source, params, output, extra)
        return output
