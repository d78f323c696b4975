"""What was loaded is shown: `/status` names each instruction file, `/context` each with its size."""

from __future__ import annotations

from types import SimpleNamespace

from agent.context.inspect import context_report, format_report
from agent.settings.config import load_settings
from agent.ui.commands.status import status_text


def _layout(workspace, tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    (home / ".claude" / "CLAUDE.md").write_text("Be brief.\n")
    (workspace / "CLAUDE.md").write_text("@AGENTS.md\nUse pnpm.\n")
    (workspace / "AGENTS.md").write_text("Run make check.\n")
    return load_settings(workspace)


def test_status_names_each_instruction_file(workspace, tmp_path, monkeypatch):
    settings = _layout(workspace, tmp_path, monkeypatch)
    text = status_text(SimpleNamespace(settings=settings, runtime=None, config_warnings=[]))
    assert "\nInstructions\n  ~/.claude/CLAUDE.md (10 chars, your private global instructions" in text
    assert "\n  CLAUDE.md (21 chars, project instructions, checked into the codebase)" in text
    assert "\n  AGENTS.md (16 chars, imported by CLAUDE.md)" in text


def test_context_lists_the_instruction_files_and_their_sizes(workspace, tmp_path, monkeypatch):
    settings = _layout(workspace, tmp_path, monkeypatch)
    report = context_report(
        [], settings=settings, session_id="s", model="", workspace=workspace, now_ms=1_700_000_000_000
    )
    assert [(f["path"], f["chars"]) for f in report["instructions"]] == [
        ("~/.claude/CLAUDE.md", 10),
        ("CLAUDE.md", 21),
        ("AGENTS.md", 16),
    ]
    shown = format_report(report)
    assert "instructions in the system prompt:" in shown and "AGENTS.md" in shown
