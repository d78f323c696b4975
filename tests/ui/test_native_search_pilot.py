"""Claude's server-side web search in the TUI (issue 47): one dim line per search under the
answer ("searched: QUERY · N results"), the answer and tool blocks drawn as before; at 80×24."""

from __future__ import annotations

from agent.paths import config_dir
from agent.settings.config import load_settings
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from tests.fakes.anthropic_server import Search, search_result
from tests.fakes.anthropic_server import text as claude_text
from tests.ui.conftest import run_prompt, wait_ready

SIZE = (80, 24)


async def test_a_search_line_under_the_answer(anthropic_server, workspace):
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text("[web]\nnative_search = true\n")
    found = [search_result("Tasks", "https://docs.python.org/3/library/asyncio-task.html")] * 3
    anthropic_server.add(
        claude_text("Use asyncio.timeout().", searches=[Search("srvtoolu_1", "asyncio \x1b[31mtimeout", found)])
    )
    flags = {"model": "anthropic/claude-sonnet-4-5", "api_base": anthropic_server.base_url, "api_key": "sk-ant-test"}
    app = CairnApp(load_settings(workspace, flags=flags))
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "timeouts?")
        [answer] = app.chat.assistant_messages
        assert answer.text == "Use asyncio.timeout()."
        lines = [n for n in app.chat.query(Notice) if n.text.startswith("searched:")]
        assert [n.text for n in lines] == ["searched: asyncio \x1b[31mtimeout · 3 results"]
        assert "\x1b" not in str(lines[0].render())  # drawn inert
        chat = list(app.chat.children)
        assert chat.index(answer) < chat.index(lines[0])
