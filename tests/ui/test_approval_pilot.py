"""The approval modal: four answers where they make sense, two where a target is protected."""

from __future__ import annotations

import tomllib

from agent.ui.app import CairnApp
from agent.ui.screens.approval import ApprovalScreen
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, send, wait_for, wait_ready

SIZE = (120, 36)


async def wait_modal(pilot) -> None:
    """The first request of a process may still be loading litellm: wait as long as for the runtime."""
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, ApprovalScreen), READY_TIMEOUT, "the approval modal")


def options(app) -> list[str]:
    choices = app.screen.query_one("#approval-choices")
    return [str(choices.get_option_at_index(i).prompt) for i in range(choices.option_count)]


async def test_always_for_this_project_saves_the_rule_and_stops_asking(make_settings, server, workspace):
    server.add(
        tool_calls([("c1", "terminal-execute", '{"command": "touch a && git status"}')]),
        text("Ran it."),
        tool_calls([("c2", "terminal-execute", '{"command": "touch b"}')]),
        text("Ran it again."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "run it")
        await wait_modal(pilot)
        shown = options(app)
        assert shown[0] == "Yes, once  (y)" and shown[-2] == "No  (n / esc)"
        assert shown[-1] == "No, and tell cairn what to do instead  (t)"
        assert "always for `touch a`, `git status` commands this session  (a)" in shown[1]
        assert "always for `touch a`, `git status` commands in this project  (p)" in shown[2]
        assert not app.screen.query("#approval-reason")
        await pilot.press("p")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        assert (workspace / "a").exists()
        saved = tomllib.loads((workspace / ".cairn" / "config.toml").read_text())
        assert saved["permissions"]["allow_commands"] == ["touch a", "git status"]
        assert app.chat.tool_blocks[0].result.meta["permission"]["decision"] == "always_project"

        # `touch b` is another scope: it asks; `touch a …` would not.
        await send(pilot, "again")
        await wait_modal(pilot)
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, what="the second turn")
        await app.workers.wait_for_complete()
        assert (workspace / "b").exists()


async def test_protected_file_offers_only_once_or_no(make_settings, server, workspace):
    server.add(
        tool_calls([("c1", "filesystem-create", '{"filePath": ".env", "content": "TOKEN=1\\n"}')]),
        text("Created."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "make .env")
        await wait_modal(pilot)
        assert options(app) == ["Yes, once  (y)", "No  (n / esc)", "No, and tell cairn what to do instead  (t)"]
        reason = app.screen.query_one("#approval-reason").render().plain
        assert reason == "Always asks: .env files usually hold secrets."
        await pilot.press("a")  # not offered: nothing happens
        await pilot.pause()
        assert isinstance(app.screen, ApprovalScreen) and not (workspace / ".env").exists()
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        assert (workspace / ".env").read_text() == "TOKEN=1\n"
        stored = app.chat.tool_blocks[0].result.meta["permission"]
        assert stored["decision"] == "once" and stored["path"] == str((workspace / ".env").resolve())


async def test_unsafe_command_explains_why_it_asks(make_settings, server, workspace):
    server.add(tool_calls([("c1", "terminal-execute", '{"command": "echo $(whoami)"}')]), text("Fine."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "who")
        await wait_modal(pilot)
        assert "$(…) substitution" in app.screen.query_one("#approval-reason").render().plain
        assert "$ echo $(whoami)" in app.screen.query_one("#approval-detail").render().plain
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        assert app.chat.tool_blocks[0].result.meta["permission"]["decision"] == "deny"


async def test_a_project_rule_that_could_not_be_saved_is_told(make_settings):
    """The approval still holds for the session; the chat says the config was not changed."""
    from agent.session.models import Message, ToolCall
    from agent.turn.events import ToolFinished, ToolStarted
    from agent.ui.app import CairnApp
    from agent.ui.widgets.chat import Notice
    from tests.ui.conftest import wait_ready

    app = CairnApp(make_settings())
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_ready(pilot)
        call = ToolCall(id="c1", name="terminal-execute", arguments='{"command": "touch x"}')
        result = Message(
            role="tool",
            tool_call_id="c1",
            tool_name=call.name,
            content="{}",
            meta={
                "permission": {
                    "decision": "always_project",
                    "note": "not saved to .cairn/config.toml: permissions is not a table",
                }
            },
        )
        app.handle_event(ToolStarted(call=call))
        app.handle_event(ToolFinished(call=call, message=result))
        await pilot.pause()
        warnings = [n.text for n in app.chat.query(Notice) if n.kind == "warning"]
        assert warnings == ["Permission: not saved to .cairn/config.toml: permissions is not a table"]


def choices_fully_shown(app) -> bool:
    """Every option of the modal is inside the screen (none cut off below it)."""
    choices = app.screen.query_one("#approval-choices")
    box = app.screen.query_one("#approval-box")
    return (
        choices.region.height > 0
        and choices.region.bottom <= box.content_region.bottom
        and box.region.bottom <= app.screen.size.height
        and choices.region.height >= choices.virtual_size.height
    )


async def test_at_80x24_every_choice_is_shown_with_a_long_or_short_detail(make_settings, server, workspace):
    body = "".join(f"line {i} of a file the model wants to write\\n" for i in range(80))
    server.add(
        tool_calls([("c1", "filesystem-create", f'{{"filePath": "big.py", "content": "{body}"}}')]),
        tool_calls([("c2", "terminal-execute", '{"command": "touch a-file-with-a-long-name && git status"}')]),
        text("Done."),
    )
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "write it")
        await wait_modal(pilot)
        await wait_for(pilot, lambda: choices_fully_shown(app), what="every choice on screen (long diff)")
        assert app.screen.query_one("#approval-scroll").region.height >= 1
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, ApprovalScreen) and app.screen.request.tool == "terminal-execute",
            READY_TIMEOUT,
            "the second approval",
        )
        await wait_for(pilot, lambda: choices_fully_shown(app), what="every choice on screen (one line)")
        await pilot.press("down", "down", "down", "enter")  # the fourth choice, seen: No
        await wait_for(pilot, lambda: not app.turn_running, what="the turn to finish")
        await app.workers.wait_for_complete()
        assert app.chat.tool_blocks[-1].result.meta["permission"]["decision"] == "deny"
        assert (workspace / "big.py").is_file() and not (workspace / "a-file-with-a-long-name").exists()


async def test_no_and_tell_cairn_what_to_do_instead(make_settings, server, workspace):
    """The refusal is stored as the call's result, the turn stops, and the words go to the
    model as the next prompt: it reads both in one request, before doing anything else."""
    server.add(
        tool_calls([("c1", "terminal-execute", '{"command": "rm -rf build"}')]),
        text("Understood: I will only list it."),
    )
    (workspace / "build").mkdir()
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await send(pilot, "clean up")
        await wait_modal(pilot)
        await pilot.press("t")
        instead = app.screen.query_one("#approval-instead")
        await wait_for(pilot, lambda: instead.display and app.screen.focused is instead, what="the input")
        await wait_for(pilot, lambda: choices_fully_shown(app), what="the choices still on screen")
        await pilot.press("escape")  # back to the choices, nothing decided
        await wait_for(pilot, lambda: not instead.display, what="the choices again")
        assert isinstance(app.screen, ApprovalScreen)
        await pilot.press("t")
        await wait_for(pilot, lambda: app.screen.focused is instead, what="the input again")
        await pilot.press(*"just list what is in build", "enter")
        await wait_for(
            pilot,
            lambda: len(server.requests) == 2 and not app.turn_running,
            READY_TIMEOUT,
            "the words sent with the refusal",
        )
        await app.workers.wait_for_complete()
        assert (workspace / "build").is_dir()
        tool, user = server.requests[1]["messages"][-2:]
        assert tool["role"] == "tool" and "denied" in tool["content"]
        assert user["role"] == "user" and user["content"] == "just list what is in build"
        assert app.chat.tool_blocks[0].result.meta["permission"]["decision"] == "deny"
        shown = [n.text for n in app.chat.query("Notice")]
        assert "Interrupted" not in shown
        assert "just list what is in build" in [u.text for u in app.chat.query("UserMessage")]
        assert not app.queued.items and app.prompt.text == ""


def test_always_offers_the_command_prefix_it_would_save(workspace):
    """ "always" names the prefix it would allow (`git diff`, not `git diff src/a.py`) before
    anything is saved."""
    from agent.tools.permissions import ApprovalRequest, Permissions
    from agent.ui.screens.approval import choice_labels

    request = ApprovalRequest(
        tool="terminal-execute", kind="command", title="Run command", detail="git diff src/a.py", key="command"
    )
    prepared, _ = Permissions(workspace=workspace).prepare(request)
    assert prepared.scopes == ["command:git diff"]
    labels = dict(choice_labels(prepared))
    assert labels["always"] == "Yes, always for `git diff` commands this session  (a)"
    assert labels["always_project"] == "Yes, always for `git diff` commands in this project  (p)"
