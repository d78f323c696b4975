"""bench/recall.py: what counts as a fact the model took from tool output (SPEC §12.13)."""

from __future__ import annotations

import json

from agent.session.models import Message, ToolCall
from bench.recall import distinctive_tokens, facts_taken_from_tools, sent_tokens


def test_distinctive_tokens_are_identifiers_paths_and_numbers_of_six_characters_or_more():
    text = (
        "because the function parse_any in src/app.py:42 raised; see parseAny, 0x1f3a, "
        "2025-01-07, 123456, HTTPError, abc_d, 12345, v2 and https://x.io/a."
    )
    assert distinctive_tokens(text) == {
        "parse_any",
        "src/app.py:42",
        "parseAny",
        "0x1f3a",
        "2025-01-07",
        "123456",
        "https://x.io/a",
    }


def test_json_escapes_do_not_glue_onto_a_token():
    assert distinctive_tokens(json.dumps({"stdout": "ok\nfoo_bar.py: 2 passed"})) >= {"foo_bar.py"}
    assert "nfoo_bar.py" not in distinctive_tokens(json.dumps({"stdout": "ok\nfoo_bar.py"}))


def _call(args: dict) -> Message:
    return Message(
        role="assistant", tool_calls=[ToolCall(id="c1", name="terminal-execute", arguments=json.dumps(args))]
    )


def test_a_fact_is_what_a_message_uses_that_only_a_tool_result_showed():
    history = [
        Message(role="user", content="fix the bug in load_config"),
        _call({"command": "grep -rn load_config ."}),
        Message(role="tool", tool_call_id="c1", content="src/conf.py:12: def load_config(path_or_url):"),
        Message(role="assistant", content="load_config in src/conf.py:12 takes path_or_url; plainword"),
    ]
    facts = facts_taken_from_tools(history)
    # load_config came from the user; src/conf.py:12 and path_or_url only from the tool.
    assert facts[3] == {"src/conf.py:12", "path_or_url"}
    assert facts[1] == set()


def test_a_sent_message_is_read_for_its_text_parts_and_tool_arguments():
    sent = {
        "role": "assistant",
        "content": [{"type": "text", "text": "open src/app.py"}],
        "tool_calls": [{"id": "c", "type": "function", "function": {"name": "x", "arguments": '{"p": "a_b/c.py"}'}}],
    }
    assert sent_tokens(sent) == {"src/app.py", "a_b/c.py"}
