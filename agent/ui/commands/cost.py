"""/cost: what this session has used and cost so far, by model.

Read from what each answer stored when it arrived (`meta.usage`, `meta.cost`, computed by the
client at the model's prices, cache prices included), over every branch of the session: a
rewound branch was billed too. A subagent's child conversation counts under its own model,
from its `subagent` result (`meta.subagent` tokens, `meta.cost`), and so does the model a
condense summary asked (`meta.condensed.cost`). The cache share is the part of the prompt
tokens the provider read from its prompt cache, as the status bar shows per request.

A model the price map does not know (a local or custom one) reports no cost: its $0 is
"price unknown", not free, and `/cost` says so rather than print `$0.0000` as a total.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent.ui.commands.command import Command
from agent.ui.commands.listing import show_list

if TYPE_CHECKING:
    from agent.session.models import Message
    from agent.ui.host import Host


@dataclass
class ModelUsage:
    requests: int = 0
    prompt: int = 0  # input tokens, cache reads and writes included (as providers report them)
    completion: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    via: set[str] = field(default_factory=set)  # "subagent", "condense": not only the session's own answers


@dataclass
class CostSummary:
    by_model: dict[str, ModelUsage] = field(default_factory=dict)

    def model(self, name: str) -> ModelUsage:
        return self.by_model.setdefault(name or "unknown model", ModelUsage())

    @property
    def total(self) -> ModelUsage:
        out = ModelUsage()
        for usage in self.by_model.values():
            out.requests += usage.requests
            out.prompt += usage.prompt
            out.completion += usage.completion
            out.cache_read += usage.cache_read
            out.cache_write += usage.cache_write
            out.cost += usage.cost
        return out


def _int(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


def summarize(messages: list[Message]) -> CostSummary:
    summary = CostSummary()
    for m in messages:
        meta = m.meta or {}
        if m.role == "assistant" and isinstance(meta.get("usage"), dict):
            usage = meta["usage"]
            entry = summary.model(str(meta.get("model") or ""))
            entry.requests += 1
            entry.prompt += _int(usage.get("prompt_tokens"))
            entry.completion += _int(usage.get("completion_tokens"))
            entry.cache_read += _int(usage.get("cache_read_tokens"))
            entry.cache_write += _int(usage.get("cache_write_tokens"))
            entry.cost += _float(meta.get("cost"))
        elif m.role == "tool" and isinstance(meta.get("subagent"), dict):
            child = meta["subagent"]
            entry = summary.model(str(child.get("model") or ""))
            entry.requests += _int(child.get("requests"))
            entry.prompt += _int(child.get("prompt_tokens"))
            entry.completion += _int(child.get("completion_tokens"))
            entry.cost += _float(meta.get("cost"))
            entry.via.add("subagent")
        elif m.kind == "summary" and isinstance(meta.get("condensed"), dict):
            condensed = meta["condensed"]
            entry = summary.model(str(condensed.get("model") or ""))
            entry.requests += 1
            entry.cost += _float(condensed.get("cost"))
            entry.via.add("condense")
    return summary


def _share(usage: ModelUsage) -> str:
    return f"{min(1.0, usage.cache_read / usage.prompt):.0%}" if usage.prompt else "–"


def unpriced(summary: CostSummary) -> set[str]:
    """The models used whose price is not known: their cost is unknown, not $0."""
    from agent.llm.cost_map import model_info

    out = set()
    for name, usage in summary.by_model.items():
        info = model_info(name)
        if (
            not usage.cost
            and (usage.prompt or usage.completion or usage.requests)
            and (info is None or not info.priced)
        ):
            out.add(name)
    return out


def _dollars(cost: float, unknown: bool) -> str:
    if unknown:
        return "price unknown" if not cost else f"${cost:.4f} + unknown"
    return f"${cost:.4f}"


def format_cost(summary: CostSummary, unpriced: Collection[str] = ()) -> str:
    total = summary.total
    if not summary.by_model:
        return "Cost\n  Nothing used yet in this session."
    lines = [
        "Cost of this session (every branch, subagents included)",
        f"  Total cost          {_dollars(total.cost, bool(unpriced))}",
        f"  Requests            {total.requests:,}",
        f"  Input tokens        {total.prompt:,}",
        f"  Output tokens       {total.completion:,}",
        f"  Cache reads         {total.cache_read:,}",
        f"  Cache writes        {total.cache_write:,}",
        f"  Cache share         {_share(total)} of input tokens read from the prompt cache",
        "",
        "By model",
    ]
    for name, usage in sorted(summary.by_model.items(), key=lambda item: -item[1].cost):
        via = f" (incl. {', '.join(sorted(usage.via))})" if usage.via else ""
        requests = f"{usage.requests:,} request{'s' * (usage.requests != 1)}"
        lines.append(
            f"  {name}{via}: {_dollars(usage.cost, name in unpriced)} · {requests} · {usage.prompt:,} in · "
            f"{usage.completion:,} out · cache {usage.cache_read:,} read / {usage.cache_write:,} written"
        )
    if unpriced:
        names = ", ".join(sorted(unpriced))
        lines += [
            "",
            f"Price unknown for {names}: cairn knows no price for it, so what it used is not in the cost.",
        ]
    return "\n".join(lines)


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    messages = await app.runtime.billed_messages()
    summary = summarize(messages)
    show_list(app, format_cost(summary, unpriced(summary)))  # a model's long line wraps under its name


COMMAND = Command("cost", "show this session's tokens, cache share and cost by model", run)
