"""Issue 17, "With a real model": what a small local model behind llama.cpp showed.

Through real litellm against the scripted server: the output limit is sent with every request
(chat and condense), an answer cut off at that limit is said to be cut off (the stored meta, a
notice event, a line in the TUI's chat), and each request gets a line in the debug log.
"""

from __future__ import annotations

import logging

from agent.llm.cost_map import model_info
from agent.llm.models import model_limits
from agent.runtime.ops import Compact, Prompt
from agent.settings.config import load_settings
from tests.fakes.llm_server import text
from tests.loop.conftest import of_type

FAST_RETRIES = {"retry_base_delay": 0.01, "retry_max_delay": 0.05}
CUT_TEXT = "def parse(text):\n    for line in text.splitlines():\n        if line.startswith("


async def test_max_tokens_is_the_models_output_limit_by_default(server, open_runtime):
    """A model litellm does not know gets `context.default_max_output_tokens`; the condense
    (summary) request carries the same limit as a turn's request."""
    server.add(text("One."), text("## Summary\nThe user said hi."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
        await runtime.submit(Compact())
    finally:
        await runtime.close()
    limit = model_limits(runtime.settings, "openai/fake-model").max_output_tokens
    assert limit == runtime.settings.context.default_max_output_tokens == 4096
    chat, summary = server.requests
    assert chat["max_tokens"] == limit
    assert summary["max_tokens"] == limit and not summary.get("tools")


async def test_max_tokens_of_a_model_litellm_knows(server, open_runtime):
    """The map's output limit, sent as litellm words it for the model: `max_tokens` for
    gpt-4o, `max_completion_tokens` for OpenAI's reasoning models (gpt-5.1)."""
    server.add(text("One."), text("Two."))
    for model, field in (("openai/gpt-4o", "max_tokens"), ("openai/gpt-5.1", "max_completion_tokens")):
        expected = model_info(model).max_output_tokens
        assert expected and expected != 4096
        runtime = await open_runtime(flags={"model": model})
        try:
            await runtime.submit(Prompt("hi"))
        finally:
            await runtime.close()
        sent = server.requests[-1]
        assert sent.get(field) == expected, {k: v for k, v in sent.items() if k.startswith("max")}
        assert model_limits(runtime.settings, model).max_output_tokens == expected


async def test_configured_max_output_tokens_is_sent_and_kept_with_the_request(server, open_runtime):
    server.add(text("One."))
    runtime = await open_runtime(flags={"llm": {**FAST_RETRIES, "max_output_tokens": 777}})
    try:
        await runtime.submit(Prompt("hi"))
        kept = await runtime.store.last_request(runtime.session.id)
    finally:
        await runtime.close()
    assert server.requests[-1]["max_tokens"] == 777
    assert kept["params"]["max_tokens"] == 777  # what /context shows as the last request
    # The budget reserves for the reply what the request lets come back.
    assert runtime.agent.budget.reserved == 777


async def test_an_answer_cut_at_the_output_limit_says_so(server, open_runtime):
    server.add(text(CUT_TEXT, finish_reason="length", completion_tokens=900))
    runtime = await open_runtime(flags={"llm": {**FAST_RETRIES, "max_output_tokens": 900}})
    try:
        await runtime.submit(Prompt("write a parser"))
    finally:
        await runtime.close()
    assert of_type(runtime.events, "turn_finished")[-1].status == "ok"
    assert not of_type(runtime.events, "turn_error")
    [answer] = [e.message for e in of_type(runtime.events, "assistant_finished")]
    assert answer.content == CUT_TEXT
    assert answer.meta["finish_reason"] == "length" and answer.meta["max_output_tokens"] == 900
    [notice] = of_type(runtime.events, "notice")
    assert notice.message == "the answer was cut off at the model's output limit (llm.max_output_tokens = 900)."
    assert notice.kind == "warning"


async def test_a_finished_answer_has_no_notice(server, open_runtime):
    server.add(text("Done."))
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("hi"))
    finally:
        await runtime.close()
    assert not of_type(runtime.events, "notice")
    assert "max_output_tokens" not in of_type(runtime.events, "assistant_finished")[-1].message.meta


async def test_the_tui_shows_the_cut_off_notice(server, workspace):
    from agent.ui.app import CairnApp
    from agent.ui.widgets.chat import Notice
    from tests.ui.conftest import run_prompt, wait_ready

    server.add(text(CUT_TEXT, finish_reason="length"))
    settings = load_settings(
        workspace,
        flags={
            "model": "openai/fake",
            "api_base": server.base_url,
            "api_key": "sk-test",
            "llm": {"max_output_tokens": 321},
        },
    )
    app = CairnApp(settings)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "write a parser")
        shown = [(n.text, n.kind) for n in app.chat.query(Notice)]
    assert ("The answer was cut off at the model's output limit (llm.max_output_tokens = 321).", "warning") in shown


async def test_each_request_is_logged_at_info(server, open_runtime, caplog):
    server.add(text("Done.", prompt_tokens=1234, completion_tokens=56))
    runtime = await open_runtime()
    with caplog.at_level(logging.INFO, logger="agent.llm"):
        try:
            await runtime.submit(Prompt("hi"))
        finally:
            await runtime.close()
    [line] = [r.getMessage() for r in caplog.records if r.name == "agent.llm" and r.levelno == logging.INFO]
    assert line.startswith("request model=openai/fake-model messages=2 ")
    for part in (
        "max_tokens=4096",
        "prompt_tokens=1234",
        "completion_tokens=56",
        "cache_read_tokens=0",
        "cache_write_tokens=0",
        "finish_reason=stop",
        "cost=0.000000",
    ):
        assert part in line, line
    estimated = int(line.split("tokens_estimated=")[1].split()[0])
    assert estimated > 0
