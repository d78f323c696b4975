"""Agent definitions in Claude Code's format, and what a repository's may not do."""

from __future__ import annotations

from agent.fs import front_matter
from agent.runtime.ops import Prompt
from agent.settings import trust
from agent.subagents.definitions import READ_ONLY_TOOLS, load_definitions
from tests.fakes.llm_server import text, tool_calls
from tests.subagents.test_subagent_e2e import PARENT, _in

REVIEWER = """\
---
name: code-reviewer
description: Reviews code for quality and security. Use after writing code.
tools: Read, Grep, Glob, Bash
model: haiku
color: blue
---
You are a senior reviewer. Check the diff for bugs.
"""


def _write(workspace, folder: str, name: str, body: str) -> None:
    path = workspace / folder
    path.mkdir(parents=True, exist_ok=True)
    (path / name).write_text(body)


def test_front_matter_reads_the_yaml_these_files_use():
    fields, body = front_matter.split(
        "---\nname: a\ndescription: \"two\\nlines\"\ntools:\n  - Read\n  - Bash\nlist: [x, 'y']\n"
        "folded: >\n  one\n  two\nlit: |\n  keep\n  lines\n---\nBody\n"
    )
    assert fields == {
        "name": "a",
        "description": "two\nlines",
        "tools": ["Read", "Bash"],
        "list": ["x", "y"],
        "folded": "one two",
        "lit": "keep\nlines",
    }
    assert body == "Body\n"
    assert front_matter.split("no front matter\n---\n") == ({}, "no front matter\n---\n")
    assert front_matter.split("---\nname: open\n") == ({}, "---\nname: open\n")


def test_a_claude_code_definition_works_unchanged_in_a_trusted_folder(workspace):
    _write(workspace, ".claude/agents", "code-reviewer.md", REVIEWER)
    found = load_definitions(workspace, trusted=True)
    reviewer = found["code-reviewer"]
    assert reviewer.tools == ["filesystem-read", "filesystem-search", "filesystem-find", "terminal-execute"]
    assert reviewer.model == "haiku"
    assert reviewer.prompt == "You are a senior reviewer. Check the diff for bugs."
    assert reviewer.source == "project" and reviewer.mode is None
    assert {"explore", "general"} <= set(found)  # the built-ins stay


def test_an_untrusted_folders_definition_only_reads(workspace):
    _write(workspace, ".claude/agents", "code-reviewer.md", REVIEWER)
    reviewer = load_definitions(workspace)["code-reviewer"]  # nothing trusted this folder
    assert reviewer.tools == ["filesystem-read", "filesystem-search", "filesystem-find"]
    assert set(reviewer.tools) <= set(READ_ONLY_TOOLS) and reviewer.mode == "plan"
    assert any("terminal-execute left out" in note for note in reviewer.notes)


def test_trusting_the_folders_config_trusts_its_agents(workspace):
    _write(workspace, ".cairn/agents", "code-reviewer.md", REVIEWER)
    config = workspace / ".cairn" / "config.toml"
    config.write_text("[tools]\ncommand_timeout = 60\n")
    trust.trust(workspace.resolve(), trust.digest(config.read_bytes()))
    assert "terminal-execute" in load_definitions(workspace)["code-reviewer"].tools
    config.write_text("[tools]\ncommand_timeout = 61\n")  # changed since: untrusted again
    assert "terminal-execute" not in load_definitions(workspace)["code-reviewer"].tools


def test_bad_definitions_are_skipped_with_a_notice(workspace):
    _write(workspace, ".claude/agents", "nodesc.md", "---\nname: nodesc\n---\nbody\n")
    _write(workspace, ".claude/agents", "badname.md", "---\nname: rm -rf\ndescription: x\n---\n")
    (workspace / ".claude/agents/binary.md").write_bytes(b"\xff\xfe---")
    notices: list[str] = []
    found = load_definitions(workspace, notices=notices)
    assert not {"nodesc", "rm -rf", "binary"} & set(found)
    assert len(notices) == 3


async def test_an_untrusted_repositorys_agent_gets_no_command(server, open_runtime, workspace):
    """Its definition lists terminal-execute; even under --yolo no command runs: the tool is
    not offered, and a call to it anyway is an unknown tool."""
    _write(workspace, ".claude/agents", "code-reviewer.md", REVIEWER)
    task = "review the code"
    server.add(
        _in(PARENT, tool_calls([("s1", "subagent", {"agent": "code-reviewer", "task": task})])),
        _in(task, tool_calls([("t1", "terminal-execute", {"command": "touch pwned.txt"})])),
        _in(task, text("could not run it")),
        _in(PARENT, text("done")),
    )
    runtime = await open_runtime(yolo=True)
    try:
        await runtime.submit(Prompt(PARENT))
    finally:
        await runtime.close()
    child_tools = {t["function"]["name"] for t in server.requests[1]["tools"]}
    assert child_tools == {"filesystem-read", "filesystem-search", "filesystem-find"}
    assert server.requests[1]["model"] == "fake-model"  # `haiku` names a Claude family: not this provider's
    assert server.requests[2]["messages"][-1]["content"].startswith("Error: unknown tool 'terminal-execute'")
    assert not (workspace / "pwned.txt").exists()


def test_claude_family_aliases_pick_the_newest_model_at_the_parents_provider():
    from agent.subagents.models import ChildModel, child_model

    haiku = child_model("haiku", "anthropic/claude-sonnet-4-5")
    assert haiku.model.startswith("anthropic/claude-haiku-") and not haiku.note
    assert child_model("inherit", "openai/gpt-5.1") == ChildModel("openai/gpt-5.1")
    assert child_model("Inherit", "openai/gpt-5.1") == ChildModel("openai/gpt-5.1")
    on_openai = child_model("haiku", "openai/gpt-5.1")  # no Claude family there: the parent's, said
    assert on_openai.model == "openai/gpt-5.1" and "Claude model family" in on_openai.note
    assert child_model("openai/gpt-5-mini", "anthropic/claude-sonnet-4-5") == ChildModel("openai/gpt-5-mini")
    assert child_model("sonnet[1m]", "anthropic/claude-sonnet-4-5").model.startswith("anthropic/claude-sonnet-")
    assert child_model("opusplan", "anthropic/claude-sonnet-4-5").model.startswith("anthropic/claude-opus-")
    via_route = child_model("claude-opus-4-1[1m]", "openrouter/anthropic/claude-sonnet-4")
    assert via_route == ChildModel("openrouter/anthropic/claude-opus-4-1")  # a bare Claude id, the parent's route


def test_claude_code_tool_lists_a_star_and_todo_write(workspace):
    from agent.subagents.definitions import load_definitions

    folder = workspace / ".claude" / "agents"
    folder.mkdir(parents=True)
    (folder / "all.md").write_text('---\nname: all\ndescription: Every tool.\ntools: "*"\n---\nb\n')
    (folder / "some.md").write_text("---\nname: some\ndescription: Some.\ntools: Read, TodoWrite, WebSearch\n---\nb\n")
    found = load_definitions(workspace, trusted=True)
    assert found["all"].tools is None and found["all"].notes == []  # every tool: the parent's
    assert found["some"].tools == ["filesystem-read", "todo-write"]
    assert found["some"].notes == ["unknown tools left out: WebSearch"]
