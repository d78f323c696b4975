"""Every tool's description comes from its prompt file, and moving the descriptions there
changed nothing the model sees (tests/tools/data/tool_definitions.json is what the tools
sent before the move)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from agent.tools.registry import default_registry

BEFORE_THE_MOVE = Path(__file__).parent / "data" / "tool_definitions.json"


def _prompt_file(name: str):
    return resources.files("agent.tools").joinpath("prompts", f"{name}.md")


def test_every_registered_tool_has_a_non_empty_prompt_file():
    registry = default_registry()
    for name in registry.names:
        prompt = _prompt_file(name)
        assert prompt.is_file(), f"{name}: no agent/tools/prompts/{name}.md"
        text = prompt.read_text(encoding="utf-8").strip()
        assert text, f"{name}: empty prompt file"
        assert registry.get(name).description == prompt.read_text(encoding="utf-8").rstrip("\n")


def test_no_prompt_file_without_a_tool():
    names = set(default_registry().names)
    files = {p.name.removesuffix(".md") for p in resources.files("agent.tools").joinpath("prompts").iterdir()
             if p.name.endswith(".md")}
    assert files <= names, f"prompt files of no registered tool: {sorted(files - names)}"


def test_existing_tools_send_the_model_exactly_what_they_sent_before():
    before = {d["function"]["name"]: d for d in json.loads(BEFORE_THE_MOVE.read_text(encoding="utf-8"))}
    now = {d["function"]["name"]: d for d in default_registry().definitions()}
    for name, definition in before.items():
        assert json.dumps(now[name], sort_keys=True) == json.dumps(definition, sort_keys=True), name


def test_prompt_files_are_package_data():
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"agent.tools" = ["prompts/*.md"]' in text
