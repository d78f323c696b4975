"""The streamed-chunk fast path (agent/llm/sdk_chunks.py) builds exactly what the SDK builds."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent.llm import sdk_chunks
from agent.offline import import_litellm

import_litellm()  # installs the fast path, as the app does
from openai import _base_client  # noqa: E402
from openai._models import BaseModel, construct_type  # noqa: E402
from openai.types.chat import ChatCompletionChunk  # noqa: E402

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def sometimes_wrong(good):
    """Mostly the right type, now and then anything (a provider's quirk): both paths must agree."""
    return st.one_of(good, good, good, st.none(), json_values)


function = st.fixed_dictionaries({}, optional={"name": sometimes_wrong(st.text(max_size=8)),
                                               "arguments": sometimes_wrong(st.text(max_size=20))})
tool_call = st.fixed_dictionaries({"index": sometimes_wrong(st.integers(0, 3))},
                                  optional={"id": sometimes_wrong(st.text(max_size=8)),
                                            "type": sometimes_wrong(st.just("function")),
                                            "function": sometimes_wrong(function)})
delta = st.fixed_dictionaries({}, optional={
    "content": sometimes_wrong(st.text(max_size=12)),
    "role": sometimes_wrong(st.sampled_from(["assistant", "user", "tool", "other"])),
    "refusal": sometimes_wrong(st.text(max_size=5)),
    "tool_calls": sometimes_wrong(st.lists(sometimes_wrong(tool_call), max_size=2)),
    "reasoning_content": st.text(max_size=8),  # a provider extension: an extra
})
choice = st.fixed_dictionaries({"index": sometimes_wrong(st.integers(0, 2)), "delta": sometimes_wrong(delta)},
                               optional={"finish_reason": sometimes_wrong(st.sampled_from(
                                   ["stop", "length", "tool_calls", "content_filter", "weird"])),
                                         "logprobs": st.none() | json_values})
usage = st.fixed_dictionaries({"prompt_tokens": sometimes_wrong(st.integers(0, 10**6)),
                               "completion_tokens": sometimes_wrong(st.integers(0, 10**6)),
                               "total_tokens": sometimes_wrong(st.integers(0, 10**6))})
chunk = st.fixed_dictionaries(
    {"id": sometimes_wrong(st.text(max_size=10)), "object": st.just("chat.completion.chunk"),
     "created": sometimes_wrong(st.integers(0, 2**40)), "model": sometimes_wrong(st.text(max_size=10)),
     "choices": sometimes_wrong(st.lists(sometimes_wrong(choice), max_size=2))},
    optional={"usage": st.none() | usage | json_values, "system_fingerprint": sometimes_wrong(st.text(max_size=6)),
              "service_tier": sometimes_wrong(st.sampled_from(["default", "flex", "odd"])),
              "x_extra": json_values})


def shape(value):
    """Everything `construct` decides: classes, field values, fields set and extras."""
    if isinstance(value, BaseModel):
        return (type(value), {k: shape(v) for k, v in value.__dict__.items()},
                sorted(value.__pydantic_fields_set__), shape(value.__pydantic_extra__),
                value.__pydantic_private__)
    if isinstance(value, dict):
        return (dict, {k: shape(v) for k, v in value.items()})
    if isinstance(value, list):
        return (list, [shape(v) for v in value])
    return (type(value), value)


def test_installed_on_the_real_stream_path():
    assert getattr(_base_client.construct_type, "_cairn_fastpath", False)
    assert sdk_chunks.install()  # idempotent


def test_a_text_chunk_takes_the_plan_not_the_sdk_walk(monkeypatch):
    calls = []
    compiler = sdk_chunks.compiler()
    monkeypatch.setattr(compiler, "construct_type", lambda **kw: calls.append(kw))
    data = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": "abcd", "role": "assistant"}, "finish_reason": None}]}
    built = compiler.build(ChatCompletionChunk, data)
    assert calls == [] and built.choices[0].delta.content == "abcd"
    assert shape(built) == shape(construct_type(value=data, type_=ChatCompletionChunk))


@settings(max_examples=400, deadline=None)
@given(data=chunk)
def test_same_object_as_the_sdk(data):
    fast = _base_client.construct_type(value=data, type_=ChatCompletionChunk)
    sdk = construct_type(value=data, type_=ChatCompletionChunk)
    assert shape(fast) == shape(sdk)
    assert fast == sdk


def test_other_types_and_non_dicts_go_to_the_sdk():
    assert _base_client.construct_type(value=[1], type_=ChatCompletionChunk) == [1]
    assert _base_client.construct_type(value={"a": 1}, type_=str) == {"a": 1}


def test_every_model_a_chunk_builds_is_planned_at_install():
    from openai.types.chat.chat_completion_chunk import Choice, ChoiceDelta

    compiler = sdk_chunks.compiler()
    compiler.plan_all(ChatCompletionChunk)
    assert {ChatCompletionChunk, Choice, ChoiceDelta} <= set(compiler.plans)


def test_a_failing_plan_leaves_the_chunk_to_the_sdk(monkeypatch):
    """An error inside the fast path must never break a stream: the SDK's own way decides."""
    installed = _base_client.construct_type
    monkeypatch.setattr(installed.compiler, "build", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("unforeseen")))
    data = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": {"content": "abcd"}}]}
    assert shape(installed(value=data, type_=ChatCompletionChunk)) == shape(
        construct_type(value=data, type_=ChatCompletionChunk))
