"""One object per wire protocol (agent/llm/wire.py): the request picks its protocol once, and
nothing outside the protocol objects asks which protocol it is speaking; a failure declares
what streamed before it on the error type."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent.llm.anthropic_wire import AnthropicWire
from agent.llm.client import ChatRequest, protocol_for, stream_chat
from agent.llm.errors import LLMError, NetworkError
from agent.llm.litellm_stream import LitellmWire
from agent.llm.openai_wire import OpenAIWire
from agent.llm.result import StreamResult
from tests.fakes.llm_server import FakeLLMServer, cut

AGENT = Path(__file__).resolve().parents[2] / "agent"
PROTOCOL_NAMES = {"openai", "anthropic"}


def _request(model: str, client: str = "auto") -> ChatRequest:
    return ChatRequest(model=model, messages=[], tools=[], client=client)


@pytest.mark.parametrize(
    "model,client,kind",
    [
        ("openai/gpt-4o", "auto", OpenAIWire),
        ("gpt-4o", "auto", OpenAIWire),
        ("anthropic/claude-sonnet-4-5", "auto", AnthropicWire),
        ("claude-opus-4-1", "auto", AnthropicWire),
        ("gemini/gemini-2.5-pro", "auto", LitellmWire),
        ("openai/gpt-4o", "litellm", LitellmWire),
        ("anthropic/claude-sonnet-4-5", "litellm", LitellmWire),
    ],
)
def test_each_request_picks_its_wire_protocol_object(model, client, kind):
    assert type(protocol_for(_request(model, client))) is kind


def _branches_on_a_protocol(path: Path) -> list[str]:
    """Comparisons with a protocol's name, or with something's `.protocol`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        named = any(isinstance(s, ast.Constant) and s.value in PROTOCOL_NAMES for s in sides)
        if named or any(isinstance(s, ast.Attribute) and s.attr == "protocol" for s in sides):
            found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_branches_on_which_protocol_it_speaks():
    found = [line for path in sorted(AGENT.rglob("*.py")) for line in _branches_on_a_protocol(path)]
    assert found == []


def test_the_branch_finder_sees_a_branch(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('if wire.protocol == "anthropic":\n    pass\nif name != "openai":\n    pass\nx = "openai"\n')
    assert len(_branches_on_a_protocol(sample)) == 2


def test_an_error_raised_before_any_request_carries_no_partial():
    assert LLMError("no key").partial is None


async def test_a_failed_stream_declares_what_arrived_on_the_error():
    with FakeLLMServer([cut(3, "half an answer, then nothing")]) as srv, pytest.raises(NetworkError) as caught:
        await stream_chat(
            ChatRequest(
                model="openai/m",
                messages=[{"role": "user", "content": "hi"}],
                tools=[],
                api_base=srv.base_url,
                api_key="sk-test",
            )
        )
    assert isinstance(caught.value.partial, StreamResult)
    assert caught.value.partial.content
