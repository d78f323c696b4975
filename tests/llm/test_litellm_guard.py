"""Guard for the one undocumented litellm name cairn relies on (README, "Dependencies").

agent/llm/client.py reads `received_finish_reason` on litellm's stream wrapper to tell a
stream that was cut off from one that finished: litellm puts a made-up "stop" on the last
chunk of both. litellm is therefore pinned exactly; these tests fail when the installed
litellm is not the pinned one, or when the name no longer means what cairn reads it for,
so an upgrade re-checks it before it lands."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

from agent.llm.litellm_stream import STREAM_FINISH_REASON_ATTRIBUTE
from agent.llm.offline import import_litellm
from tests.fakes.llm_server import FakeLLMServer, cut, text

REPO = Path(__file__).resolve().parents[2]


def _pinned(name: str) -> str | None:
    for requirement in tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]:
        m = re.match(rf"^{re.escape(name)}(\[[^\]]*\])?==([^\s,;]+)$", requirement.strip())
        if m:
            return m.group(2)
    return None


def test_litellm_is_pinned_exactly_and_the_pinned_version_is_installed():
    pinned = _pinned("litellm")
    assert pinned is not None, "litellm must keep an exact pin while cairn reads an undocumented name"
    assert version("litellm") == pinned, (
        f"litellm {version('litellm')} is installed, {pinned} is pinned: re-run tests/llm/test_litellm_guard.py "
        "against the new version and move the pin (pyproject.toml, then bash scripts/lock.sh)"
    )


async def _stream_wrapper(server: FakeLLMServer):
    litellm = import_litellm()
    stream = await litellm.acompletion(
        model="openai/fake-model",
        messages=[{"role": "user", "content": "hi"}],
        api_base=server.base_url,
        api_key="sk-test",
        stream=True,
        max_retries=0,
    )
    finish = None
    async for chunk in stream:
        for choice in chunk.choices:
            finish = choice.finish_reason or finish
    return stream, finish


async def test_a_finished_stream_reports_the_providers_finish_reason():
    with FakeLLMServer([text("all of it", finish_reason="length")]) as server:
        stream, finish = await _stream_wrapper(server)
    assert getattr(stream, STREAM_FINISH_REASON_ATTRIBUTE) == "length" and finish == "length"


async def test_a_cut_stream_reports_none_while_its_chunks_say_stop():
    with FakeLLMServer([cut(after_chunks=3, text="half of the answer", mode="eof")]) as server:
        stream, finish = await _stream_wrapper(server)
    assert finish == "stop"  # made up by litellm: why the wrapper's own record is read
    assert getattr(stream, STREAM_FINISH_REASON_ATTRIBUTE) is None
