"""Anthropic's server-side web search (issue 47, SPEC §13.7) against the fake Messages API: offered
in place of `web-search` when `[web] native_search` is on, its `server_tool_use` and
`web_search_tool_result` blocks stored with their message and sent back as they came, paired,
on later requests; the searches priced; not offered where no protocol runs it."""

from __future__ import annotations

import pytest

from agent.llm.cost_map import request_cost
from agent.llm.server_search import NATIVE_TOOL_TYPE, SEARCH_USD, paired, searched
from agent.paths import config_dir
from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings, project_config_path
from tests.fakes.anthropic_server import Search, Thinking, search_result, text, tool_use
from tests.fakes.llm_server import text as openai_text

MODEL = "anthropic/claude-sonnet-4-5"
SEARCH = Search(
    "srvtoolu_01",
    "asyncio timeout python 3.11",
    [
        search_result("asyncio — Tasks", "https://docs.python.org/3/library/asyncio-task.html", "Eq1enc+/=="),
        search_result("PEP 654", "https://peps.python.org/pep-0654/", "Eq2enc=="),
    ],
)


def _user_config(body: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(body)


def _settings(workspace, server, **flags):
    base = {"model": MODEL, "api_base": server.base_url, "api_key": "sk-ant-test", "yolo": True}
    return load_settings(workspace, flags={**base, **flags})


def _tools(request: dict) -> list[dict]:
    return request.get("tools") or []


async def test_native_search_is_offered_stored_sent_back_and_priced(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    _user_config("[web]\nnative_search = true\nnative_max_uses = 3\n")
    anthropic_server.add(
        tool_use(
            [("toolu_1", "filesystem-read", {"filePath": "a.py"})],
            text="The docs say asyncio.timeout.",
            searches=[SEARCH],
            args_chunk_size=5,
            input_tokens=1000,
            output_tokens=100,
        ),
        text("done"),
        text("again"),
    )
    events: list = []
    runtime = await Runtime.open(_settings(workspace, anthropic_server), FrontEnd(on_event=events.append))
    try:
        await runtime.submit(Prompt("how do asyncio timeouts work?"))
        await runtime.submit(Prompt("and again?"))
        history = await runtime.agent.current_history()
    finally:
        await runtime.close()
    first, second, third = anthropic_server.requests
    assert anthropic_server.rejections == []
    native = [t for t in _tools(first) if t.get("type") == NATIVE_TOOL_TYPE]
    assert native == [{"type": NATIVE_TOOL_TYPE, "name": "web_search", "max_uses": 3}]
    assert "web-search" not in [t.get("name") for t in _tools(first)]  # the native tool stands in for it
    # The blocks go back as they came, after nothing but thinking, before the text and the call.
    blocks = [SEARCH.use_block(), SEARCH.result_block()]
    answered = second["messages"][-2]
    assert answered["role"] == "assistant" and answered["content"][:2] == blocks
    assert [b["type"] for b in answered["content"][2:]] == ["text", "tool_use"]
    assert third["messages"][1]["content"][:2] == blocks  # and in every later request
    searching = next(m for m in history if m.role == "assistant" and m.tool_calls)
    assert searching.meta["server_blocks"] == blocks
    assert searching.meta["usage"]["web_search_requests"] == 1
    tokens = request_cost(MODEL, prompt_tokens=1000, completion_tokens=100)
    assert tokens is not None
    assert searching.meta["cost"] == pytest.approx(tokens.total + SEARCH_USD)
    assert searched(searching.meta["server_blocks"]) == ["searched: asyncio timeout python 3.11 · 2 results"]


async def test_thinking_stays_first_and_the_pair_follows(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    _user_config("[web]\nnative_search = true\n")
    anthropic_server.add(
        tool_use(
            [("toolu_1", "filesystem-read", {"filePath": "a.py"})],
            thinking=[Thinking("search first", "sig-1")],
            searches=[SEARCH],
        ),
        text("done"),
    )
    settings = _settings(workspace, anthropic_server, llm={"reasoning_effort": "high"})
    runtime = await Runtime.open(settings, FrontEnd(on_event=lambda e: None))
    try:
        await runtime.submit(Prompt("look it up"))
    finally:
        await runtime.close()
    assert anthropic_server.rejections == []
    content = anthropic_server.requests[1]["messages"][-2]["content"]
    assert [b["type"] for b in content] == ["thinking", "server_tool_use", "web_search_tool_result", "tool_use"]


async def test_not_offered_and_not_sent_back_when_off(anthropic_server, workspace):
    """Without the setting no search tool goes out; a session whose message holds search blocks
    sends none of them to a request without the tool (its text stands alone, still valid)."""
    _user_config("[web]\nnative_search = true\n")
    anthropic_server.add(text("found", searches=[SEARCH]))
    runtime = await Runtime.open(_settings(workspace, anthropic_server), FrontEnd(on_event=lambda e: None))
    try:
        await runtime.submit(Prompt("search"))
        session_id = runtime.session.id
    finally:
        await runtime.close()
    _user_config("")
    anthropic_server.add(text("no search now"))
    runtime = await Runtime.open(
        _settings(workspace, anthropic_server), FrontEnd(on_event=lambda e: None), resume_id=session_id
    )
    try:
        await runtime.submit(Prompt("again"))
    finally:
        await runtime.close()
    last = anthropic_server.requests[-1]
    assert _tools(last) and all(t.get("type") == "custom" for t in _tools(last))
    assert "web-search" not in [t.get("name") for t in _tools(last)]
    sent = [b.get("type") for m in last["messages"] for b in m["content"] if isinstance(m["content"], list)]
    assert "server_tool_use" not in sent and "web_search_tool_result" not in sent
    assert anthropic_server.rejections == []


async def test_no_search_for_a_model_that_cannot_run_it(server, open_runtime):
    """`native_search` alone offers nothing to an OpenAI-compatible model; with `search_url` too,
    that model gets cairn's own `web-search`."""
    _user_config("[web]\nnative_search = true\n")
    server.add(openai_text("a"), openai_text("b"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    _user_config('[web]\nnative_search = true\nsearch_url = "http://127.0.0.1:9"\n')
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    first, second = server.requests
    assert "web-search" not in [t["function"]["name"] for t in first["tools"]]
    assert "web-search" in [t["function"]["name"] for t in second["tools"]]
    assert all(t.get("type") == "function" for t in first["tools"] + second["tools"])


def test_a_project_config_needs_trust_to_turn_it_on(workspace):
    config = project_config_path(workspace)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text("[web]\nnative_search = true\n")
    assert load_settings(workspace).web.native_search is False


def test_only_pairs_go_back_and_the_line_says_what_happened():
    use = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "q"}}
    cut = {"type": "server_tool_use", "id": "s2", "name": "web_search", "input": {"query": "r"}}
    failed = {
        "type": "web_search_tool_result",
        "tool_use_id": "s1",
        "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"},
    }
    assert paired([use, cut, failed]) == [use, failed]
    assert searched([use, failed]) == ["searched: q · failed (max_uses_exceeded)"]


def test_the_fake_refuses_a_search_without_its_result():
    """What the strict fake checks (and Anthropic refuses): a `server_tool_use` left unpaired."""
    from tests.fakes.anthropic_server import check_request

    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    turn = [SEARCH.use_block(), {"type": "text", "text": "cut"}]
    request = {"model": "m", "max_tokens": 10, "messages": [{"role": "assistant", "content": turn}]}
    assert check_request(request, headers) is not None
    turn.insert(1, SEARCH.result_block())
    assert check_request(request, headers) is None
