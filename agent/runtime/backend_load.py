"""Loading the backend (litellm, the tokenizer) off the event loop, then settling the heap
it leaves so the collector's pauses stay short while a turn streams.

The runtime starts this in a daemon thread behind the first screen (agent/process/background.py).
"""

from __future__ import annotations

import asyncio
import contextlib

from agent.llm.offline import import_litellm

GC_YOUNG_THRESHOLD = 10_000  # allocations between young collections (default 700)
GC_MIDDLE_THRESHOLD = 10  # young collections per middle one (the default)
GC_OLD_THRESHOLD = 100  # middle collections per full one (default 10)


def load_backend(warm_tokenizer: str | None, litellm: bool = True) -> None:
    """`litellm`: the session's models need it (agent/llm/route.py); a model on the fast path
    never waits for its import (~2 s of CPU), nor shares the CPU with it on a first request."""
    if litellm:
        if warm_tokenizer:
            warm_up(warm_tokenizer)
        else:
            import_litellm()
    elif warm_tokenizer:
        from agent.context.tokens import counter_for

        counter_for(warm_tokenizer).count_text("warm")
    settle_heap()


# Modules litellm imports lazily on the first request (about 1 s): loaded ahead of time.
FIRST_REQUEST_MODULES = (
    "litellm.llms.openai.openai",
    "openai.resources",
    "openai.resources.chat.completions",
    "openai.lib.streaming.chat",
    "litellm.llms.litellm_proxy.chat",
    # Loaded by an async request's timing hooks, which a mock request skips. A private name,
    # warmed by name only (a missing one is skipped): README "Dependencies", test_warm_up.py.
    "litellm._service_logger",
    "litellm.responses.mcp.chat_completions_handler",  # the MCP check of a request with tools
)
# The warm-up request's one tool: a request with tools first passes litellm's MCP check,
# whose imports (~0.8 s) the first prompt paid before the warm-up sent a tool as well.
_WARM_UP_TOOLS = [
    {
        "type": "function",
        "function": {"name": "noop", "description": "warm-up", "parameters": {"type": "object", "properties": {}}},
    }
]


async def _mock_request(litellm) -> None:
    stream = await litellm.acompletion(
        model="openai/warm-up",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        mock_response="ok",
        tools=_WARM_UP_TOOLS,
    )
    async for _ in stream:
        pass


def warm_up(tokenizer: str | None = None) -> None:
    """Pay litellm's import and first-request costs now (meant for a worker thread).

    One offline mock completion loads what the first real request would, so the first
    token after Enter is not delayed by imports.
    """
    import importlib

    litellm = import_litellm()
    for name in FIRST_REQUEST_MODULES:
        with contextlib.suppress(Exception):  # best effort: only a speed-up
            importlib.import_module(name)
    # Async, as the loop asks: the async request path loads its own logging modules. Best
    # effort: the real request reports real errors.
    with contextlib.suppress(Exception):
        asyncio.run(_mock_request(litellm))
    try:  # the SDK's first async client asks the platform (a `uname -p` subprocess, then cached)
        import platform

        platform.platform()
    except Exception:
        pass
    if tokenizer:
        from agent.context.tokens import counter_for

        counter_for(tokenizer).count_text("warm")


def settle_heap() -> None:
    """Once the backend is loaded (bench/pipeline.py calls it too, to measure as the app runs)."""
    import gc

    # litellm leaves hundreds of thousands of long-lived objects: out of the collector's
    # reach, full collections during a turn no longer walk all of them again.
    gc.freeze()
    # Even so, a full collection still follows references into that heap: ~60-90 ms with
    # the event loop blocked, and at the default thresholds one ran every second of a fast
    # stream (each chunk leaves objects that live to the stream's end). Collect the young
    # less often and the old ten times less often: stalls at 1,000 tokens/s went from
    # ~200 to ~70 ms (bench/streaming.py); memory stays flat (bench/memory.py).
    gc.set_threshold(GC_YOUNG_THRESHOLD, GC_MIDDLE_THRESHOLD, GC_OLD_THRESHOLD)
