"""Offline facts of SPEC §1, applied before litellm or tiktoken is imported.

tiktoken downloads encodings on first use; litellm ships them, so point
TIKTOKEN_CACHE_DIR at litellm's folder (found without importing litellm). litellm
fetches its price map at import unless told to use the local copy.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import warnings
from pathlib import Path


def litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def apply_offline_env() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        folder = litellm_tokenizer_dir()
        if folder is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


_litellm = None


def import_litellm():
    """Import litellm once, quietly (its banners would corrupt the TUI and headless output)."""
    global _litellm
    if _litellm is None:
        apply_offline_env()
        # litellm's own deprecation noise would land on the terminal, under the TUI.
        warnings.filterwarnings("ignore", module=r"litellm(\..*)?$")
        warnings.filterwarnings("ignore", message=r".*ReadOnly.*", category=UserWarning)
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        litellm.telemetry = False
        # litellm prices each streamed request itself by counting the whole prompt with its own
        # encoding (cl100k_base: ~0.3 s to load, then every message encoded again per request);
        # cairn's costs come from the provider's reported usage (agent/llm/cost_map.py), so only
        # the encoding the context engine uses is ever loaded.
        litellm.disable_token_counter = True
        _litellm = litellm
    return _litellm


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
_WARM_UP_TOOLS = [{"type": "function", "function": {"name": "noop", "description": "warm-up",
                                                     "parameters": {"type": "object", "properties": {}}}}]


async def _mock_request(litellm) -> None:
    stream = await litellm.acompletion(
        model="openai/warm-up", messages=[{"role": "user", "content": "hi"}], stream=True, mock_response="ok",
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
        try:
            importlib.import_module(name)
        except Exception:  # best effort: only a speed-up
            pass
    try:
        # Async, as the loop asks: the async request path loads its own logging modules.
        asyncio.run(_mock_request(litellm))
    except Exception:  # warming is best effort; the real request reports real errors
        pass
    try:  # the SDK's first async client asks the platform (a `uname -p` subprocess, then cached)
        import platform

        platform.platform()
    except Exception:
        pass
    if tokenizer:
        from agent.context.tokens import counter_for

        counter_for(tokenizer).count_text("warm")
