"""A resumed session shows again what its turns told the user (issue 46, item 10; walk 11):
the 401 that answered a prompt, a hook's block (item 21; walk 24), dimmed, where they were said.
Before, `--continue` showed the prompt alone, as if the model had ignored it."""

from __future__ import annotations

import sys

from agent.ui.app import CairnApp
from agent.ui.widgets.stored_notice import StoredNotice
from tests.fakes.llm_server import error, text, tool_calls
from tests.ui.conftest import run_prompt, wait_for, wait_ready

SIZE = (80, 24)


def shown(app) -> list[str]:
    return [f"{type(w).__name__}:{getattr(w, 'text', '')}" for w in app.chat.children if w.display]


async def test_a_401_comes_back_dimmed_after_its_prompt(make_settings, server):
    server.add(error(401))
    first = CairnApp(make_settings())
    async with first.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "hello again")
        live = shown(first)
        await first.quit_app()
    assert live[-2].startswith("UserMessage:hello again")
    assert live[-1].startswith("Notice:Authentication failed")

    again = CairnApp(make_settings(), continue_last=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: again.chat.query(StoredNotice), what="the stored error")
        resumed = shown(again)
        (stored,) = again.chat.query(StoredNotice)
        await wait_for(pilot, lambda: stored.region.height >= 1, what="the stored error on screen")
        assert stored.has_class("notice-error")
        assert stored.styles.text_opacity < 1  # dimmed: what was, not what is
    assert resumed[-2:] == ["UserMessage:hello again", f"StoredNotice:{live[-1].removeprefix('Notice:')}"]


async def test_a_blocking_hook_is_named_live_and_after_resume(make_settings, server, tmp_path):
    guard = tmp_path / "bash_guard.py"
    guard.write_text("import sys\nprint('Use trash instead of rm -rf', file=sys.stderr)\nsys.exit(2)\n")
    flags = {"hooks": {"PreToolUse": [{"matcher": "Bash", "command": f"{sys.executable} {guard}"}]}}
    server.add(tool_calls([("c1", "terminal-execute", {"command": "rm -rf build dist"})]), text("Understood."))
    line = "Blocked by PreToolUse hook bash_guard.py: Use trash instead of rm -rf"
    first = CairnApp(make_settings(**flags))
    async with first.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "clean the build")
        live = shown(first)
        await first.quit_app()
    assert f"Notice:{line}" in live

    again = CairnApp(make_settings(**flags), continue_last=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: again.chat.query(StoredNotice), what="the stored hook line")
        resumed = shown(again)
    assert f"StoredNotice:{line}" in resumed
    assert resumed.index(f"StoredNotice:{line}") < resumed.index("AssistantMessage:Understood.")


async def test_a_line_said_before_the_prompt_was_stored_comes_back_under_it(make_settings, server, tmp_path):
    """UserPromptSubmit runs before the prompt is stored; live its line is under the prompt,
    and so it is after a resume."""
    context = tmp_path / "branch.py"
    context.write_text("print('Branch: main')\n")
    flags = {"hooks": {"UserPromptSubmit": [{"command": f"{sys.executable} {context}"}]}}
    server.add(text("one"), text("two"))
    line = "UserPromptSubmit hook branch.py added context (1 line): Branch: main"
    first = CairnApp(make_settings(**flags))
    async with first.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "first")
        await run_prompt(pilot, "second")
        live = [s for s in shown(first) if not s.startswith("Notice:Welcome")]
        await first.quit_app()

    again = CairnApp(make_settings(**flags), continue_last=True)
    async with again.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: len(again.chat.query(StoredNotice)) == 2, what="the stored hook lines")
        resumed = shown(again)
    expected = [
        "UserMessage:first",
        "LINE",
        "AssistantMessage:one",
        "UserMessage:second",
        "LINE",
        "AssistantMessage:two",
    ]
    assert [s for s in live if s.split(":")[0] != "Notice" or line in s][-6:] == [
        e.replace("LINE", f"Notice:{line}") for e in expected
    ]
    assert resumed[-6:] == [e.replace("LINE", f"StoredNotice:{line}") for e in expected]
