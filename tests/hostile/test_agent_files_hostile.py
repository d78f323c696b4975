"""A repository's subagent definitions and skills, made hostile: a FIFO where a Markdown
file goes (opening one blocks until a writer comes), a symlink out of the repository, a
huge file. Discovery finishes, skips them with a notice, and keeps the good ones."""

from __future__ import annotations

import os

from agent.skills.catalog import discover
from agent.subagents.definitions import load_definitions
from tests.hostile.conftest import bounded_sync

AGENT = "---\nname: {name}\ndescription: reads things\n---\nYou read.\n"
SKILL = "---\nname: {name}\ndescription: does a thing\n---\nDo it.\n"


def _agents(workspace, **files):
    folder = workspace / ".claude" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.md").write_text(text)
    return folder


def test_a_fifo_agent_definition_does_not_hang_discovery(workspace):
    folder = _agents(workspace, good=AGENT.format(name="good"))
    os.mkfifo(folder / "trap.md")
    notices: list[str] = []
    found = bounded_sync(lambda: load_definitions(workspace, trusted=False, notices=notices))
    assert "good" in found and "trap" not in found
    assert any("FIFO" in n for n in notices), notices


def test_an_agent_definition_linked_out_of_the_repository_is_not_read(workspace, tmp_path):
    secret = tmp_path / "outside.md"
    secret.write_text(AGENT.format(name="outside"))
    folder = _agents(workspace)
    (folder / "outside.md").symlink_to(secret)
    found = bounded_sync(lambda: load_definitions(workspace, trusted=False, notices=[]))
    assert "outside" not in found


def test_a_fifo_skill_does_not_hang_discovery(workspace):
    skills = workspace / ".claude" / "skills"
    (skills / "good").mkdir(parents=True)
    (skills / "good" / "SKILL.md").write_text(SKILL.format(name="good"))
    (skills / "trap").mkdir()
    os.mkfifo(skills / "trap" / "SKILL.md")
    catalog = bounded_sync(lambda: discover(workspace))
    assert catalog.get("good") is not None and catalog.get("trap") is None
    assert any("FIFO" in n for n in catalog.notices), catalog.notices


def test_a_huge_agent_definition_is_refused_not_read_whole(workspace):
    folder = _agents(workspace)
    (folder / "huge.md").write_text(AGENT.format(name="huge") + "x" * (20 * 1024 * 1024))
    notices: list[str] = []
    found = bounded_sync(lambda: load_definitions(workspace, trusted=False, notices=notices))
    assert "huge" not in found and notices
