"""What the next request of a session holds, pass by pass (`cairn context`, `/context`).

Runs the same build the loop runs — same pipeline, tool definitions and system prompt —
on the stored active path, at `now` or at a past instant to reproduce what was sent then.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from agent.context.budget import budget_for
from agent.context.builder import RequestBuilder
from agent.session.models import Message
from agent.settings.schema import Settings

MAX_LISTED_EVENTS = 10  # a report lists the newest condense/truncation events


def context_report(
    history: list[Message],
    *,
    settings: Settings,
    session_id: str,
    model: str,
    workspace: Path,
    now_ms: int,
    dump: bool = False,
    last_request: dict[str, Any] | None = None,
    limits: Any = None,
    tools: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The next request's report; `last_request`: the one sent last, as the store kept it
    (`Store.last_request`); `limits`: the model's limits as the agent uses them (with the
    window its server reported), else looked up here (`model_limits`); `tools`: the agent's
    tool definitions (its MCP servers' included), else the built-in ones."""
    from agent.instructions import load_instructions
    from agent.llm.models import model_limits
    from agent.prompt import build_system_prompt
    from agent.tools.registry import default_registry

    if tools is None:
        tools = default_registry().definitions()
    instructions = load_instructions(workspace)
    day = datetime.fromtimestamp(now_ms / 1000).date()
    system = build_system_prompt(workspace, today=day, instructions=instructions)
    builder = RequestBuilder(settings, model or "")
    build = builder.build(history, now_ms=now_ms, tools=tools, system_prompt=system)
    if limits is None and model:
        limits = model_limits(settings, model)
    window = limits.context_window if limits else settings.context.default_context_window
    # The seed-001 rules (a per-model -1 or invalid value means the global percent).
    budget = budget_for(
        settings, model or "", window=window, max_output_tokens=limits.max_output_tokens if limits else None
    )
    report: dict[str, Any] = {
        "session_id": session_id,
        "now_ms": now_ms,
        "model": model,
        "tokens": {
            "system": build.tokens.system,
            "tools": build.tokens.tools,
            "messages": build.tokens.messages,
            "total": build.tokens.total,
        },
        "window": window,
        # Where the window came from: "config", "price map", "server (llama.cpp /props)" (or
        # another server endpoint, agent/llm/models.py::probe_window), "default".
        "window_source": limits.window_source if limits else "default",
        "threshold": budget.threshold,
        "allowed": budget.allowed,
        "passes": [p.model_dump() for p in build.report],
        "instructions": [{"path": f.shown, "chars": len(f.text), "source": f.description} for f in instructions.files],
        "calibration": _calibration(history),
        "cache": _cache(build, builder),
        "last_request": _last_request(last_request, history, builder, dump),
    }
    if dump:
        report["messages"] = builder.payload(build, tools)[0]
    return report


def _cache(build, builder: RequestBuilder) -> dict[str, Any]:
    """How the cache policy treated the next request's seed replacements (SPEC §12.11)."""
    decision = build.cache
    return {
        "policy": builder.policy.mode,
        "ttl_ms": builder.policy.ttl_ms,
        "held": decision.held,
        "held_tokens": decision.held_tokens,
        "applying": len(decision.applied_now),
        "reason": decision.reason,
    }


def _last_request(
    sent: dict[str, Any] | None, history: list[Message], builder: RequestBuilder, dump: bool
) -> dict[str, Any] | None:
    """The request sent last, exactly as it went out, with what the provider said of it."""
    if sent is None:
        return None
    messages, tools = sent.get("messages") or [], sent.get("tools") or []
    out: dict[str, Any] = {
        "sent_at": sent.get("sent_at"),
        "model": sent.get("model"),
        "message_count": len(messages),
        "tokens": builder.counter.count_messages(messages) + builder.counter.count_tools(tools),
    }
    answer = next((m for m in reversed(history) if m.role == "assistant" and m.meta.get("usage")), None)
    if answer is not None and (answer.meta.get("sent") or {}).get("at") == sent.get("sent_at"):
        usage = answer.meta["usage"]
        out.update(
            prompt_tokens=usage.get("prompt_tokens"),
            cache_read_tokens=usage.get("cache_read_tokens"),
            cache_write_tokens=usage.get("cache_write_tokens"),
            cost=answer.meta.get("cost"),
        )
    if dump:
        out["messages"] = messages
    return out


def _calibration(history: list[Message]) -> dict[str, int | None]:
    """Our tiktoken estimate beside the provider's count for the last answered request."""
    for message in reversed(history):
        usage = message.meta.get("usage") if message.role == "assistant" else None
        if usage and usage.get("prompt_tokens"):
            return {"estimated": message.meta.get("estimated_prompt_tokens"), "reported": usage["prompt_tokens"]}
    return {"estimated": None, "reported": None}


def format_report(report: dict[str, Any]) -> str:
    tokens, window = report["tokens"], report["window"]
    share = tokens["total"] / window if window else 0.0
    bar_width = 40
    filled = min(bar_width, round(share * bar_width))
    lines = [
        f"Session {report['session_id']}  ·  model {report['model'] or '(none)'}",
        f"[{'█' * filled}{'░' * (bar_width - filled)}] {tokens['total']:,} / {window:,} tokens ({share:.1%})"
        f"  ·  condense at {report['threshold']:,}"
        + (f" (allowed {report['allowed']:,})" if "allowed" in report else ""),
        *_over_budget_line(report),
        *([f"  window {window:,} tokens, from {report['window_source']}"] if report.get("window_source") else []),
        "",
        f"  system prompt   {tokens['system']:>10,}",
        f"  tools           {tokens['tools']:>10,}",
        f"  messages        {tokens['messages']:>10,}",
        *_instruction_lines(report.get("instructions") or []),
        "",
        f"  {'pass':<20}{'changed':>8}{'before':>12}{'after':>12}{'saved':>10}",
    ]
    for p in report["passes"]:
        saved = p["tokens_before"] - p["tokens_after"]
        lines.append(f"  {p['name']:<20}{p['changed']:>8}{p['tokens_before']:>12,}{p['tokens_after']:>12,}{saved:>10,}")
    refs = report.get("refs") or []
    if refs:
        lines += ["", f"  context files (newest {len(refs)}; the model reads them with context-read/tail/grep):"]
        for ref in refs:
            size = f"{ref['byteSize']:,} B" if ref.get("byteSize") is not None else ""
            lines.append(f"  {ref['id']:<22}{ref['kind']:<10}{size:>14}  {ref['hint']}")
    lines += _event_lines(report.get("events") or [])
    lines += _cache_lines(report)
    cal = report.get("calibration") or {}
    if cal.get("reported"):
        lines += [
            "",
            f"  last request: tiktoken estimate {cal['estimated'] or 0:,} · provider reported {cal['reported']:,}",
        ]
    return "\n".join(lines)


def _instruction_lines(files: list[dict[str, Any]]) -> list[str]:
    """The instruction files in the system prompt, with their sizes."""
    if not files:
        return []
    return ["", "  instructions in the system prompt:"] + [
        f"    {f['path']:<30}{f['chars']:>10,} chars  ({f['source']})" for f in files
    ]


def _cache_lines(report: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    cache = report.get("cache")
    if cache:
        line = f"  prompt cache: policy {cache['policy']}"
        if cache["held"]:
            line += (
                f" · {cache['held']} replacements held while the cache is warm "
                f"({cache['held_tokens']:,} tokens; applied when it is cold, when they pay, or when the "
                f"budget needs them)"
            )
        elif cache["reason"]:
            line += f" · {cache['applying']} held replacements applied now ({cache['reason']})"
        lines += ["", line]
    last = report.get("last_request")
    if last:
        when = (
            datetime.fromtimestamp(last["sent_at"] / 1000).strftime("%Y-%m-%d %H:%M:%S") if last.get("sent_at") else "?"
        )
        line = (
            f"  last request sent {when} to {last.get('model') or '?'}: {last['message_count']} messages, "
            f"{last['tokens']:,} tokens (tiktoken)"
        )
        if last.get("prompt_tokens"):
            read = last.get("cache_read_tokens") or 0
            line += (
                f"; provider: {last['prompt_tokens']:,} prompt tokens, {read / last['prompt_tokens']:.0%} from cache"
            )
        if last.get("cost") is not None:
            line += f", ${last['cost']:.4f}"
        lines.append(line)
    return lines


def _over_budget_line(report: dict[str, Any]) -> list[str]:
    total, allowed = report["tokens"]["total"], report.get("allowed")
    if total >= report["threshold"] or (allowed is not None and total > allowed):
        return ["over the budget: the next request condenses the conversation (or truncates the request)"]
    return []


def _event_lines(events: list[dict[str, Any]]) -> list[str]:
    """Seed 001 §9: each condense/truncation with tokens before → after, ratio, time, outcome."""
    if not events:
        return []
    condenses = [e for e in events if e["action"] == "condense"]
    ok = sum(e["outcome"] == "ok" for e in condenses)
    fallbacks = sum(e["action"] == "truncate" for e in events)
    lines = [
        "",
        f"  context management (newest {len(events)}): {ok}/{len(condenses)} condenses succeeded, "
        f"{fallbacks} truncations",
        f"  {'when':<12}{'action':<10}{'trigger':<10}{'outcome':<9}{'before':>10}{'after':>10}{'ratio':>7}{'time':>9}",
    ]
    for e in events:
        when = datetime.fromtimestamp(e["created_at"] / 1000).strftime("%m-%d %H:%M")
        ratio = e["tokens_after"] / e["tokens_before"] if e["tokens_before"] else 1.0
        lines.append(
            f"  {when:<12}{e['action']:<10}{e['trigger']:<10}{e['outcome']:<9}{e['tokens_before']:>10,}"
            f"{e['tokens_after']:>10,}{ratio:>7.0%}{e['duration_ms'] / 1000:>8.1f}s"
        )
        detail = e.get("detail") or {}
        if e.get("error"):
            lines.append(f"    {e['error']}")
        elif e["action"] == "truncate" and detail.get("messages_deleted") is not None:
            lines.append(
                f"    {detail['messages_deleted']} messages left out, {detail.get('calls_removed', 0)} tool "
                f"calls dropped, {detail.get('results_folded', 0)} file reads folded"
            )
    return lines
