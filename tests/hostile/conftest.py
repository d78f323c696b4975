"""Shared helpers for the hostile-input tests: a tool context, bounded waits, a hang guard.

Every test here must end on its own: async work runs under `bounded` (asyncio.wait_for),
blocking calls under `bounded_sync` (a daemon thread joined with a timeout), and an
autouse guard aborts the whole run with every thread's traceback if a test still hangs
(pytest-timeout is not a dependency). The limits are generous hang detectors, never
performance assertions.
"""

from __future__ import annotations

import asyncio
import faulthandler
import json
import threading
from collections.abc import Callable
from typing import Any

import pytest

from agent.session.models import ToolCall
from agent.tools.base import ToolContext, ToolResult
from agent.tools.permissions import Permissions
from agent.tools.registry import default_registry

HANG_SECONDS = 30.0  # one call that takes longer than this is hanging
TEST_GUARD_SECONDS = 240.0  # a whole test


def _uncaptured_stderr(config) -> int:
    """pytest captures fd 2 during a test; its faulthandler plugin keeps a dup of the real one."""
    try:
        from _pytest.faulthandler import fault_handler_stderr_fd_key

        return config.stash[fault_handler_stderr_fd_key]
    except (ImportError, KeyError):
        return 2


@pytest.fixture(autouse=True)
def _hang_guard(request):
    faulthandler.dump_traceback_later(TEST_GUARD_SECONDS, exit=True, file=_uncaptured_stderr(request.config))
    yield
    faulthandler.cancel_dump_traceback_later()


async def bounded(awaitable, seconds: float = HANG_SECONDS):
    try:
        return await asyncio.wait_for(awaitable, seconds)
    except TimeoutError:
        raise AssertionError(f"did not finish within {seconds} s (hangs)") from None


def bounded_sync(fn: Callable[[], Any], seconds: float = HANG_SECONDS) -> Any:
    """Run `fn` in a daemon thread; its exception is re-raised, a hang fails the test."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise AssertionError(f"did not finish within {seconds} s (hangs)")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def make_call(name: str, arguments: Any, call_id: str = "c1") -> ToolCall:
    return ToolCall(id=call_id, name=name, arguments=arguments if isinstance(arguments, str) else json.dumps(arguments))


@pytest.fixture
def registry():
    return default_registry()


@pytest.fixture
def ctx(workspace) -> ToolContext:
    """No approver and no yolo: anything that needs the user's approval is refused."""
    return ToolContext(workspace=workspace, permissions=Permissions(), command_timeout=20.0)


@pytest.fixture
def yolo_ctx(workspace) -> ToolContext:
    """Everything approved: the tool's own limits are what is tested."""
    return ToolContext(workspace=workspace, permissions=Permissions(yolo=True), command_timeout=20.0)


def assert_storable(result: ToolResult) -> None:
    """What the loop stores: UTF-8 text and JSON meta (lone surrogates would crash SQLite)."""
    result.content.encode("utf-8")
    json.dumps(result.meta, ensure_ascii=False, default=str).encode("utf-8")


async def execute(registry, ctx: ToolContext, name: str, arguments: Any, seconds: float = HANG_SECONDS) -> ToolResult:
    """registry.execute under a hang guard; the result must be storable."""
    result = await bounded(registry.execute(make_call(name, arguments), ctx), seconds)
    assert isinstance(result, ToolResult)
    assert_storable(result)
    return result


def assert_error(result: ToolResult, *fragments: str) -> None:
    assert result.is_error, result.content[:500]
    assert result.content.startswith("Error: "), result.content[:500]
    for fragment in fragments:
        assert fragment in result.content, (fragment, result.content[:500])
