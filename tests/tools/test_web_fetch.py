"""web-fetch against a loopback server (issue 19): Markdown, approvals by host, the address
guard, caps, redirects, errors; and end to end through litellm and the fake LLM server."""

from __future__ import annotations

import asyncio
import ipaddress
import json

import httpcore
import pytest

from agent.paths import config_dir
from agent.runtime.ops import Prompt
from agent.session.models import ToolCall
from agent.settings import trust
from agent.settings.config import load_config, load_settings, project_config_path
from agent.settings.schema import WebSettings
from agent.tools.base import ToolContext
from agent.tools.fetch_rules import fetch_covered
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry
from agent.tools.web_fetch import WebFetch
from agent.tools.web_guard import AddressRefused, GuardedBackend, check_addresses, refusal
from tests.fakes.approver import FakeApprover
from tests.fakes.llm_server import text, tool_calls
from tests.tools.web_pages import PageServer

LOCAL = WebSettings(allow_private=True)


@pytest.fixture
def pages():
    other = PageServer()
    server = PageServer(other_port=other.port)
    server.other = other
    yield server
    server.close()
    other.close()


async def fetch(workspace, url, *, web=LOCAL, approver=None, allow=None, **arguments):
    approver = approver if approver is not None else FakeApprover("once")
    perms = Permissions(approver, allow=allow or [])
    ctx = ToolContext(workspace=workspace, permissions=perms, web=web)
    call = ToolCall(id="c1", name="web-fetch", arguments=json.dumps({"url": url, **arguments}))
    return await asyncio.wait_for(ToolRegistry([WebFetch()]).execute(call, ctx), 120), approver


async def test_html_becomes_markdown_after_one_approval(workspace, pages):
    res, approver = await fetch(workspace, pages.url("/article"))
    assert not res.is_error, res.content
    text_ = res.content
    assert text_.startswith(f"URL: {pages.url('/article')}\nTitle: The Title\n\n")
    assert "# Heading" in text_ and "**bold**" in text_ and "[link](https://example.org/doc)" in text_
    assert '```\nprint("hi")\n```' in text_ and "- one\n- two" in text_
    for junk in ("SCRIPT_TEXT", "FORM_TEXT", "color:red"):
        assert junk not in text_
    [request] = approver.requests
    assert request.kind == "fetch" and request.key == "fetch:127.0.0.1" and request.detail == pages.url("/article")
    assert res.meta["permission"]["decision"] == "once" and res.meta["permission"]["url"] == pages.url("/article")


async def test_loopback_is_refused_by_default_before_asking(workspace, pages):
    res, approver = await fetch(workspace, pages.url("/article"), web=WebSettings())
    assert res.is_error and "loopback" in res.content and "allow_private" in res.content
    assert approver.requests == [] and pages.requests == []


async def test_denied_fetch_sends_nothing(workspace, pages):
    res, _ = await fetch(workspace, pages.url("/article"), approver=FakeApprover("deny"))
    assert res.is_error and "not approved" in res.content and pages.requests == []


async def test_allow_rule_by_host_and_always_for_the_session(workspace, pages):
    res, approver = await fetch(workspace, pages.url("/plain"), allow=["fetch:127.0.0.1"])
    assert not res.is_error and '{"ok": true}' in res.content and approver.requests == []
    perms = Permissions(FakeApprover("always"), allow=[])
    ctx = ToolContext(workspace=workspace, permissions=perms, web=LOCAL)
    registry = ToolRegistry([WebFetch()])
    for path in ("/plain", "/article"):
        await registry.execute(ToolCall(id="c", name="web-fetch", arguments=json.dumps({"url": pages.url(path)})), ctx)
    assert len(perms.approver.requests) == 1


def test_domain_rules():
    keys = {"fetch:*.example.com", "fetch:docs.python.org"}
    assert fetch_covered("fetch:api.example.com", keys) == "fetch:*.example.com"
    assert fetch_covered("fetch:a.b.example.com", keys) == "fetch:*.example.com"
    assert fetch_covered("fetch:example.com", keys) is None
    assert fetch_covered("fetch:badexample.com", keys) is None
    assert fetch_covered("fetch:docs.python.org", keys) == "fetch:docs.python.org"
    assert fetch_covered("fetch:python.org", keys) is None


async def test_redirects_are_followed_and_another_host_is_asked_again(workspace, pages):
    res, approver = await fetch(workspace, pages.url("/redirect"))
    assert res.content.startswith(f"URL: {pages.url('/article')}\nTitle: The Title\n(redirected from ")
    assert len(approver.requests) == 1
    res, approver = await fetch(workspace, pages.url("/redirect-other-host"))
    assert not res.is_error, res.content
    assert [r.key for r in approver.requests] == ["fetch:127.0.0.1", "fetch:localhost"]
    before = list(pages.other.requests)

    async def first_host_only(request):
        return "once" if request.key == "fetch:127.0.0.1" else "deny"

    res, _ = await fetch(workspace, pages.url("/redirect-other-host"), approver=first_host_only)
    assert res.is_error and "localhost" in res.content and pages.other.requests == before


async def test_redirect_to_another_scheme_or_forever_is_refused(workspace, pages):
    res, _ = await fetch(workspace, pages.url("/redirect-file"))
    assert res.is_error and "only http and https" in res.content
    res, _ = await fetch(workspace, pages.url("/redirect-loop"))
    assert res.is_error and "more than 5 redirects" in res.content


@pytest.mark.parametrize(
    "url, expected",
    [
        ("ftp://example.com/x", "only http and https"),
        ("file:///etc/passwd", "only http and https"),
        ("http://user:secret@example.com/", "user name or password"),
        ("not a url", "only http and https"),
        ("http://", "has no host"),
        ("http://[zz::1]/", "invalid URL"),
    ],
)
async def test_bad_urls(workspace, url, expected):
    res, approver = await fetch(workspace, url)
    assert res.is_error and expected in res.content, res.content
    assert approver.requests == []


async def test_size_caps(workspace, pages):
    res, _ = await fetch(workspace, pages.url("/big"), web=WebSettings(allow_private=True, max_bytes=200_000))
    assert not res.is_error and "only its beginning was read" in res.content and len(res.content) < 200_000
    res, _ = await fetch(workspace, pages.url("/long-text"), maxChars=1000)
    assert "[cut at 1,000 of 250,000 characters" in res.content and len(res.content) < 1300
    res, _ = await fetch(workspace, pages.url("/gzip-bomb"), web=WebSettings(allow_private=True, max_bytes=1_000_000))
    assert not res.is_error and "only its beginning was read" in res.content and res.meta["bytes"] == 1_000_000


async def test_non_text_and_http_errors(workspace, pages):
    res, _ = await fetch(workspace, pages.url("/image"))
    assert res.is_error and "image/png" in res.content
    res, _ = await fetch(workspace, pages.url("/missing"))
    assert res.is_error and "HTTP 404" in res.content and "No such page" in res.content


async def test_no_path_is_not_a_redirect(workspace, pages):
    res, _ = await fetch(workspace, pages.url(""))
    assert res.is_error and "HTTP 404" in res.content  # "/" is not a page here; no redirect was followed
    res, _ = await fetch(workspace, pages.url("/plain#section"))
    assert res.content.startswith(f"URL: {pages.url('/plain')}\n\n")


async def test_charset_from_the_response(workspace, pages):
    res, _ = await fetch(workspace, pages.url("/latin1"))
    assert "café" in res.content


async def test_time_limit(workspace, pages):
    res, _ = await fetch(workspace, pages.url("/hang"), web=WebSettings(allow_private=True, timeout=0.5))
    assert res.is_error and "timed out" in res.content


def test_address_classes():
    for address in (
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
        "::1",
        "fe80::1",
        "fc00::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "2002:7f00:0001::1",
    ):
        assert refusal(ipaddress.ip_address(address)), address
    for address in ("8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8"):
        assert refusal(ipaddress.ip_address(address)) == "", address
    with pytest.raises(AddressRefused, match="10.0.0.1"):
        check_addresses("mixed.example", ["8.8.8.8", "10.0.0.1"], allow_private=False)  # every address counts
    assert check_addresses("mixed.example", ["8.8.8.8", "10.0.0.1"], allow_private=True) == ["8.8.8.8", "10.0.0.1"]


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """Stands in for httpcore's socket layer: records where the guard connects."""

    def __init__(self):
        self.connected: list[str] = []

    async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        self.connected.append(host)
        raise httpcore.ConnectError("recorded")

    async def sleep(self, seconds):
        pass


async def test_the_guard_resolves_checks_and_connects_to_the_checked_address():
    """Checked and connected are one step (no second DNS answer in between), on every hop."""
    inner = RecordingBackend()
    with pytest.raises(AddressRefused, match="loopback"):
        await GuardedBackend(allow_private=False, inner=inner).connect_tcp("localhost", 80)
    assert inner.connected == []
    with pytest.raises(httpcore.ConnectError):
        await GuardedBackend(allow_private=True, inner=inner).connect_tcp("localhost", 80)
    assert inner.connected and all(ipaddress.ip_address(a).is_loopback for a in inner.connected)


def test_allow_private_from_a_project_needs_trust(workspace):
    config = project_config_path(workspace)
    config.parent.mkdir()
    config.write_text("[web]\nallow_private = true\ntimeout = 7\n")
    loaded = load_config(workspace)
    settings = loaded.settings
    assert settings.web.allow_private is False and settings.web.timeout == 7
    assert any("web.allow_private" in w for w in loaded.warnings)
    trust.trust(workspace, trust.digest(config.read_bytes()))
    assert load_settings(workspace).web.allow_private is True


def test_allow_private_from_the_user_config(workspace):
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text("[web]\nallow_private = true\n")
    assert load_settings(workspace).web.allow_private is True


async def test_end_to_end_through_the_loop(server, open_runtime, workspace, pages):
    """The model asks for a page; the Markdown reaches its next request (settings from the
    user's config, which the loop passes in its tool context)."""
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text("[web]\nallow_private = true\n")
    server.add(tool_calls([("c1", "web-fetch", {"url": pages.url("/article")})]), text("read it"))
    runtime = await open_runtime(yolo=False, approver=FakeApprover("once"))
    try:
        await runtime.submit(Prompt("read the article"))
    finally:
        await runtime.close()
    sent = server.requests[1]["messages"][-1]
    assert sent["role"] == "tool" and "# Heading" in sent["content"] and "Title: The Title" in sent["content"]
    assert any(t["function"]["name"] == "web-fetch" for t in server.requests[0]["tools"])


async def test_always_for_this_project_saves_the_host_rule(workspace, pages):
    """ "Always in this project" writes `fetch:<host>` to [permissions] allow; the next session
    (settings loaded again, the folder trusted as cairn rewrote it) fetches without asking."""
    approver = FakeApprover("always_project")
    res, _ = await fetch(workspace, pages.url("/plain"), approver=approver)
    assert not res.is_error and approver.requests[0].choices == ["once", "always", "always_project", "deny"]
    assert "note" not in res.meta["permission"]
    settings = load_settings(workspace)
    assert "fetch:127.0.0.1" in settings.permissions.allow
    later = FakeApprover("deny")
    ctx = ToolContext(workspace=workspace, permissions=Permissions.from_settings(settings, later), web=LOCAL)
    call = ToolCall(id="c2", name="web-fetch", arguments=json.dumps({"url": pages.url("/article")}))
    res = await ToolRegistry([WebFetch()]).execute(call, ctx)
    assert not res.is_error and later.requests == []
    assert res.meta["permission"]["rule"] == "project:fetch:127.0.0.1"


def test_the_approval_dialog_names_the_host():
    from agent.tools.permissions import describe_scopes

    assert describe_scopes(["fetch:docs.python.org"]) == "fetching from docs.python.org"
