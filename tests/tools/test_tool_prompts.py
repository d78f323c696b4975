"""Every tool's description comes from its prompt file; moving the descriptions there and
compacting the schemas (agent/tools/schema.py) changed no description, argument name or
required list the model sees (tests/tools/data/tool_definitions.json is what the tools sent
before both)."""

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
    from agent.tools.lsp_tool import Lsp

    names = {*default_registry(every=True).names, Lsp.name}  # and `lsp`, offered when a server was found
    files = {
        p.name.removesuffix(".md")
        for p in resources.files("agent.tools").joinpath("prompts").iterdir()
        if p.name.endswith(".md")
    }
    assert files <= names, f"prompt files of no registered tool: {sorted(files - names)}"


def _arguments(schema: dict) -> dict:
    """Each argument's description and whether it is required: what the model is told."""
    required = set(schema.get("required", []))
    return {key: (prop.get("description"), key in required) for key, prop in schema["properties"].items()}


def test_existing_tools_tell_the_model_what_they_told_it_before():
    before = {d["function"]["name"]: d for d in json.loads(BEFORE_THE_MOVE.read_text(encoding="utf-8"))}
    now = {d["function"]["name"]: d for d in default_registry().definitions()}
    for name, definition in before.items():
        assert now[name]["function"]["description"] == definition["function"]["description"], name
        assert _arguments(now[name]["function"]["parameters"]) == _arguments(definition["function"]["parameters"])


def test_prompt_files_are_package_data():
    text = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"agent.tools" = ["prompts/*.md"]' in text
