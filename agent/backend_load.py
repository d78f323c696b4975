"""Loading the backend (litellm, the tokenizer) off the event loop, then settling the heap
it leaves so the collector's pauses stay short while a turn streams.

The runtime starts this in a daemon thread behind the first screen (agent/background.py).
"""

from __future__ import annotations


GC_YOUNG_THRESHOLD = 10_000  # allocations between young collections (default 700)
GC_MIDDLE_THRESHOLD = 10  # young collections per middle one (the default)
GC_OLD_THRESHOLD = 100  # middle collections per full one (default 10)


def load_backend(warm_tokenizer: str | None) -> None:
    from agent.offline import import_litellm, warm_up

    if warm_tokenizer:
        warm_up(warm_tokenizer)
    else:
        import_litellm()
    settle_heap()


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
