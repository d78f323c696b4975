"""Prompt caching end to end: the loop's requests to an Anthropic model carry cache
breakpoints (through real litellm to a fake that speaks the Messages API), the provider's
cache reads and writes are stored with the answer and priced at their own rates, and the
TUI's status bar shows the session cost and the last request's cache share."""

from __future__ import annotations

import json

from agent.llm.cost_map import request_cost
from agent.runtime.opening import FrontEnd
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from tests.fakes.anthropic_server import breakpoints, text, tool_use
from tests.ui.conftest import run_prompt, wait_ready

MODEL = "anthropic/claude-sonnet-4-5"


def anthropic_settings(workspace, server):
    return load_settings(
        workspace, flags={"model": MODEL, "api_base": server.base_url, "api_key": "sk-ant-test", "yolo": True}
    )


async def test_requests_carry_breakpoints_and_answers_record_the_cache(anthropic_server, workspace):
    (workspace / "a.py").write_text("x = 1\n")
    anthropic_server.add(
        tool_use(
            [("toolu_1", "filesystem-read", {"filePath": "a.py"})],
            input_tokens=40,
            cache_creation_input_tokens=2_400,
            cache_read_input_tokens=0,
        ),
        text("x is 1.", input_tokens=30, cache_read_input_tokens=2_400, cache_creation_input_tokens=120),
    )
    events: list = []
    runtime = await Runtime.open(anthropic_settings(workspace, anthropic_server), FrontEnd(on_event=events.append))
    try:
        await runtime.agent.run_turn("what is x?")
        first, second = anthropic_server.requests
        # After the system prompt (which covers the tools before it) and on the newest message.
        assert breakpoints(first)[0] == "system[0]" and breakpoints(first)[-1].startswith("messages[0]")
        marks = breakpoints(second)
        assert marks[0] == "system[0]" and len(marks) <= 4
        assert any(m.startswith(f"messages[{len(second['messages']) - 1}]") for m in marks)
        # The tool result that ends the request carries the newest breakpoint.
        last = second["messages"][-1]["content"]
        assert any(block.get("type") == "tool_result" and "cache_control" in block for block in last)

        history = await runtime.agent.current_history()
        answers = [m for m in history if m.role == "assistant"]
        assert answers[0].meta["usage"]["cache_write_tokens"] == 2_400
        assert answers[1].meta["usage"]["cache_read_tokens"] == 2_400
        assert answers[1].meta["usage"]["cache_write_tokens"] == 120
        # Priced with the cache prices: far below the same prompt at the full input price.
        usage = answers[1].meta["usage"]
        expected = request_cost(
            MODEL,
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=usage["completion_tokens"],
            cache_read_tokens=2_400,
            cache_write_tokens=120,
        )
        full = request_cost(MODEL, prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"])
        assert answers[1].meta["cost"] == expected.total < full.total
        # Each request records when it went out (what the next build reads as "sent").
        assert all(isinstance(m.meta["sent"]["at"], int) for m in answers)
        # The store keeps the last request as it went out: its marks are the ones the fake received.
        kept = await runtime.store.last_request(runtime.session.id)
        assert kept["model"] == MODEL and kept["sent_at"] == answers[1].meta["sent"]["at"]
        assert json.dumps(kept["messages"]).count("cache_control") == len(marks)
        report = await runtime.context_report()
        assert report["last_request"]["cache_read_tokens"] == 2_400
        assert report["cache"]["policy"] == "auto"
        shares = [e.cache_share for e in events if getattr(e, "type", "") == "usage" and e.cache_share is not None]
        assert shares and round(shares[-1], 3) == round(2_400 / usage["prompt_tokens"], 3)
    finally:
        await runtime.close()


async def test_status_bar_shows_cost_and_cache_share(anthropic_server, workspace):
    anthropic_server.add(text("Hello.", input_tokens=100, cache_read_input_tokens=900, cache_creation_input_tokens=0))
    app = CairnApp(anthropic_settings(workspace, anthropic_server))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "hi")
        status = app.status.render_text().plain
        assert "cache 90%" in status
        assert "$0.00" in status and "$0.0000" not in status  # a priced model: a real cost
