"""Issue 28: Gemini 3's thought signatures ride on the tool-call ids litellm gives
(`call_…__thought__<signature>`, litellm's THOUGHT_SIGNATURE_SEPARATOR): kept byte for byte
through storage, export, import and resume, they reach the next request where litellm's
Gemini transformation takes the signature back out of the id."""

from __future__ import annotations

import json

from litellm.litellm_core_utils.prompt_templates.factory import (
    THOUGHT_SIGNATURE_SEPARATOR,
    get_thought_signature_from_tool,
)

from agent.session.models import Message, ToolCall
from agent.turn.stream_writer import unique_tool_call_ids
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.test_cli import run

SIGNATURE = "Q2lRQmpKa3R+signature/bytes=="
CALL_ID = f"call_a1b2{THOUGHT_SIGNATURE_SEPARATOR}{SIGNATURE}"


def test_a_signed_call_id_survives_storage_export_import_and_resume(workspace, tmp_path):
    (workspace / "a.py").write_text("x = 1\n")
    with FakeLLMServer([tool_calls([(CALL_ID, "filesystem-read", {"filePath": "a.py"})]), text("x is 1.")]) as srv:
        common = ("--model", "openai/fake", "--api-base", srv.base_url, "--api-key", "sk-test", "--cwd", str(workspace))
        out = run(*common, "--yolo", "-p", "what is x?", "--output-format", "json")
        assert out.returncode == 0, out.stderr
    session_id = json.loads(out.stdout.splitlines()[-1])["session_id"]

    exported = tmp_path / "session.jsonl"
    assert run("session", "export", session_id, "--format", "jsonl", "-o", str(exported)).returncode == 0
    assert CALL_ID in exported.read_text()
    imported = run("session", "import", str(exported), "--json")
    assert imported.returncode == 0, imported.stderr
    new_id = json.loads(imported.stdout)["session_id"]

    # The next request as cairn builds it (what litellm is given): the id whole, and litellm's
    # Gemini code finds the signature in it.
    dump = run("context", new_id, "--json", "--dump")
    assert dump.returncode == 0, dump.stderr
    messages = json.loads(dump.stdout)["messages"]
    [call] = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert call["id"] == CALL_ID and get_thought_signature_from_tool(call) == SIGNATURE
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == [CALL_ID]

    # And the resumed session still makes a valid request (litellm strips the signature for
    # an OpenAI-compatible server itself).
    with FakeLLMServer([text("Still 1.")]) as srv:
        common = ("--model", "openai/fake", "--api-base", srv.base_url, "--api-key", "sk-test", "--cwd", str(workspace))
        out = run(*common, "--resume", new_id, "-p", "and now?")
        assert out.returncode == 0, out.stderr


def test_a_repeated_signed_id_is_renamed_before_its_signature():
    """A model that repeats an id gets `<id>_2`; with a signature in the id, the suffix goes
    on the id part, so the signature litellm takes out is still the model's."""
    earlier = [Message(role="assistant", tool_calls=[ToolCall(id=CALL_ID, name="x")])]
    calls = [ToolCall(id=CALL_ID, name="x")]
    renamed = unique_tool_call_ids(calls, earlier)
    assert calls[0].id == f"call_a1b2_2{THOUGHT_SIGNATURE_SEPARATOR}{SIGNATURE}"
    assert renamed == {calls[0].id: CALL_ID}
    assert get_thought_signature_from_tool(calls[0].to_api()) == SIGNATURE
