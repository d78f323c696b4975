"""The openai SDK fast path (agent/llm/sdk_fastpath.py) sends exactly what the SDK would."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent.llm import sdk_fastpath
from agent.offline import import_litellm

import_litellm()  # installs the fast path, as the app does
from openai import NOT_GIVEN  # noqa: E402
from openai.resources.chat.completions import completions as module  # noqa: E402
from openai.types.chat import completion_create_params as params  # noqa: E402

STREAMING = params.CompletionCreateParamsStreaming
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
tool_call = st.fixed_dictionaries({"id": st.text(max_size=8), "type": st.just("function"),
                                   "function": st.fixed_dictionaries({"name": st.text(max_size=8),
                                                                      "arguments": st.text(max_size=30)})})
message = st.one_of(
    st.fixed_dictionaries({"role": st.sampled_from(["system", "user"]), "content": st.text(max_size=40)}),
    st.fixed_dictionaries({"role": st.just("user"), "content": st.lists(
        st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=20)}), max_size=3)}),
    st.fixed_dictionaries({"role": st.just("assistant"), "content": st.none() | st.text(max_size=40)},
                          optional={"tool_calls": st.lists(tool_call, max_size=3)}),
    st.fixed_dictionaries({"role": st.just("tool"), "tool_call_id": st.text(max_size=8), "content": st.text()}),
    st.dictionaries(st.text(max_size=8), json_values, max_size=4),  # whatever a provider extension adds
)


def both(data: dict) -> tuple:
    fast = asyncio.run(module.async_maybe_transform(data, STREAMING))
    sdk = asyncio.run(module.async_maybe_transform.original(data, STREAMING))
    return fast, sdk


def test_installed_on_the_real_request_path():
    assert getattr(module.async_maybe_transform, "_cairn_fastpath", False)
    assert sdk_fastpath.install()  # idempotent


@settings(max_examples=150, deadline=None)
@given(messages=st.lists(message, max_size=8))
def test_same_body_as_the_sdk(messages):
    data = {"model": "gpt-x", "messages": messages, "stream": True, "temperature": NOT_GIVEN,
            "tools": [{"type": "function", "function": {"name": "t", "parameters": {"type": "object"}}}],
            "stream_options": {"include_usage": True}, "max_tokens": 100, "user": NOT_GIVEN}
    fast, sdk = both(data)
    assert json.dumps(fast) == json.dumps(sdk)  # same keys, order and values
    assert "temperature" not in fast and "user" not in fast


def test_non_json_values_go_through_the_sdk():
    class Weird:
        pass

    data = {"model": "m", "messages": [{"role": "user", "content": "hi", "x": Weird()}], "stream": True}
    fast, sdk = both(data)
    assert fast["messages"][0]["x"] is data["messages"][0]["x"]
    assert fast == sdk
    generator_messages = {"model": "m", "messages": ({"role": "user", "content": "hi"} for _ in range(2))}
    fast = asyncio.run(module.async_maybe_transform(generator_messages, STREAMING))
    assert fast["messages"] == [{"role": "user", "content": "hi"}] * 2  # the SDK turned it into a list


def test_other_types_are_untouched():
    from openai.types.chat import completion_update_params

    update = {"metadata": {"a": "b"}}
    assert asyncio.run(module.async_maybe_transform(update, completion_update_params.CompletionUpdateParams)) == update
    assert asyncio.run(module.async_maybe_transform(None, STREAMING)) is None


@pytest.mark.parametrize("value, plain", [
    ({"a": [1, 2.5, None, True, "x", {"b": []}]}, True),
    ({1: "int key"}, False),
    ([("tuple",)], False),
    ([NOT_GIVEN], False),
])
def test_plain_json_check(value, plain):
    assert sdk_fastpath._is_plain_json(value) is plain
