"""Keep a request's cost flat in long sessions: skip the openai SDK's typed walk of `messages`.

litellm sends OpenAI-compatible requests through the openai SDK, which "transforms" every
request body against its TypedDicts before sending it: for each message it tries each of
the six message types, calling `typing.get_type_hints` on each. At 1,000 messages that
walk took ~0.3 s per request, most of a turn's own time at turn 500 (bench/memory.py).

For chat messages the walk changes nothing: no message type declares a key alias or a
value format (`PropertyInfo`), so on plain JSON (dicts, lists, strings, numbers) its output
equals its input. `install()` therefore passes `messages` through untouched when both hold —
the message types are checked once, the values on every request — and leaves everything
else (the other parameters, any non-JSON value, another SDK version's types) to the SDK's
own transform. tests/llm/test_sdk_fastpath.py compares both on generated requests.
"""

from __future__ import annotations

import logging
import typing
from typing import Any

log = logging.getLogger(__name__)
_PLAIN_LEAVES = (str, int, float, bool, type(None))


def _is_plain_json(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, _PLAIN_LEAVES):
            continue
        if type(item) is dict:
            for key, child in item.items():
                if type(key) is not str:
                    return False
                stack.append(child)
        elif type(item) is list:
            stack.extend(item)
        else:
            return False
    return True


def _declares_property_info(tp: Any, property_info: type, seen: set[int]) -> bool:
    """Whether a key alias or value format is declared anywhere inside type `tp`."""
    if id(tp) in seen:
        return False
    seen.add(id(tp))
    for meta in getattr(tp, "__metadata__", ()):
        if isinstance(meta, property_info):
            return True
    if isinstance(tp, type) and typing.is_typeddict(tp):
        hints = typing.get_type_hints(tp, include_extras=True)
        return any(_declares_property_info(h, property_info, seen) for h in hints.values())
    return any(_declares_property_info(arg, property_info, seen) for arg in typing.get_args(tp))


def install() -> bool:
    """Patch the SDK's chat-completions module (idempotent); False where this SDK version's
    layout or types do not allow it (the SDK then works as it always does)."""
    try:
        from openai._utils import PropertyInfo
        from openai.resources.chat.completions import completions as module
        from openai.types.chat import completion_create_params as params
        from openai.types.chat.chat_completion_message_param import ChatCompletionMessageParam
    except ImportError:
        return False
    original = getattr(module, "async_maybe_transform", None)
    if original is None:
        return False
    if getattr(original, "_cairn_fastpath", False):
        return True
    try:
        if _declares_property_info(ChatCompletionMessageParam, PropertyInfo, set()):
            return False
        chat_params = (params.CompletionCreateParamsStreaming, params.CompletionCreateParamsNonStreaming)
    except Exception as exc:  # another SDK version: leave it alone
        log.debug("openai SDK fast path not installed: %s", exc)
        return False

    async def async_maybe_transform(data: Any, expected_type: Any) -> Any:
        if expected_type in chat_params and type(data) is dict:
            messages = data.get("messages")
            if type(messages) is list and _is_plain_json(messages):
                rest = await original({k: v for k, v in data.items() if k != "messages"}, expected_type)
                return {k: (messages if k == "messages" else rest[k]) for k in data if k == "messages" or k in rest}
        return await original(data, expected_type)

    async_maybe_transform._cairn_fastpath = True  # type: ignore[attr-defined]
    async_maybe_transform.original = original  # type: ignore[attr-defined]
    module.async_maybe_transform = async_maybe_transform
    return True
