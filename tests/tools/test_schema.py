"""Tool schemas carry only what guides a call (agent/tools/schema.py): no titles, no null
branches or null defaults, nested models inlined; pydantic still validates what comes back."""

from __future__ import annotations

import copy
import json

from pydantic import BaseModel, Field

from agent.context.tokens import TokenCounter
from agent.tools.fs_read import ReadArgs
from agent.tools.registry import default_registry
from agent.tools.schema import arguments_schema


def _keys(node) -> set[str]:
    """Every schema keyword used in `node` (property names are values, not keywords)."""
    if isinstance(node, list):
        return set().union(*map(_keys, node)) if node else set()
    if not isinstance(node, dict):
        return set()
    found = set(node)
    for key, value in node.items():
        if key == "properties":
            found |= set().union(*map(_keys, value.values())) if value else set()
        else:
            found |= _keys(value)
    return found


def test_no_titles_null_branches_or_refs_in_any_builtin_tool():
    for definition in default_registry().definitions():
        schema = definition["function"]["parameters"]
        keys = _keys(schema)
        assert not keys & {"title", "$ref", "$defs"}, definition["function"]["name"]
        assert '{"type": "null"}' not in json.dumps(schema), definition["function"]["name"]
        assert '"default": null' not in json.dumps(schema), definition["function"]["name"]


def test_read_schema_inlines_the_file_spec_and_keeps_useful_defaults():
    schema = arguments_schema(ReadArgs)
    item = schema["properties"]["filePath"]["anyOf"][1]["items"]["anyOf"][1]
    assert item["required"] == ["path"] and item["properties"]["startLine"] == {
        "description": "First line to read (1-based).",
        "minimum": 1,
        "type": "integer",
    }
    grep = default_registry().get("context-grep").definition()["function"]["parameters"]
    assert grep["properties"]["contextLines"]["default"] == 0  # a real default still tells the model


def test_a_property_named_title_is_kept():
    class Args(BaseModel):
        title: str = Field(description="The issue's title.")
        body: str | None = Field(default=None, description="Its text.")

    schema = arguments_schema(Args)
    assert schema == {
        "properties": {
            "title": {"description": "The issue's title.", "type": "string"},
            "body": {"description": "Its text.", "type": "string"},
        },
        "required": ["title"],
        "type": "object",
    }
    assert Args.model_validate({"title": "t", "body": None}).body is None  # null is still accepted


def test_a_recursive_model_keeps_its_definitions():
    class Node(BaseModel):
        name: str
        children: list[Node] = Field(default_factory=list)

    class Args(BaseModel):
        root: Node

    schema = arguments_schema(Args)
    assert schema["properties"]["root"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert "Node" in schema["$defs"]


# Tools added after that figure was measured (issue 29): each pays for itself, outside it.
ADDED_SINCE = {"todo-write", "exit-plan-mode", "subagent"}


# Arguments added after it (issue 47's `background`): measured with their feature, below.
ARGUMENTS_ADDED_SINCE = {"terminal-execute": {"background"}}


def _without_added_arguments(definition: dict) -> dict:
    added = ARGUMENTS_ADDED_SINCE.get(definition["function"]["name"], set())
    if not added:
        return definition
    out = copy.deepcopy(definition)
    for name in added:
        out["function"]["parameters"]["properties"].pop(name)
    return out


def test_builtin_tools_cost_less_than_before():
    """The figure in bench/README.md: 2,775 tokens of definitions before, about 2,300 now."""
    definitions = [
        _without_added_arguments(d)
        for d in default_registry().definitions()
        if d["function"]["name"] not in ADDED_SINCE
    ]
    tokens = TokenCounter().count_tools(definitions)
    assert tokens < 2_400, tokens


def test_background_tasks_cost_little_until_used():
    """Every request carries `background` (under 60 tokens); task-output and task-stop (under
    250) only from a session's first background task on (agent/tools/registry.py)."""
    from agent.tools.registry import task_tools

    counter = TokenCounter()
    terminal = default_registry().get("terminal-execute")
    assert terminal is not None
    with_it = counter.count_tools([terminal.definition()])
    without = counter.count_tools([_without_added_arguments(terminal.definition())])
    assert 0 < with_it - without < 60, with_it - without
    assert counter.count_tools([t.definition() for t in task_tools()]) < 250


def test_the_workflow_tools_stay_small():
    """todo-write, exit-plan-mode and subagent (with the two built-in agents listed) ride in
    every request: together they stay under 1,000 tokens."""
    from agent.subagents.definitions import built_in
    from agent.subagents.tool import SubagentTool

    added = [d for d in default_registry().definitions() if d["function"]["name"] in ADDED_SINCE]
    added.append(SubagentTool({d.name: d for d in built_in()}, runner=None).definition())  # type: ignore[arg-type]  # never run here
    assert len(added) == 3
    assert TokenCounter().count_tools(added) < 1_000
