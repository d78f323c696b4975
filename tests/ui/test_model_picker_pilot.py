"""Issue 18 gap: `/model` without a name opens a picker of the models a key is set for (from
litellm's bundled price map, litellm not imported), each with its context window."""

from __future__ import annotations

import subprocess
import sys

from agent.ui.app import CairnApp
from agent.ui.model_choices import PROVIDER_KEY_VARIABLES, available_models
from agent.ui.screens.model_picker import ModelPicker
from tests.ui.conftest import chat_text, send, wait_for, wait_ready

SIZE = (100, 30)
CLOSED = "http://127.0.0.1:9/v1"  # the discard port: nothing listens, the connection is refused
SERVED = ["qwen-coder", "llama-3.1-8b", "mistral-small"]


def clear_keys(monkeypatch) -> None:
    for names in PROVIDER_KEY_VARIABLES.values():
        for name in names:
            monkeypatch.delenv(name, raising=False)


def test_choices_come_from_the_providers_with_a_key(monkeypatch):
    clear_keys(monkeypatch)
    choices = available_models(None, False, {"ANTHROPIC_API_KEY": "sk-ant-test"})
    models = [c.model for c in choices]
    assert models and all(m.startswith("anthropic/") for m in models)
    sonnet = next(c for c in choices if c.model == "anthropic/claude-sonnet-4-5")
    assert sonnet.window == 200_000
    assert available_models(None, False, {}) == []
    assert [c.model for c in available_models("openai/gpt-4o", True, {})][:1][0].startswith("openai/")


def test_choices_do_not_import_litellm():
    code = (
        "import sys; from agent.ui.model_choices import available_models; "
        "assert available_models(None, False, {'OPENAI_API_KEY': 'x'}); "
        "assert 'litellm' not in sys.modules, 'litellm was imported'"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


async def test_model_without_a_name_picks_from_the_keyed_models(make_settings, server, monkeypatch):
    clear_keys(monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    app = CairnApp(make_settings())  # openai/fake with cairn's own key: openai models count too
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPicker), what="the model picker")
        picker = app.screen
        models = [c.model for c in picker.choices]
        assert any(m.startswith("anthropic/") for m in models) and any(m.startswith("openai/") for m in models)
        await pilot.press(*"claude sonnet-4-5")
        await pilot.pause()
        options = picker.query_one("#picker-list")
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert rows and all("claude" in r and "sonnet-4-5" in r for r in rows)
        assert any("anthropic/claude-sonnet-4-5  200k window" in r for r in rows)
        options.highlighted = next(i for i, r in enumerate(rows) if r.startswith("anthropic/claude-sonnet-4-5 "))
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.runtime.model == "anthropic/claude-sonnet-4-5", what="the model switch")
        assert "Model set to anthropic/claude-sonnet-4-5" in chat_text(app)
        assert app.focused is app.prompt


async def test_model_without_a_name_and_no_key_says_how(make_settings, server, monkeypatch):
    clear_keys(monkeypatch)
    app = CairnApp(make_settings(api_key=None, api_base=CLOSED))  # and no server to ask
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/model")
        await wait_for(pilot, lambda: "No provider key is set" in chat_text(app), what="the notice")
        assert "Model: openai/fake" in chat_text(app)
        assert not isinstance(app.screen, ModelPicker)


async def test_a_window_the_server_reported_is_the_one_shown(make_settings, server, monkeypatch):
    """A local model (no price map entry, no provider key) is offered with the window its
    server reported (llama.cpp /props, Ollama /api/show, vLLM /v1/models)."""
    from agent.llm.models import DiscoveredWindow

    clear_keys(monkeypatch)
    app = CairnApp(make_settings(api_key=None))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        app.runtime.agent.use_window(app.runtime.model, DiscoveredWindow(32_768, "server (llama.cpp /props)"))
        await send(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPicker), what="the model picker")
        options = app.screen.query_one("#picker-list")
        rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        # The server's model (it lists `fake-model`) after the current one, which it does not list.
        assert rows == [f"{app.runtime.model}  32.8k window  (current)", "openai/fake-model  window unknown"]


async def test_a_custom_servers_own_models_are_listed_not_the_public_catalogue(workspace, monkeypatch):
    """Issue 46 item 19 (walk 22): with --api-base, /model lists what the server serves
    (GET /v1/models), every one, the current one marked, and not OpenAI's public models."""
    from agent.settings.config import load_settings
    from tests.fakes.llm_server import FakeLLMServer

    clear_keys(monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # OpenAI's public list would be offered
    listed = {"object": "list", "data": [{"id": i, "object": "model"} for i in SERVED]}
    listed["data"][1]["max_model_len"] = 32_768
    with FakeLLMServer(extra_get={"/v1/models": listed}) as srv:
        flags = {"model": "openai/qwen-coder", "api_base": srv.base_url, "api_key": "sk-test"}
        app = CairnApp(load_settings(workspace, flags=flags))
        async with app.run_test(size=(80, 24)) as pilot:
            await wait_ready(pilot)
            await send(pilot, "/model")
            await wait_for(pilot, lambda: isinstance(app.screen, ModelPicker), what="the model picker")
            picker = app.screen
            assert [c.model for c in picker.choices] == [f"openai/{i}" for i in SERVED]  # only the server's
            title = str(picker.query_one("#picker-title").content)
            assert title.startswith(f"Choose a model — 3 served by {srv.base_url}")
            options = picker.query_one("#picker-list")
            rows = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
            assert rows[0] == "openai/qwen-coder  window unknown  (current)" and options.highlighted == 0
            assert rows[1] == "openai/llama-3.1-8b  32.8k window"
            await pilot.press("escape")


def test_a_server_that_does_not_answer_leaves_the_catalogue_and_says_so():
    from agent.ui.model_choices import ModelChoice, served_first

    catalogue = [ModelChoice("openai/gpt-4o", 128_000)]
    offered = served_first(None, catalogue, "openai/qwen", "http://127.0.0.1:8000/v1")
    assert offered.choices == catalogue
    assert (
        offered.title
        == "Choose a model — 1 with a key set (the server at http://127.0.0.1:8000/v1 did not list its models)"
    )
