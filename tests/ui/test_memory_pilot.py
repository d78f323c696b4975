"""Issue 46 item 26 (walk 26): `# note` at the prompt's start goes into the project's memory
file, with a notice, and is not sent to the model; /memory lists the instruction files a
session loads and opens one in $EDITOR."""

from __future__ import annotations

import sys

from agent.ui.app import CairnApp
from tests.ui.conftest import chat_text, run_prompt, send, wait_for, wait_ready

SIZE = (80, 24)


async def test_a_hash_note_goes_to_the_project_memory_not_the_model(make_settings, server, workspace):
    (workspace / "AGENTS.md").write_text("# Rules\n- keep it short")  # no final newline
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "# always run ruff before committing")
        await wait_for(pilot, lambda: "Remembered in AGENTS.md" in chat_text(app), what="the notice")
        assert server.requests == []  # not a prompt
        expected = "# Rules\n- keep it short\n- always run ruff before committing\n"
        assert (workspace / "AGENTS.md").read_text() == expected
        assert not (workspace / "CLAUDE.md").exists()


async def test_a_claude_code_user_gets_a_claude_md(make_settings, server, workspace, tmp_path, monkeypatch):
    claude = tmp_path / "dot-claude"
    claude.mkdir()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await send(pilot, "#   use   pytest -q ")
        await wait_for(pilot, lambda: "Remembered in CLAUDE.md" in chat_text(app), what="the notice")
        assert (workspace / "CLAUDE.md").read_text() == "- use pytest -q\n"
        assert str(claude / "CLAUDE.md") in chat_text(app).replace("\n", "")  # where the user's would go


async def test_memory_lists_the_loaded_files_and_opens_one_in_the_editor(make_settings, server, workspace, monkeypatch):
    (workspace / "CLAUDE.md").write_text("- project rule\n")
    editor = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'a').write('- edited\\n')\""
    monkeypatch.setenv("EDITOR", editor)
    monkeypatch.delenv("VISUAL", raising=False)
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/memory")
        shown = " ".join(chat_text(app).split())
        assert "1. CLAUDE.md (project instructions, checked into the codebase)" in shown
        assert "CLAUDE.md (your memory for every project; not there yet)" in shown
        assert "/memory N opens one in your editor." in shown
        await run_prompt(pilot, "/memory 1")
        await wait_for(pilot, lambda: "Edited CLAUDE.md" in chat_text(app), what="the editor to finish")
        assert (workspace / "CLAUDE.md").read_text() == "- project rule\n- edited\n"
        assert server.requests == []


def test_hash_without_a_space_is_a_prompt():
    from agent.ui.commands.memory import is_memory

    assert is_memory("# note") and not is_memory("#123 fails on CI") and not is_memory("#  ")
