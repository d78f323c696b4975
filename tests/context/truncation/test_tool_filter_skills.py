"""Smart truncation's step 2 keeps a `skill-load` call and its result in the middle: a loaded
skill stays loaded for the session (SPEC §13.3)."""

from __future__ import annotations

import json

from agent.context.truncation.middle_range import Unit, flatten, group_units
from agent.context.truncation.tool_filter import FilterStats, filter_tool_calls
from agent.session.models import Message, ToolCall


def test_truncations_tool_filter_keeps_a_skill_load_in_the_middle():
    skill = ToolCall(id="k1", name="skill-load", arguments=json.dumps({"name": "release"}))
    terminal = ToolCall(id="t1", name="terminal-execute", arguments='{"command": "make"}')
    history = [
        Message(role="assistant", content=None, tool_calls=[skill]),
        Message(role="tool", tool_call_id="k1", tool_name="skill-load", content="the skill's body"),
        Message(role="assistant", content=None, tool_calls=[terminal]),
        Message(role="tool", tool_call_id="t1", tool_name="terminal-execute", content="built"),
    ]
    stats = FilterStats()
    out = flatten(filter_tool_calls([Unit(u.messages, True) for u in group_units(history)], stats))
    assert out == history[:2]
    assert (stats.calls_removed, stats.results_removed) == (1, 1)
