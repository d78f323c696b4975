"""Step 1 of smart truncation: where the middle of the conversation is (seed 001 §3.2.5).

"找到1/6位置对应的消息索引（起始索引）/ 找到5/6位置对应的消息索引（结束索引）": the middle
is measured in cumulative tokens, not in messages, because models attend least to the
middle of a long context (seed §1.5) and one huge tool output can be most of it. The start
index is the message holding token position `total × start`, the end index the one holding
`total × end`; both are in the middle.

The other steps work on *units*, so they can never split a call from its results: an
assistant message with tool calls and the results right behind it form one unit, every
other message is a unit of its own. A unit is in the middle when its first message is.
Some units are never touched however the tokens fall ("保留开头和结尾", seed §8.1):
the first user message (the task, or the summary that replaced the start), the last user
message (what the user asks now) and the last unit (the exchange the model answers next).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent.session.models import Message

# "middlePercentileStart: 16.67（即1/6）/ middlePercentileEnd: 83.33（即5/6）"
MIDDLE_START = 1 / 6
MIDDLE_END = 5 / 6


@dataclass(frozen=True)
class Unit:
    """Messages that stay or go together; `middle` says whether truncation may touch them."""

    messages: tuple[Message, ...]
    middle: bool = False

    @property
    def tool_exchange(self) -> bool:
        """A tool call with its results, anywhere: what step 3 folds (all file views)."""
        head = self.messages[0]
        return head.role == "assistant" and bool(head.tool_calls)

    @property
    def middle_tool_exchange(self) -> bool:
        """A tool call with its results, inside the middle: what steps 2 and 3 may reshape."""
        head = self.messages[0]
        return self.middle and head.role == "assistant" and bool(head.tool_calls)


def middle_range(tokens: list[int], start: float = MIDDLE_START, end: float = MIDDLE_END) -> tuple[int, int] | None:
    """Inclusive message indexes holding the `start` and `end` points of the cumulative tokens.

    A message covers positions [tokens before it, tokens up to and with it); messages of
    zero tokens cover nothing and are never an end point. None when there are no tokens.
    """
    total = sum(tokens)
    if total <= 0:
        return None
    low, high = total * start, total * end
    first = last = None
    before = 0
    for index, size in enumerate(tokens):
        after = before + size
        if first is None and after > low:
            first = index
        if after > high:
            last = index
            break
        before = after
    if first is None:  # start ≥ 1: nothing left after the start point
        return None
    if last is None:  # end ≥ 1: the end point is past the last message
        last = len(tokens) - 1
    return first, last


def group_units(messages: list[Message]) -> list[Unit]:
    """Units of a valid list (every call answered right after it, see passes/orphans.py)."""
    units: list[Unit] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        size = 1 + (len(message.tool_calls) if message.role == "assistant" else 0)
        units.append(Unit(tuple(messages[index : index + size])))
        index += size
    return units


def protected_units(units: list[Unit]) -> set[int]:
    """First user message, last user message, last unit."""
    users = [i for i, unit in enumerate(units) if unit.messages[0].role == "user"]
    keep = {users[0], users[-1]} if users else set()
    if units:
        keep.add(len(units) - 1)
    return keep


def mark_middle(
    units: list[Unit], tokens: list[int], start: float = MIDDLE_START, end: float = MIDDLE_END
) -> list[Unit]:
    """The units with `middle` set from the seed's range over `tokens` (one count per message)."""
    span = middle_range(tokens, start, end)
    keep = protected_units(units)
    out: list[Unit] = []
    head = 0
    for position, unit in enumerate(units):
        middle = span is not None and span[0] <= head <= span[1] and position not in keep
        out.append(Unit(unit.messages, middle))
        head += len(unit.messages)
    return out


def flatten(units: list[Unit]) -> list[Message]:
    return [message for unit in units for message in unit.messages]
