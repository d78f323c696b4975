"""A headless run's result, shaped as Claude Code's (`claude -p --output-format json`).

Scripts written for `claude -p` read `.result`, `.is_error`, `.subtype`, `.session_id`,
`.total_cost_usd`, `.usage`, `.num_turns`: cairn gives them those keys with Claude Code's
meaning, and keeps its own (`status`, `exit_code`, `requests`, `run_cost`, `text`, …) beside
them. One tally feeds both the json object and stream-json's last `result` line, so the two
never disagree (docs/headless.md).
A model litellm's price map has no price for costs 0 there, which is not "free": the result
then says `cost_known: false` (Claude Code always knows its prices; cairn's models may not).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from agent.llm.cost_map import model_info
from agent.tools.exit_plan_mode import recorded_plan
from agent.turn.events import (
    AssistantFinished,
    ContextManaged,
    Event,
    LimitReached,
    ToolFinished,
    TurnError,
    TurnFinished,
    UserMessage,
)

# Claude Code's result subtypes, by what ended the run.
SUBTYPE_SUCCESS = "success"
SUBTYPE_BY_LIMIT = {"max_turns": "error_max_turns", "max_cost": "error_max_budget_usd"}
SUBTYPE_OTHER_ERROR = "error_during_execution"  # a provider error, an interrupt, a tool limit


def _arguments(raw: str) -> Any:
    try:
        return json.loads(raw) if raw.strip() else {}
    except ValueError:
        return raw


class RunTally:
    """What the result reports, gathered from the run's events: the answer, the bill, the
    tokens, the time spent waiting on the model, the refusals, how the run ended."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.started = clock()
        self.final_text = ""
        self.plan: str | None = None  # exit-plan-mode's plan, recorded as this prompt's answer
        self.errors: list[str] = []
        self.status = "ok"
        self.limit: LimitReached | None = None
        self.run_cost = 0.0
        self.requests = 0
        self.input_tokens = 0  # Claude Code's meaning: not read from or written to the cache
        self.output_tokens = 0
        self.cache_read_tokens = 0
        self.cache_write_tokens = 0
        self.api_ms = 0.0
        self.unpriced: set[str] = set()
        self.denials: list[dict[str, Any]] = []
        self._asked_at: float | None = None  # when the request now answered was sent (about)

    def __call__(self, event: Event) -> None:
        if isinstance(event, UserMessage):
            self.plan = None
            self._asked_at = self._clock()
        elif isinstance(event, AssistantFinished):
            self._answered(event)
        elif isinstance(event, ToolFinished):
            self._asked_at = self._clock()  # the next request follows its last result
            child = event.message.meta.get("subagent")
            if child:  # a subagent's requests are this run's bill, and its count (as --max-turns counts them)
                self.run_cost += float(event.message.meta.get("cost") or 0.0)
                self.requests += int(child.get("requests") or 0) if isinstance(child, dict) else 0
            self.plan = recorded_plan(event.message.meta) or self.plan
            self.final_text = self.plan or self.final_text
            permission = event.message.meta.get("permission")
            if isinstance(permission, dict) and permission.get("decision") in ("refused", "plan"):
                self.denials.append(
                    {
                        "tool_name": event.call.name,
                        "tool_use_id": event.call.id,
                        "tool_input": _arguments(event.call.arguments),
                    }
                )
        elif isinstance(event, ContextManaged) and event.summary is not None:
            condensed = event.summary.meta.get("condensed")  # a summary's request is the run's bill too
            self.run_cost += float(condensed.get("cost") or 0.0) if isinstance(condensed, dict) else 0.0
            if event.event.trigger == "manual":
                self.final_text = event.summary.content or ""  # `-p "/compact …"` answers with the summary
        elif isinstance(event, TurnError):
            self.errors.append(event.message)
        elif isinstance(event, LimitReached):
            self.limit = event
        elif isinstance(event, TurnFinished):
            self.status = event.status

    def _answered(self, event: AssistantFinished) -> None:
        message = event.message
        now = self._clock()
        if self._asked_at is not None:
            self.api_ms += (now - self._asked_at) * 1000
        self._asked_at = now
        if message.status == "ok":
            self.requests += 1
            cost = float(message.meta.get("cost") or 0.0)
            self.run_cost += cost
            usage = message.meta.get("usage")
            if isinstance(usage, dict):
                read, write = int(usage.get("cache_read_tokens") or 0), int(usage.get("cache_write_tokens") or 0)
                prompt, completion = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
                self.input_tokens += max(prompt - read - write, 0)
                self.output_tokens += completion
                self.cache_read_tokens += read
                self.cache_write_tokens += write
                model = str(message.meta.get("model") or "")
                if not cost and (prompt or completion) and _unpriced(model):
                    self.unpriced.add(model)
        if not message.tool_calls and message.content and self.plan is None:
            self.final_text = message.content

    def result(self, *, exit_code: int, session_id: str | None, message: str | None = None) -> dict[str, Any]:
        """Claude Code's result object, cairn's keys beside (docs/headless.md)."""
        status = (
            "ok"
            if exit_code == 0
            else "interrupted"
            if exit_code >= 128  # Ctrl-C, SIGTERM, SIGHUP
            else "limit"
            if self.limit is not None
            else "error"
        )
        subtype = (
            SUBTYPE_SUCCESS
            if exit_code == 0
            else SUBTYPE_BY_LIMIT.get(self.limit.limit, SUBTYPE_OTHER_ERROR)
            if self.limit is not None and status == "limit"
            else SUBTYPE_OTHER_ERROR
        )
        cost = round(self.run_cost, 10)
        line: dict[str, Any] = {
            "type": "result",
            "subtype": subtype,
            "is_error": exit_code != 0,
            "duration_ms": round((self._clock() - self.started) * 1000),
            "duration_api_ms": round(self.api_ms),
            "num_turns": self.requests,
            "result": self.final_text,
            "session_id": session_id,
            "total_cost_usd": cost,
            "usage": {
                "input_tokens": self.input_tokens,
                "cache_creation_input_tokens": self.cache_write_tokens,
                "cache_read_input_tokens": self.cache_read_tokens,
                "output_tokens": self.output_tokens,
            },
            "permission_denials": self.denials,
            # cairn's own
            "status": status,
            "exit_code": exit_code,
            "requests": self.requests,
            "run_cost": cost,
            "cost_known": not self.unpriced,
            "text": self.final_text,
        }
        if self.unpriced:
            line["unpriced_models"] = sorted(self.unpriced)
        if self.limit is not None and status == "limit":
            line.update(limit=self.limit.limit, message=self.limit.message)
        elif message or self.errors:
            line["message"] = message or self.errors[-1]
        if line["is_error"] and "message" in line:
            line["errors"] = [line["message"]]
        return line


def _unpriced(model: str) -> bool:
    """The price map has no price for `model` (a local or custom model): its 0 is unknown, not free."""
    info = model_info(model) if model else None
    return info is None or not info.priced
