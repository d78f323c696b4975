"""The pipeline's invariants on real Claude Code sessions, imported and loaded like any session.

Prints each transcript's report (tokens before/after per pass) so the savings on real
work are visible in the test log.
"""

from __future__ import annotations

import copy
import json

import pytest

from agent.context.pipeline import build_api_messages
from agent.llm.offline import import_litellm
from agent.session.importers import import_session, parse_any
from agent.session.loading import load_session_messages
from agent.session.store import Store
from agent.settings.schema import Settings
from tests.conftest import SHARED
from tests.context.test_orphans import assert_valid
from tests.context.test_pipeline_properties import TOOLS, assert_anthropic_valid

TRANSCRIPTS = SHARED / "fixtures" / "transcripts" / "claude-code"
FILES = sorted(TRANSCRIPTS.glob("*.jsonl")) if TRANSCRIPTS.is_dir() else []
HOUR_MS = 3_600_000

pytestmark = pytest.mark.skipif(not FILES, reason=f"shared transcripts not found at {TRANSCRIPTS}")


@pytest.mark.parametrize("path", FILES, ids=[p.name[:40] for p in FILES])
async def test_pipeline_invariants_on_an_imported_transcript(path, tmp_path, capsys):
    store = await Store.open(tmp_path / "t.db")
    try:
        session = await import_session(store, parse_any(path.read_text(encoding="utf-8")), cwd_default=str(tmp_path))
        history = await load_session_messages(store, session.id)
    finally:
        await store.close()
    assert history, "the transcript imported as an empty session"
    settings = Settings(workspace=session.cwd or tmp_path)
    now = max(m.created_at for m in history) + HOUR_MS

    before = copy.deepcopy([m.model_dump() for m in history])
    first = build_api_messages(history, now_ms=now, settings=settings, tools=TOOLS, system_prompt="sys")
    second = build_api_messages(history, now_ms=now, settings=settings, tools=TOOLS, system_prompt="sys")
    assert [m.model_dump() for m in history] == before, "the build mutated its input"
    assert first.messages == second.messages and first.tokens == second.tokens
    assert_valid(first.messages[1:])

    placeholders = {settings.context.terminal_outdated_placeholder, settings.context.file_read_placeholder}
    by_call = {m.tool_call_id: m for m in history if m.role == "tool"}
    replaced = 0
    for sent in first.messages:
        if sent["role"] == "tool" and sent["content"] in placeholders:
            source = by_call[sent["tool_call_id"]]
            assert source.status == "ok" and not (source.content or "").startswith("Error:")
            replaced += 1

    import_litellm()
    from litellm.llms.anthropic.chat.transformation import AnthropicConfig
    from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig

    OpenAIGPTConfig().transform_request("gpt-4o", copy.deepcopy(first.messages), {"tools": TOOLS}, {}, {})
    request = AnthropicConfig().transform_request(
        "claude-sonnet-4-5", copy.deepcopy(first.messages), {"tools": TOOLS, "max_tokens": 1024}, {}, {}
    )
    assert_anthropic_valid(request)

    report = first.report
    assert report[0].tokens_before >= report[-1].tokens_after
    assert sum(p.changed for p in report if p.name in ("terminal_outdated", "file_reads")) == replaced
    with capsys.disabled():
        start, end = report[0].tokens_before, report[-1].tokens_after
        print(
            f"\n{path.name[:48]}: {len(history)} messages, {start:,} → {end:,} message tokens "
            f"({(start - end) / max(start, 1):.0%} saved, an hour after the last message)"
        )
        for p in report:
            print(f"    {p.name:<18} changed {p.changed:>3}  {p.tokens_before:>8,} → {p.tokens_after:>8,}")
        print("    " + json.dumps(first.tokens.model_dump()))
