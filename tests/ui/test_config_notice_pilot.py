"""A broken config.toml (issue 32, item 5): named with its line in the chat, where it stays
(a toast covered the prompt for ten seconds, then went), and in /status; what parses of the
user's own file still applies."""

from __future__ import annotations

from agent.paths import config_dir
from agent.settings.config import load_config
from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from tests.ui.conftest import send, wait_ready

BROKEN = """model = "openai/from-the-config"

[tools]
command_timeout = 7

[hooks]
PreToolUse = "unterminated
"""


async def test_a_broken_config_is_a_lasting_notice_and_in_status(workspace, monkeypatch):
    config_dir().mkdir(parents=True, exist_ok=True)
    path = config_dir() / "config.toml"
    path.write_text(BROKEN)
    loaded = load_config(workspace, flags={"api_key": "sk-test", "api_base": "http://127.0.0.1:9/v1"})
    settings = loaded.settings
    assert settings.model == "openai/from-the-config" and settings.tools.command_timeout == 7
    app = CairnApp(settings)
    app.config_warnings = loaded.warnings  # what the app's own load keeps beside the settings
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        warnings = [n.text for n in app.chat.query(Notice) if n.kind == "warning"]
        assert len(warnings) == 1
        assert str(path) in warnings[0] and "line 7" in warnings[0] and "[hooks]" in warnings[0]
        assert not app._notifications  # not a toast over the prompt
        await send(pilot, "/status")
        status = [n.text for n in app.chat.query(Notice) if n.kind == "help"][-1]
        assert "Config problems" in status and str(path) in status and "line 7" in status
        assert "openai/from-the-config" in status
        assert f"{path}\n" in status  # the file read is named as it is; the project's, absent, says so
        assert f"{workspace / '.cairn' / 'config.toml'}  (none there)" in status
