"""Issue 16: a sessions.db cairn cannot use is one readable line in the TUI, the file untouched."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.widgets.chat import Notice
from tests.ui.conftest import send, wait_ready

SIZE = (100, 30)


async def test_a_damaged_sessions_db_is_named_in_the_chat_and_left_alone(make_settings, server, monkeypatch, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    db = home / "sessions.db"
    garbage = b"not a database at all\n" * 100
    db.write_bytes(garbage)
    monkeypatch.setenv("CAIRN_HOME", str(home))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert app.runtime is None
        errors = [n.text for n in app.chat.query(Notice) if n.kind == "error"]
        assert len(errors) == 1 and errors[0].startswith("cairn could not start: ")
        assert str(db) in errors[0] and "not changed" in errors[0] and "move it aside" in errors[0]
        await send(pilot, "/help")  # still usable
        assert any(n.kind == "help" for n in app.chat.query(Notice))
    # Nothing beside it but the prompt history (/help was typed), which is no part of the store.
    assert db.read_bytes() == garbage
    assert sorted(p.name for p in home.iterdir()) == ["prompt_history.jsonl", "sessions.db"]


async def test_a_prompt_cairn_cannot_send_stays_in_the_prompt(make_settings, monkeypatch, tmp_path):
    """Issue 32: with a data folder cairn cannot use (here not a folder at all; read-only
    alike), Enter used to take the text away and send it nowhere. It stays, and the chat
    says why it was not sent."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("CAIRN_HOME", str(blocker))
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        assert app.open_error
        await send(pilot, "please keep this")
        assert app.prompt.text == "please keep this"
        assert not app.chat.query("UserMessage")
        warnings = [n.text for n in app.chat.query(Notice) if n.kind != "help"]
        assert warnings[-2].startswith("cairn could not start: ") and "not sent" in warnings[-1].lower()
