"""What recorded sessions would cost through cairn, priced the way providers bill prompt caches.

Each session file (any format `cairn session import` reads) is replayed request by request:
every assistant message on its active path was produced by one request, built here at that
message's timestamp from the messages before it, exactly as the loop builds it (the
session's request builder; what each request applied is recorded on its assistant message,
as the loop records it). Three ways of building are compared:

- append-only: no passes (an agent that sends everything as it was);
- exact: every seed replacement applied on every request (`context.cache_policy = "exact"`);
- auto: replacements of already-sent messages held while the cache is warm (the default
  for caching models; per model, since the decision uses the model's prices).

and priced for three models from litellm's price map: a Claude Sonnet (explicit cache
breakpoints: reads 0.1×, writes 1.25×, 5 min), a GPT-5 (automatic prefix cache: reads 0.1×,
1,024 tokens at least, 128-token steps) and a model without caching. Figures are billed
input as a ratio to append-only with caching (for the model without caching: to
append-only), plus the tokens of the last request.

    python bench/cost.py [--json] FILE...

Each request is also checked for recall (bench/recall.py, SPEC §12.13): of the facts the
message it produced took from tool output, the share it still contained; a request that
missed any is charged one round trip (the whole request again at the cache-read price plus a
2,000-token page written), which gives the "with round trips" figure.

`--json` prints `{"total": {MODEL: {"append_only": r, "exact": r, "auto": r, "recall":
{MODE: r}, "with_round_trips": {MODE: r}}}, "files": [{"file": name, MODEL: {...}}]}`; the
model without caching has `"cache": false`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
# The figures are the recorded sessions', not this machine's: no user instruction files
# (Claude Code's ~/.claude/CLAUDE.md, cairn's own AGENTS.md) join their system prompts.
os.environ["CLAUDE_CONFIG_DIR"] = os.environ["CAIRN_HOME"] = tempfile.mkdtemp(prefix="cairn-cost-")

from agent.context.builder import RequestBuilder, breakpoint_positions  # noqa: E402
from agent.llm.caching import breakpoint_style  # noqa: E402
from agent.llm.cost_map import model_info  # noqa: E402
from agent.prompt import build_system_prompt  # noqa: E402
from agent.session.importers import parse_any  # noqa: E402
from agent.session.loading import drop_unmatched_tool_calls  # noqa: E402
from agent.session.models import Message  # noqa: E402
from agent.settings.schema import Settings  # noqa: E402
from agent.tools.registry import default_registry  # noqa: E402
from bench.recall import facts_taken_from_tools, sent_tokens  # noqa: E402

MODELS = ("anthropic/claude-sonnet-4-5", "openai/gpt-5.1", "cerebras/llama-3.3-70b")
TTL_MS = 5 * 60 * 1000
DEFAULT_WORKSPACE = "/workspace"  # for a session file that names no folder
# OpenAI: prompts of 1,024 tokens or more are cached, in steps of 128 tokens.
AUTOMATIC_MIN_TOKENS, AUTOMATIC_STEP = 1024, 128
# A request that misses a fact the model used costs one more round trip: the model pages the
# fact back, the whole request is read again from the cache and the page is written.
ROUND_TRIP_PAGE_TOKENS = 2_000
# Append-only: the passes that change what is sent are off (orphans and the summary cut stay:
# the request must be valid).
NO_PASSES = {
    "terminal_max_age_ms": 10**15,
    "terminal_keep_recent_results": 10**9,
    "file_keep_recent_reads": 10**9,
    "max_inline_chars": 10**12,
}


@dataclass
class Request:
    at: int
    blocks: list[tuple[bytes, int]]  # (prefix hash through this block, tokens); block 0: tools + system
    breakpoints: list[int] = field(default_factory=list)  # block indexes marked (explicit caching)
    contents: list[bytes] = field(default_factory=list)  # hash of each block alone
    facts: int = 0  # what the message it produced took from tool output (bench/recall.py)
    missed: int = 0  # of those, what this request no longer contained

    @property
    def tokens(self) -> int:
        return sum(t for _, t in self.blocks)


def replay(
    history: list[Message],
    *,
    model: str,
    mode: str,
    passes: bool,
    workspace: Path,
    facts: dict[int, frozenset[str]] | None = None,
    seen: dict[bytes, frozenset[str]] | None = None,
) -> list[Request]:
    """The requests cairn would have sent for `history`, one per assistant message; with
    `facts` (per message index), how many of each message's facts its request missed
    (`seen`: the tokens of each sent message by content, shared between replays)."""
    seen = {} if seen is None else seen
    context = {} if passes else dict(NO_PASSES)
    context["cache_policy"] = mode if mode != "default" else None
    settings = Settings.model_validate({"workspace": str(workspace), "context": context})
    builder = RequestBuilder(settings, model)
    tools = default_registry().definitions()
    requests: list[Request] = []
    messages = [m.model_copy(update={"meta": dict(m.meta)}) for m in history]
    for index, message in enumerate(messages):
        if message.role != "assistant" or index == 0:
            continue
        at = message.created_at
        system = build_system_prompt(workspace, today=date.fromtimestamp(at / 1000))
        build = builder.build(messages[:index], now_ms=at, tools=tools, system_prompt=system)
        message.meta.update(builder.sent_record(build))
        fixed = builder.counter.count_tools(tools) + build.tokens.system
        digest = hashlib.blake2b(json.dumps([tools, system], sort_keys=True).encode(), digest_size=16)
        blocks = [(digest.copy().digest(), fixed)]
        contents = [digest.digest()]
        wanted = set(facts.get(index, ())) if facts else set()
        needs = len(wanted)
        for sent in build.messages[1:]:
            text = json.dumps(sent, sort_keys=True, ensure_ascii=False).encode()
            digest.update(text)
            blocks.append((digest.copy().digest(), builder.counter.count_message(sent)))
            content = hashlib.blake2b(text, digest_size=16).digest()
            contents.append(content)
            if wanted:
                if content not in seen:
                    seen[content] = frozenset(sent_tokens(sent))
                wanted -= seen[content]
        marks = [0] + breakpoint_positions(build.messages)  # message i of the request is block i
        requests.append(
            Request(
                at=at,
                blocks=blocks,
                breakpoints=sorted(set(marks)),
                contents=contents,
                facts=needs,
                missed=len(wanted),
            )
        )
    return requests


def prices(model: str) -> tuple[float, float, float, bool]:
    """(input, cache read, cache write) per token of `model`, and whether it needs breakpoints."""
    info = model_info(model)
    price_in = info.input_cost_per_token
    read = info.cache_read_input_token_cost if info.cache_read_input_token_cost is not None else price_in
    explicit = breakpoint_style(model) == "explicit"
    write = info.cache_creation_input_token_cost if explicit and info.cache_creation_input_token_cost else price_in
    return price_in, read, write, explicit


def price(requests: list[Request], model: str, cached: bool) -> float:
    """Billed input (USD) of `requests` on `model`, with its provider's prompt cache or none."""
    price_in, read, write, explicit = prices(model)
    if not cached:
        return sum(r.tokens for r in requests) * price_in
    cache: dict[bytes, int] = {}  # prefix hash → expiry
    total = 0.0
    for r in requests:
        live = {key for key, until in cache.items() if until > r.at}
        hit, hit_tokens, running = -1, 0, 0
        for index, (key, tokens) in enumerate(r.blocks):
            running += tokens
            if key in live:
                hit, hit_tokens = index, running
        if not explicit:
            if hit_tokens < AUTOMATIC_MIN_TOKENS:
                hit_tokens = 0
            hit_tokens -= hit_tokens % AUTOMATIC_STEP
            total += hit_tokens * read + (r.tokens - hit_tokens) * price_in
            for key, _ in r.blocks:
                cache[key] = r.at + TTL_MS
            continue
        # Explicit: what is up to the last breakpoint is read (the longest live prefix) or
        # written; what follows it is plain input. Each breakpoint's prefix is cached.
        last = max(r.breakpoints)
        upto = sum(t for _, t in r.blocks[: last + 1])
        total += hit_tokens * read + (upto - hit_tokens) * write + (r.tokens - upto) * price_in
        if hit >= 0:
            cache[r.blocks[hit][0]] = r.at + TTL_MS  # a hit refreshes its entry
        for index in r.breakpoints:
            cache[r.blocks[index][0]] = r.at + TTL_MS
    return total


def round_trips(requests: list[Request], model: str) -> float:
    """What the requests that missed a fact cost again: the whole request read from the
    cache and a page written (SPEC §12.13)."""
    _, read, write, _ = prices(model)
    return sum(r.tokens * read + ROUND_TRIP_PAGE_TOKENS * write for r in requests if r.missed)


def recall_counts(requests: list[Request]) -> tuple[int, int]:
    """(facts recalled, facts) over `requests`."""
    facts = sum(r.facts for r in requests)
    return facts - sum(r.missed for r in requests), facts


def floor_price(requests: list[Request], model: str) -> float:
    """Billed input of `requests` if every message sent within the TTL were a cache read
    wherever it stands: no prefix rule, so replacing one message costs only its own new
    text. Priced on the `exact` requests, this is the least any policy deciding *when* to
    apply the seeds' replacements could pay; what is left above the target can only come
    from sending less in the first place."""
    _, read, write, _ = prices(model)
    seen: dict[bytes, int] = {}  # block content → expiry
    total = 0.0
    for r in requests:
        for key, (_, tokens) in zip(r.contents, r.blocks, strict=False):
            total += tokens * (read if seen.get(key, 0) > r.at else write)
            seen[key] = r.at + TTL_MS
    return total


def session_history(path: Path) -> tuple[list[Message], Path]:
    """The active path of a session file (root → head), as the loop would load it, and the
    session's folder (path forms of one file are told apart relative to it)."""
    imported = parse_any(path.read_text(encoding="utf-8", errors="replace"))
    by_id = {m.id: m for m in imported.messages}
    path_: list[Message] = []
    at = by_id.get(imported.head_id) if imported.head_id else (imported.messages[-1] if imported.messages else None)
    while at is not None:
        path_.append(at)
        at = by_id.get(at.parent_id) if at.parent_id else None
    path_.reverse()
    return drop_unmatched_tool_calls(path_), Path(imported.cwd or DEFAULT_WORKSPACE)


MODES = ("append_only", "exact", "auto")


def measure(path: Path) -> dict:
    history, workspace = session_history(path)
    first = history[0].created_at if history else 0
    facts = facts_taken_from_tools(history, build_system_prompt(workspace, today=date.fromtimestamp(first / 1000)))
    seen: dict[bytes, frozenset[str]] = {}
    common = {"workspace": workspace, "facts": facts, "seen": seen}
    base = replay(history, model=MODELS[0], mode="exact", passes=False, **common)
    exact = replay(history, model=MODELS[0], mode="exact", passes=True, **common)
    out: dict = {"file": path.name, "requests": len(base)}
    for model in MODELS:
        cached = model_info(model).cache_read_input_token_cost is not None
        auto = replay(history, model=model, mode="default", passes=True, **common)
        runs = {"append_only": base, "exact": exact, "auto": auto}
        billed = {mode: price(runs[mode], model, cached) for mode in MODES}
        baseline = billed["append_only"] or 1.0
        trips = {mode: round_trips(runs[mode], model) for mode in MODES}
        counts = {mode: recall_counts(runs[mode]) for mode in MODES}
        out[model] = {
            "append_only": 1.0,
            "exact": billed["exact"] / baseline,
            "auto": billed["auto"] / baseline,
            "recall": {mode: _ratio(*counts[mode]) for mode in MODES},
            "with_round_trips": {mode: (billed[mode] + trips[mode]) / baseline for mode in MODES},
            "billed": {
                **billed,
                "floor": floor_price(exact, model) if cached else billed["exact"],
                "round_trips": trips,
                "recall_counts": counts,
            },
            "last_request_tokens": {
                "append_only": base[-1].tokens if base else 0,
                "exact": exact[-1].tokens if exact else 0,
                "auto": auto[-1].tokens if auto else 0,
            },
        }
        if not cached:
            out[model]["cache"] = False
    return out


def _ratio(recalled: int, facts: int) -> float:
    return recalled / facts if facts else 1.0


def totals(files: list[dict], floors: dict[str, float] | None = None) -> dict:
    """The ratios over all files; `floors`, when given, gets each model's floor ratio."""
    total: dict = {}
    floors = {} if floors is None else floors
    for model in MODELS:
        billed = {k: sum(f[model]["billed"][k] for f in files) for k in MODES}
        trips = {k: sum(f[model]["billed"]["round_trips"][k] for f in files) for k in MODES}
        counts = {
            k: tuple(sum(f[model]["billed"]["recall_counts"][k][i] for f in files) for i in (0, 1)) for k in MODES
        }
        base = billed["append_only"] or 1.0
        total[model] = {k: v / base for k, v in billed.items()}
        total[model]["recall"] = {k: _ratio(*counts[k]) for k in MODES}
        total[model]["with_round_trips"] = {k: (billed[k] + trips[k]) / base for k in MODES}
        floors[model] = sum(f[model]["billed"]["floor"] for f in files) / base
        if any(f[model].get("cache") is False for f in files):
            total[model]["cache"] = False
    return total


def _cells(figures: dict) -> str:
    """One model's cell: billed exact / auto, recall exact / auto, auto with round trips."""
    return (
        f"{figures['exact']:.3f} / {figures['auto']:.3f} · recall {figures['recall']['exact']:.3f} / "
        f"{figures['recall']['auto']:.3f} · {figures['with_round_trips']['auto']:.3f}"
    )


def table(result: dict, floors: dict[str, float]) -> str:
    lines = [
        "Each cell: billed exact / auto (÷ append-only) · recall exact / auto · auto with round trips",
        "",
        "| session | requests | " + " | ".join(MODELS) + " |",
        "|---|---|" + "---|" * len(MODELS),
    ]
    for f in result["files"]:
        lines.append(f"| {f['file'][:48]} | {f['requests']} | " + " | ".join(_cells(f[m]) for m in MODELS) + " |")
    lines.append("| **total** | | " + " | ".join(f"**{_cells(result['total'][m])}**" for m in MODELS) + " |")
    lines.append("")
    base = result["total"][MODELS[0]]
    lines.append(
        f"append-only: recall {base['recall']['append_only']:.3f}, with round trips "
        + ", ".join(f"{m} {result['total'][m]['with_round_trips']['append_only']:.3f}" for m in MODELS)
    )
    lines.append(
        "exact with round trips: "
        + ", ".join(f"{m} {result['total'][m]['with_round_trips']['exact']:.3f}" for m in MODELS)
    )
    lines.append(
        "floor of any when-to-apply policy (exact requests, every replacement free): "
        + ", ".join(f"{m} {floors[m]:.3f}" for m in MODELS)
    )
    lines.append("")
    lines.append("last request tokens (append-only / exact / auto, " + MODELS[0] + "):")
    for f in result["files"]:
        t = f[MODELS[0]]["last_request_tokens"]
        lines.append(f"  {f['file'][:48]}: {t['append_only']:,} / {t['exact']:,} / {t['auto']:,}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="*", type=Path, help="session files (none: an empty result)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    files = []
    for path in args.files:
        try:
            files.append(measure(path))
        except Exception as exc:  # one unreadable file does not hide the others' figures
            print(f"{path}: {type(exc).__name__}: {exc}", file=sys.stderr)
    if args.files and not files:
        return 1
    floors: dict[str, float] = {}
    result = {"total": totals(files, floors) if files else {}, "files": files}
    for f in files:
        for model in MODELS:
            del f[model]["billed"]  # USD of these replays: the ratios are the figures
    if args.json:
        print(json.dumps(result))
    elif files:
        print(table(result, floors))
    else:
        parser.print_usage(sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
