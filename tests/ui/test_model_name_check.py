"""`/model NAME` refuses a name litellm cannot route, with the nearest names it knows (issue 28
item 6); a name that routes but is not listed is taken, with a note when it looks like a typo."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.commands.model import NEAREST, check_model_name
from tests.ui.conftest import chat_text, send, wait_for, wait_ready

SIZE = (100, 30)


def test_a_listed_model_is_taken_as_it_is():
    for name in ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "gpt-4o", "gemini/gemini-2.5-pro"):
        check = check_model_name(name)
        assert (check.routable, check.known, check.refusal, check.note) == (True, True, None, None), name


def test_a_name_without_a_provider_is_refused_with_the_nearest_names():
    check = check_model_name("gpt4o")
    assert not check.routable
    assert check.nearest[0] == "openai/gpt-4o" and len(check.nearest) <= NEAREST
    assert check.refusal is not None
    assert "'gpt4o'" in check.refusal and "provider/model" in check.refusal and "openai/gpt-4o" in check.refusal


def test_a_misspelt_provider_is_refused_with_the_right_one():
    check = check_model_name("antropic/claude-sonnet-4-5")
    assert not check.routable and check.nearest[0] == "anthropic/claude-sonnet-4-5"


def test_nothing_near_is_still_a_refusal_that_says_how():
    check = check_model_name("zzqx")
    assert not check.routable and check.nearest == ()
    assert check.refusal is not None and "provider/model" in check.refusal


def test_a_known_provider_with_an_unlisted_name_is_taken():
    """A model newer than litellm's list, or a local server's own name: routable, so taken."""
    for name in ("openai/my-local-model", "anthropic/claude-next-99"):
        check = check_model_name(name)
        assert check.routable and check.refusal is None, name
    typo = check_model_name("anthropic/claude-sonet-4-5")
    assert typo.routable and not typo.known
    assert typo.note is not None and "anthropic/claude-sonnet-4-5" in typo.note
    assert check_model_name("openai/my-local-model").note is None  # nothing close: no noise


async def test_model_command_refuses_an_unroutable_name_and_keeps_the_model(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "/model gpt4o")
        await wait_for(pilot, lambda: "Unknown model 'gpt4o'" in chat_text(app), what="the refusal")
        assert "Nearest known: openai/gpt-4o" in chat_text(app)
        assert app.runtime.model == "openai/fake"
        await send(pilot, "/model openai/gpt-4o")
        await wait_for(pilot, lambda: "Model set to openai/gpt-4o" in chat_text(app), what="the switch")
        assert app.runtime.model == "openai/gpt-4o"
    assert server.requests == []
