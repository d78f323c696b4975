"""Step 5 of smart truncation: delete middle messages from the centre outwards (seed 001 §3.2.5).

"计算需要删除的token数（当前token数 - 阈值）/ 计算中间段消息的平均token数 / 计算启发式批大小：
excessTokens / avgTokensPerMessage / 从中间段中心开始，向两侧扩展确定删除范围": the centre of
the middle is what the model attends to least, and deleting a contiguous stretch there
(never at random, "不随机，避免消息不匹配") keeps both sides of the cut coherent.

One batch rarely lands exactly: the messages at the centre may be smaller or larger than
the average. So batches repeat — each recomputing the excess and the average over what is
left of the middle — until the total fits or the middle is empty. The batch is
`ceil(excess / average)` messages (at least one). Units go whole: an assistant message
with tool calls takes its results with it, so the batch may overshoot by a few messages.
The centre is the middle position of the middle units; ties go to the older side.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from agent.context.truncation.middle_range import Unit


@dataclass
class DeleteStats:
    messages_deleted: int = 0
    batches: int = 0


def centre_out(count: int) -> list[int]:
    """0..count-1 ordered by distance from the centre: any prefix is a contiguous centred stretch."""
    centre = (count - 1) / 2
    return sorted(range(count), key=lambda k: (abs(k - centre), k))


def heuristic_batch(excess: int, middle_tokens: int, middle_messages: int) -> int:
    """`excessTokens / avgTokensPerMessage`, rounded up, at least 1 message."""
    if middle_messages <= 0:
        return 0
    if middle_tokens <= 0:
        return middle_messages
    return max(1, math.ceil(excess * middle_messages / middle_tokens))


def delete_middle(
    units: list[Unit], unit_tokens: list[int], total: int, target: int, stats: DeleteStats | None = None
) -> tuple[list[Unit], int]:
    """The units without the deleted ones, and the new total. `unit_tokens[i]` is the count of
    `units[i]`; `total` the current total they are part of."""
    stats = stats if stats is not None else DeleteStats()
    middle = [i for i, unit in enumerate(units) if unit.middle]
    queue = [middle[k] for k in centre_out(len(middle))]
    deleted: set[int] = set()
    taken = 0  # prefix of `queue` already deleted
    while total > target and taken < len(queue):
        rest = queue[taken:]
        batch = heuristic_batch(
            total - target, sum(unit_tokens[i] for i in rest), sum(len(units[i].messages) for i in rest)
        )
        removed = 0
        while removed < batch and taken < len(queue):
            position = queue[taken]
            taken += 1
            deleted.add(position)
            removed += len(units[position].messages)
            total -= unit_tokens[position]
        stats.messages_deleted += removed
        stats.batches += 1
    return [unit for i, unit in enumerate(units) if i not in deleted], total
