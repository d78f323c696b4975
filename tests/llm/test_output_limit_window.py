"""The output limit fits a small window its server reports.

Issue 17, "With a real model": cairn sends `max_tokens` = the model's output limit
(`llm.max_output_tokens`, default 4,096) and asks a local server for its window. With a
4,096-token window that limit was the whole window: the request could never fit (vLLM refuses
it, llama.cpp cuts the prompt), the budget reserved the whole window for the reply (allowed
tokens below zero, so every request condensed), and the request's limit ignored the discovered
window altogether. Now the reply gets at most a quarter of a window it shares with the prompt,
the request sends that, and the budget keeps that much free.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from agent.context.budget import TOKEN_BUFFER_FRACTION, budget_for
from agent.llm.cost_map import model_info
from agent.llm.models import (
    MAX_OUTPUT_SHARE_OF_WINDOW,
    SOURCE_CONFIG,
    SOURCE_LLAMA_CPP,
    SOURCE_OPENAI_MODELS,
    SOURCE_PRICE_MAP,
    DiscoveredWindow,
    model_limits,
    output_cap,
)
from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Compact, Prompt
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from tests.fakes.llm_server import FakeLLMServer, error, text

SMALL_WINDOW = 4096
SMALL_CAP = math.floor(SMALL_WINDOW * MAX_OUTPUT_SHARE_OF_WINDOW)  # 1,024


def _settings(workspace, **flags):
    return load_settings(workspace, flags={"model": "openai/local", "api_base": "http://127.0.0.1:9/v1", **flags})


def test_the_output_limit_is_capped_by_a_window_shared_with_the_prompt(workspace):
    settings = _settings(workspace)
    small = model_limits(settings, "openai/local", DiscoveredWindow(SMALL_WINDOW, SOURCE_LLAMA_CPP))
    assert (small.context_window, small.max_output_tokens) == (SMALL_WINDOW, SMALL_CAP)
    assert output_cap(SMALL_WINDOW) == SMALL_CAP
    # a roomy window leaves the configured limit as it is
    roomy = model_limits(settings, "openai/local", DiscoveredWindow(32768, SOURCE_OPENAI_MODELS))
    assert roomy.max_output_tokens == settings.context.default_max_output_tokens == 4096
    # a configured limit is capped too, and so is a configured window's
    asked = _settings(workspace, llm={"max_output_tokens": 8000})
    assert model_limits(asked, "openai/local", DiscoveredWindow(16384, SOURCE_LLAMA_CPP)).max_output_tokens == 4096
    pinned = _settings(workspace, models={"openai/local": {"context_window": 2048, "max_output_tokens": 2000}})
    limits = model_limits(pinned, "openai/local")
    assert (limits.window_source, limits.max_output_tokens) == (SOURCE_CONFIG, 512)


def test_a_price_map_window_is_an_input_limit_and_keeps_the_maps_output_limit(workspace):
    """gpt-5.1: 272k input tokens, 128k output tokens on top: not a shared window."""
    info = model_info("openai/gpt-5.1")
    assert info.max_output_tokens > output_cap(info.context_window)
    limits = model_limits(load_settings(workspace, flags={"model": "openai/gpt-5.1"}), "openai/gpt-5.1")
    assert (limits.window_source, limits.max_output_tokens) == (SOURCE_PRICE_MAP, info.max_output_tokens)


def test_the_budget_keeps_room_for_the_capped_reply(workspace):
    settings = _settings(workspace)
    limits = model_limits(settings, "openai/local", DiscoveredWindow(SMALL_WINDOW, SOURCE_LLAMA_CPP))
    budget = budget_for(
        settings, "openai/local", window=limits.context_window, max_output_tokens=limits.max_output_tokens
    )
    assert budget.reserved == SMALL_CAP
    assert budget.allowed == math.floor(SMALL_WINDOW * (1 - TOKEN_BUFFER_FRACTION)) - SMALL_CAP == 2662
    # a prompt the budget allows, plus the whole reply, fits the window
    assert budget.allowed + budget.reserved <= SMALL_WINDOW
    # before: the reply's 4,096 tokens took the whole window and nothing was allowed
    uncapped = budget_for(settings, "openai/local", window=SMALL_WINDOW, max_output_tokens=4096)
    assert uncapped.allowed < 0


def _vllm_limit(answer: str):
    """A step that checks the request as vLLM does: prompt + max_tokens must fit
    max_model_len, else 400 with vLLM's message. The prompt is counted from the request's
    JSON (messages and tools, 4 characters a token: more than a tokenizer counts)."""

    def step(request: dict[str, Any]):
        prompt = len(json.dumps([request.get("messages"), request.get("tools")])) // 4
        wanted = request.get("max_tokens") or 0
        if prompt + wanted > SMALL_WINDOW:
            return error(
                400,
                message=f"This model's maximum context length is {SMALL_WINDOW} tokens. However, you "
                f"requested {prompt + wanted} tokens ({prompt} in the messages, {wanted} in "
                "the completion). Please reduce the length of the messages or completion.",
                type="BadRequestError",
            )
        return text(answer)

    return step


@pytest.mark.parametrize(
    "route",
    [
        {"/props": {"default_generation_settings": {"n_ctx": SMALL_WINDOW}, "total_slots": 1}},
        {
            "/v1/models": {
                "object": "list",
                "data": [{"id": "fake-model", "object": "model", "max_model_len": SMALL_WINDOW}],
            }
        },
    ],
    ids=["llama.cpp /props", "vLLM /v1/models"],
)
async def test_a_small_discovered_window_caps_every_request(workspace, route):
    """End to end through litellm: the turn's and the condense request's `max_tokens` are
    the capped limit, the server accepts both, and prompt + reply fit the window."""
    srv = FakeLLMServer([_vllm_limit("Hello back."), _vllm_limit("## Summary\nThe user said hi.")], extra_get=route)
    try:
        settings = load_settings(
            workspace,
            flags={
                "model": "openai/fake-model",
                "api_base": srv.base_url,
                "api_key": "sk-test",
                "yolo": True,
                "llm": {"max_retries": 0},
            },
        )
        events: list = []
        runtime = await Runtime.open(settings, FrontEnd(on_event=events.append))
        try:
            await runtime.ready()
            assert runtime.context_window == SMALL_WINDOW
            assert runtime.agent.limits.max_output_tokens == SMALL_CAP
            assert runtime.agent.budget.reserved == SMALL_CAP
            await runtime.submit(Prompt("hi"))
            report = await runtime.context_report()
            await runtime.submit(Compact())
        finally:
            await runtime.close()
    finally:
        srv.close()
    assert not [e for e in events if e.type in ("turn_error", "error")], events
    chat, summary = srv.requests
    assert chat["max_tokens"] == summary["max_tokens"] == SMALL_CAP
    assert report["tokens"]["total"] + chat["max_tokens"] <= SMALL_WINDOW
    answers = [e.message.content for e in events if e.type == "assistant_finished"]
    assert answers == ["Hello back."]
    srv.check_script()
