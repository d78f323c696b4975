"""web-search against a fake SearXNG (issue 47, SPEC §13.7): results reach the model's next
request; the tool is offered only when the user's config names a backend (a project's only once
trusted); filters, bounds and the backend's failures as `Error: …` results."""

from __future__ import annotations

import json

import pytest

from agent.paths import config_dir
from agent.runtime.ops import Prompt, SetMode
from agent.session.models import ToolCall
from agent.settings import trust
from agent.settings.config import load_settings, project_config_path
from agent.settings.schema import WebSettings
from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry, default_registry
from agent.tools.web_search import WebSearch
from tests.fakes.approver import FakeApprover
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.fakes.searxng_server import FakeSearxng, result
from tests.headless.helpers import base_args, cairn, needs_cairn

HITS = [
    result("asyncio.timeout — Python docs", "https://docs.python.org/3/library/asyncio-task.html", "Timeouts\n tasks"),
    result("A blog about timeouts", "https://blog.example.com/timeouts", "Use asyncio.timeout()"),
    result("Not a web page", "javascript:alert(1)", "dropped"),
    result("Python docs again", "https://www.python.org/doc/", "The docs"),
]


@pytest.fixture
def searxng():
    srv = FakeSearxng(HITS)
    yield srv
    srv.close()


def _user_config(body: str) -> None:
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text(body)


def _tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools") or []]


async def _search(web: WebSettings, workspace, **arguments) -> object:
    ctx = ToolContext(workspace=workspace, permissions=Permissions(approver=FakeApprover("deny")), web=web)
    call = ToolCall(id="s1", name="web-search", arguments=json.dumps(arguments))
    return await ToolRegistry([WebSearch()]).execute(call, ctx)


async def test_the_results_reach_the_next_request(server, open_runtime, searxng):
    """The model searches; the titles, URLs and snippets are in its next request, asked of the
    user's endpoint as SearXNG's JSON API, with no approval asked (the approver would say no)."""
    _user_config(f'[web]\nsearch_url = "{searxng.base_url}"\n')
    server.add(tool_calls([("c1", "web-search", {"query": "asyncio timeout"})]), text("found it"))
    approver = FakeApprover("deny")
    runtime = await open_runtime(yolo=False, approver=approver)
    try:
        await runtime.submit(Prompt("how do timeouts work in asyncio?"))
    finally:
        await runtime.close()
    assert "web-search" in _tool_names(server.requests[0])
    assert searxng.params == [{"q": "asyncio timeout", "format": "json"}] and searxng.paths == ["/search"]
    sent = server.requests[1]["messages"][-1]
    assert sent["role"] == "tool" and sent["tool_call_id"] == "c1"
    assert "1. asyncio.timeout — Python docs" in sent["content"]
    assert "https://docs.python.org/3/library/asyncio-task.html" in sent["content"]
    assert "Timeouts tasks" in sent["content"] and "javascript:" not in sent["content"]
    assert approver.requests == []


async def test_plan_mode_runs_a_search(server, open_runtime, searxng):
    _user_config(f'[web]\nsearch_url = "{searxng.base_url}"\n')
    server.add(tool_calls([("c1", "web-search", {"query": "q"})]), text("planned"))
    runtime = await open_runtime(yolo=False, approver=FakeApprover("deny"))
    try:
        await runtime.submit(SetMode("plan"))
        await runtime.submit(Prompt("plan it"))
    finally:
        await runtime.close()
    assert "Results for" in server.requests[1]["messages"][-1]["content"]


async def test_not_offered_without_a_backend(server, open_runtime):
    server.add(text("no search"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    names = _tool_names(server.requests[0])
    assert "web-fetch" in names and "web-search" not in names


async def test_a_project_config_needs_trust_to_name_the_endpoint(server, open_runtime, workspace, searxng):
    """A cloned repository cannot choose where the model's queries go: its `search_url` is a
    widening key, left out until the user trusts the folder's config."""
    config = project_config_path(workspace)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f'[web]\nsearch_url = "{searxng.base_url}"\n')
    assert load_settings(workspace).web.search_url is None
    server.add(text("untrusted"), text("trusted"))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert "web-search" not in _tool_names(server.requests[0])
    trust.trust(workspace, trust.digest(config.read_bytes()))
    assert load_settings(workspace).web.search_url == searxng.base_url
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert "web-search" in _tool_names(server.requests[1])


def test_native_search_alone_registers_the_tool_and_nothing_else_does():
    assert "web-search" not in default_registry().names
    assert "web-search" not in default_registry(WebSettings()).names
    assert "web-search" in default_registry(WebSettings(native_search=True)).names
    assert "web-search" in default_registry(WebSettings(search_url="http://127.0.0.1:1")).names


async def test_domain_filters_bound_and_site(workspace, searxng):
    web = WebSettings(search_url=searxng.base_url, search_max_results=5)
    res = await _search(web, workspace, query="docs", allowedDomains=["python.org"])
    assert not res.is_error
    assert "docs.python.org" in res.content and "www.python.org" in res.content
    assert "blog.example.com" not in res.content
    assert searxng.queries[-1] == "docs site:python.org"  # one allowed domain goes to the backend too
    res = await _search(web, workspace, query="docs", blockedDomains=["docs.python.org"])
    assert "docs.python.org" not in res.content and "blog.example.com" in res.content
    blocked_by_user = WebSettings(search_url=searxng.base_url, search_blocked_domains=["example.com"])
    res = await _search(blocked_by_user, workspace, query="docs")
    assert "blog.example.com" not in res.content and res.meta["results"] == 2
    one = WebSettings(search_url=searxng.base_url, search_max_results=1)
    res = await _search(one, workspace, query="docs")
    assert res.meta["results"] == 1 and "2." not in res.content


async def test_results_are_inert_and_cut(workspace):
    hostile = [result("\x1b]52;c;aGk=\x07title " + "x" * 1000, "https://evil.example/", "\x1b[2J" + "y" * 5000)]
    with FakeSearxng(hostile) as srv:
        res = await _search(WebSettings(search_url=srv.base_url), workspace, query="q")
    assert "\x1b" not in res.content and "\x07" not in res.content
    assert max(len(line) for line in res.content.splitlines()) < 600


@pytest.mark.parametrize(
    "mode,words",
    [("html", "did not answer JSON"), ("error", "HTTP 500"), ("hang", "did not answer within")],
)
async def test_backend_failures_are_errors(workspace, mode, words):
    with FakeSearxng(HITS, mode=mode) as srv:
        res = await _search(WebSettings(search_url=srv.base_url, timeout=0.5), workspace, query="q")
    assert res.is_error and res.content.startswith("Error: ") and words in res.content


async def test_backend_down_is_an_error(workspace):
    with FakeSearxng() as srv:
        url = srv.base_url
    res = await _search(WebSettings(search_url=url), workspace, query="q")
    assert res.is_error and "cannot reach the search backend" in res.content


@needs_cairn
def test_a_headless_run_can_disallow_it(workspace, searxng):
    """`--disallowed-tools web-search` is a rule `cairn -p` knows (the tool is named though only a
    configuration offers it) and refuses the model's search with it."""
    _user_config(f'[web]\nsearch_url = "{searxng.base_url}"\n')
    with FakeLLMServer([tool_calls([("c1", "web-search", {"query": "q"})])]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "x", "--disallowed-tools", "web-search")
    assert out.returncode == 6, out.stderr
    assert searxng.params == []


def test_a_project_raising_the_search_limits_needs_trust():
    """More results (tokens) or more of Anthropic's billed searches per request: raised only once
    trusted; lowered freely."""
    raised = trust.shown_items({"web": {"search_max_results": 20, "native_max_uses": 50}})
    assert [name for name, _ in raised] == ["web.search_max_results", "web.native_max_uses"]
    assert trust.shown_items({"web": {"search_max_results": 3, "native_max_uses": 1}}) == []
