"""Snapshots of the screens and panels the other snapshot files leave out (issue 32): the plan
review, the model picker, a subagent's transcript, the mode badge, a subagent's block (running
and finished), the `@` path popup, the `/` popup and the no-model panel, each at 80×24 and
120×40, where layouts break. Same rules as tests/ui/test_snapshots.py: fixed messages, no runtime, no clock; accept
a deliberate change with `pytest tests/ui/test_snapshots_panels.py --snapshot-update`
(pictures in tests/ui/__snapshots__/test_snapshots_panels/)."""

from __future__ import annotations

import pytest

from agent.session.models import Message
from tests.ui.conftest import wait_for
from tests.ui.test_snapshots import (  # noqa: F401 - autouse
    SIZES,
    call,
    command_result,
    conversation,
    fixed_home,
    make_app,
    settle,
)

PLAN = """# Return a typed list from parse()

1. Change `parse(text)` to return `list[str]` and say so in its signature.
2. Make the lexer return `list[Token]` the same way, so callers can rely on it.
3. Run `pytest -q` and `mypy src` until both are clean; fix what mypy finds.

Files: src/parse.py, src/lexer.py, tests/test_parse.py."""


def transcript() -> list[Message]:
    """A child's run: a long grep line and a refused command, which must read whole, wrapped."""
    grep = call("c1", "terminal-execute", {"command": "grep -rn VERSION src"})
    rm = call("c2", "terminal-execute", {"command": "rm -rf build && echo cleaned"})
    hit = "src/pkg/version.py:1:VERSION = '1.2.3'  # read by setup.py, docs/conf.py and the release script"
    return [
        Message(id="u", role="user", content="Find where VERSION is defined"),
        Message(id="a1", role="assistant", content="", tool_calls=[grep, rm]),
        command_result("c1", "grep -rn VERSION src", hit + "\n", "", 0),
        Message(
            id="r-c2",
            role="tool",
            tool_call_id="c2",
            tool_name="terminal-execute",
            content="Error: not run: Run command: rm -rf build && echo cleaned. You are in the explore agent, "
            "which only reads: it cannot change files.",
            status="error",
        ),
        Message(id="a2", role="assistant", content="VERSION is defined in `src/pkg/version.py` line 1."),
    ]


TASK = "Find where VERSION is defined and every place that reads it"


@pytest.mark.parametrize("size", SIZES)
def test_plan_review(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.ui.screens.plan_review import PlanReviewScreen

        pilot.app.chat.show_history(conversation()[:2])  # docked under the chat, which stays in view
        await settle(pilot)
        pilot.app.push_screen(PlanReviewScreen(PLAN))
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_model_picker(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.ui.model_choices import ModelChoice
        from agent.ui.screens.model_picker import ModelPicker

        choices = [
            ModelChoice("openai/fake-model", 128_000),
            ModelChoice("anthropic/claude-sonnet-4-5-20250929", 200_000),
            ModelChoice("openrouter/qwen/qwen3-coder-480b-a35b-instruct-with-a-long-name", None),
        ]
        pilot.app.push_screen(ModelPicker(choices, current="openai/fake-model"))
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_subagent_transcript(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.ui.screens.transcript import TranscriptScreen

        pilot.app.push_screen(
            TranscriptScreen(
                "explore: Find where VERSION is defined",
                transcript(),
                facts="done · 4s · $0.0012 · 2 tool calls",
            )
        )
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_mode_badge(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        pilot.app.chat.show_history(conversation()[:2])
        pilot.app.status.set_info(mode="acceptEdits")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_subagent_blocks(snap_compare, tmp_path, size):
    """A finished subagent (its cost on the collapsed line, its answer opened: Markdown, as the
    chat's) and one still running (its tools as live lines, as the parent's calls read; a
    refused one marked ✗)."""

    async def run_before(pilot) -> None:
        app = pilot.app
        done = call("s1", "subagent", {"agent": "explore", "task": TASK})
        app.chat.show_history(
            [
                Message(id="u1", role="user", content="who defines VERSION?"),
                Message(id="a1", role="assistant", content="", tool_calls=[done]),
                Message(
                    id="r-s1",
                    role="tool",
                    tool_call_id="s1",
                    tool_name="subagent",
                    content="VERSION is defined in `version.py` line 1.\nNothing else **assigns** it.",
                    meta={"subagent": {"tool_calls": 3}, "cost": 0.0123},
                ),
            ]
        )
        await settle(pilot)
        running = call("s2", "subagent", {"agent": "general", "task": "Rename VERSION to __version__"})
        block = app.chat.tool_started(running)
        await wait_for(pilot, lambda: block.is_mounted, what="the running block")  # output comes later
        app.chat.tool_output("s2", 'filesystem-read {"filePath": "version.py"}\n')
        app.chat.tool_output("s2", 'filesystem-search {"pattern": "VERSION", "path": "src"}\n')
        app.chat.tool_output("s2", 'terminal-execute {"command": "rm -rf build && echo cleaned"}\n')
        app.chat.tool_output("s2", "✗ refused: the user said no\n")
        await wait_for(pilot, lambda: "refused" in block.pending_text, what="the live lines")
        app.chat.tool_blocks[0].toggle_fold()  # the finished child's answer, opened
        await wait_for(pilot, lambda: app.chat.tool_blocks[0].query("MarkdownBlock"), what="its answer drawn")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_path_popup(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        app = pilot.app
        for name in ("src/parse.py", "src/lexer.py", "tests/test_parse.py", "README.md"):
            path = tmp_path / "ws" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("")
        await settle(pilot)
        app.prompt.insert("look at @pars")
        popup = app.query_one("PathPopup")
        await wait_for(pilot, lambda: popup.display and popup.option_count > 0, what="the path popup")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_slash_popup(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        app = pilot.app
        await settle(pilot)
        app.prompt.insert("/")
        await wait_for(pilot, lambda: app.prompt.popup.visible, what="the slash popup")
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_no_model_panel(snap_compare, tmp_path, monkeypatch, size):
    """What a new user without a model or key sees first: at 80×24 every line fits (none wraps
    back to the panel's edge) and the whole panel is on screen."""
    from agent.settings.config import load_settings
    from tests.ui.test_snapshots import SnapshotApp

    monkeypatch.setenv("CAIRN_HOME", "/tmp/cairn-snapshot-home")  # the config path it names, fixed
    for key in ("CAIRN_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    workspace = tmp_path / "ws"
    workspace.mkdir()

    async def run_before(pilot) -> None:
        from agent.ui.widgets.no_model import NoModelPanel

        pilot.app.no_model = True
        panel = NoModelPanel()
        await pilot.app.chat.mount(panel)
        await settle(pilot)
        text = str(panel.render())
        assert panel.content_region.height == len(text.splitlines())  # no line wrapped
        assert panel.region.y >= pilot.app.chat.region.y  # its top on screen, not scrolled off

    class NoModelApp(SnapshotApp):
        def open_runtime(self) -> None:  # as the app is when it found no model: no window known
            self.opening = False
            self.status.set_state("")

    assert snap_compare(NoModelApp(load_settings(workspace)), terminal_size=size, run_before=run_before)
