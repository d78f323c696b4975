"""Pass 5 (seed 004): large tool outputs reach the model as a preview plus a context-file ref."""

from __future__ import annotations

import json

from agent.context.files.refs import artifact_ref_id, kind_of
from agent.context.passes import externalize
from agent.session.models import Message

LIMIT, PREVIEW = 5000, 1024


def _tool(content: str, name: str = "filesystem-search") -> Message:
    return Message(role="tool", tool_call_id="c1", tool_name=name, content=content)


def test_short_outputs_and_context_tool_results_are_sent_whole():
    small = _tool("x" * LIMIT)
    page = _tool("y" * 9000, name="context-read")
    out, changed = externalize.apply([small, page], limit=LIMIT, preview=PREVIEW)
    assert changed == 0 and out == [small, page] and out[0] is small


def test_a_file_read_is_never_previewed_however_long():
    """SPEC §12.13: the model asked for that content; the read tool bounds it itself."""
    read = _tool("\n".join(f"{i}→" + "x" * 60 for i in range(1, 2001)), name="filesystem-read")
    out, changed = externalize.apply([read], limit=LIMIT, preview=PREVIEW)
    assert changed == 0 and out[0] is read
    search = _tool(read.content, name="filesystem-search")
    [sent], changed = externalize.apply([search], limit=LIMIT, preview=PREVIEW)
    assert changed == 1 and len(sent.content) < PREVIEW + 600


def test_a_long_output_becomes_first_and_last_lines_with_its_ref():
    lines = [f"line {i}: " + "x" * 40 for i in range(2000)]
    message = _tool("\n".join(lines))
    [sent], changed = externalize.apply([message], limit=LIMIT, preview=PREVIEW)
    assert changed == 1
    ref = artifact_ref_id(message.id)
    assert kind_of(ref) == "artifact"
    text = sent.content
    assert ref in text and "context-grep" in text and "context-tail" in text and "context-read" in text
    assert "line 0: " in text and "line 1999: " in text and "line 1000: " not in text
    assert f"{len(message.content):,} characters" in text and "lines omitted" in text
    assert len(text) < PREVIEW + 600
    assert message.content == "\n".join(lines)  # the stored message is untouched
    again, _ = externalize.apply([message], limit=LIMIT, preview=PREVIEW)
    assert again[0].content == text


def test_a_single_huge_line_is_cut():
    message = _tool("é" * 50_000)
    [sent], _ = externalize.apply([message], limit=LIMIT, preview=PREVIEW)
    assert len(sent.content) < PREVIEW + 600 and artifact_ref_id(message.id) in sent.content


def test_terminal_output_keeps_its_json_shape():
    stdout = "".join(f"test_{i} PASSED\n" for i in range(5000)) + "FAILED test_9999 - AssertionError\n"
    content = json.dumps({"command": "pytest -q", "stdout": stdout, "stderr": "warning: slow\n", "exitCode": 1})
    message = _tool(content, name="terminal-execute")
    [sent], changed = externalize.apply([message], limit=LIMIT, preview=PREVIEW)
    data = json.loads(sent.content)
    assert changed == 1
    assert data["command"] == "pytest -q" and data["exitCode"] == 1
    assert data["stdout"].startswith("test_0 PASSED") and "FAILED test_9999" in data["stdout"]
    assert data["stderr"] == "warning: slow\n"
    assert data["truncated"]["contextRef"] == artifact_ref_id(message.id)
    assert data["truncated"]["stdoutChars"] == len(stdout)
    assert len(sent.content) < PREVIEW + 800
