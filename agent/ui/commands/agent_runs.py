"""What became of each subagent run, for `/agents`: running, done, failed or interrupted, how
long it took and what it cost.

Read from what is stored: the child's session (when it started) and the parent's answer to
the `subagent` call it served (`parent_call_id`: when it ended, its status, `meta.cost`). A
run with no answer yet is running while a turn is; with none and no turn, it was cut off
(cairn quit or crashed mid-run), which reads as interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent.session.models import Message, Session

TITLE_CHARS = 60  # a child's stored title is `agent: ` and its task cut here (agent/turn/children.py)


@dataclass(frozen=True)
class AgentRun:
    session: Session
    status: str  # "running" | "done" | "failed" | "interrupted"
    seconds: float
    cost: float | None  # None: not known (still running, or the model has no known price)
    tool_calls: int | None = None

    @property
    def title(self) -> str:
        """The task as stored, with `…` where it was cut (at a word, not mid-word)."""
        return shown_title(self.session.title, self.session.agent)

    def facts(self) -> str:
        """`done · 12s · $0.0031 · 3 tool calls`"""
        parts = [self.status, duration(self.seconds)]
        parts.append(f"${self.cost:.4f}" if self.cost is not None else "cost unknown")
        if self.tool_calls is not None:
            parts.append(f"{self.tool_calls} tool call{'s' * (self.tool_calls != 1)}")
        return " · ".join(parts)


def shown_title(title: str, agent: str | None = None) -> str:
    """`agent: task` as stored, with `…` where the task was cut (at a word, not mid-word)."""
    prefix = f"{agent}: " if agent and title.startswith(f"{agent}: ") else ""
    task = title[len(prefix) :]
    if len(task) < TITLE_CHARS:
        return title
    words = task.rsplit(" ", 1)[0] if " " in task[TITLE_CHARS // 2 :] else task
    return prefix + words.rstrip(" ,.;:") + "…"


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def _unpriced(model: str) -> bool:
    from agent.llm.cost_map import model_info

    info = model_info(model) if model else None
    return info is None or not info.priced


def agent_runs(runs: list[Session], billed: list[Message], *, busy: bool, now_ms: int) -> list[AgentRun]:
    """Each run with its status, duration and cost, in the order given."""
    answers = {m.tool_call_id: m for m in billed if m.role == "tool" and m.tool_call_id}
    out = []
    for run in runs:
        answer = answers.get(run.parent_call_id or "")
        if answer is None:
            status = "running" if busy else "interrupted"
            end = now_ms if busy else run.updated_at
            out.append(AgentRun(run, status, (end - run.created_at) / 1000, None))
            continue
        meta = answer.meta or {}
        found = meta.get("subagent")
        child: dict = found if isinstance(found, dict) else {}
        if meta.get("interrupted") or answer.status == "interrupted" or child.get("status") == "interrupted":
            status = "interrupted"
        elif answer.status == "error":
            status = "failed"
        else:
            status = "done"
        cost = meta.get("cost")
        if not cost and _unpriced(str(child.get("model") or "")):
            cost = None  # a local model's $0 is unknown, not free
        calls = child.get("tool_calls")
        out.append(
            AgentRun(
                run,
                status,
                (answer.created_at - run.created_at) / 1000,
                float(cost) if isinstance(cost, (int, float)) else None,
                int(calls) if isinstance(calls, int) else None,
            )
        )
    return out
