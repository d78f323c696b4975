"""Issue 31: file results the file's later history made stale become one line, under the
`auto` cache policy only; the seeds hold to the letter under `exact`."""

from __future__ import annotations

import json

from agent.context.cache_policy import EXACT, CachePolicy
from agent.context.facts import facts_of
from agent.context.passes import stale_file_results as stale
from agent.context.passes.file_reads import DEFAULT_PLACEHOLDER
from agent.context.pipeline import build_api_messages
from agent.context.state import PassMemory
from agent.session.models import Message, ToolCall
from agent.settings.schema import Settings

WS = "/work/proj"
GRACE = stale.EDITED_READ_GRACE_REQUESTS


class Session:
    """A history built the way the loop stores it: each call an assistant message and its result."""

    def __init__(self) -> None:
        self.messages: list[Message] = [Message(role="user", content="go")]
        self.n = 0

    def call(self, tool: str, args: dict, content: str, status: str = "ok") -> int:
        self.n += 1
        cid = f"c{self.n}"
        self.messages.append(
            Message(role="assistant", tool_calls=[ToolCall(id=cid, name=tool, arguments=json.dumps(args))])
        )
        self.messages.append(Message(role="tool", tool_call_id=cid, tool_name=tool, content=content, status=status))
        return len(self.messages) - 1

    def read(self, path: str, first: int = 1, last: int = 3, total: int = 3, **args) -> int:
        body = "\n".join(f"{i}→line {i} of {path}" for i in range(first, last + 1))
        return self.call(
            "filesystem-read", {"filePath": path, **args}, f"📄 {path} (lines {first}-{last}/{total})\n{body}"
        )

    def edit(self, path: str, diff: str = "-old\n+new " + "x" * 300) -> int:
        return self.call("filesystem-edit", {"filePath": path, "searchContent": "old", "replaceContent": "new"}, diff)

    def talk(self, k: int) -> None:
        for _ in range(k):
            self.messages.append(Message(role="assistant", content="thinking aloud"))
            self.messages.append(Message(role="user", content="ok"))


def contents(messages: list[Message]) -> list[str | None]:
    out, _ = stale.apply(messages, workspace=WS)
    return [m.content for m in out]


def test_a_read_covered_by_a_later_read_of_the_same_file_gives_way():
    s = Session()
    old = s.read("a.py")
    part = s.read("b.py", 10, 20, 100)
    new = s.read(f"{WS}/a.py")  # the same file named another way
    out = contents(s.messages)
    assert out[old] == DEFAULT_PLACEHOLDER
    assert out[new] == s.messages[new].content and out[part] == s.messages[part].content


def test_a_read_of_another_range_stays():
    s = Session()
    first = s.read("a.py", 1, 50, 200)
    s.read("a.py", 40, 90, 200)  # overlaps, does not cover
    inner = s.read("a.py", 60, 70, 200)
    s.read("a.py", 55, 80, 200)  # covers only `inner`
    out = contents(s.messages)
    assert out[first] == s.messages[first].content
    assert out[inner] == DEFAULT_PLACEHOLDER


def test_a_whole_read_of_a_long_file_covers_only_its_window():
    s = Session()
    tail = s.read("big.py", 2001, 2100, 5000)
    s.read("big.py", 1, 2000, 5000)
    head = s.read("big.py", 1, 30, 5000)
    s.read("big.py", 1, 2000, 5000)
    out = contents(s.messages)
    assert out[tail] == s.messages[tail].content and out[head] == DEFAULT_PLACEHOLDER


def test_errors_and_batches_are_never_replaced_and_cover_nothing():
    s = Session()
    error = s.call("filesystem-read", {"filePath": "a.py"}, "Error: a.py not found", status="error")
    batch = s.call(
        "filesystem-read", {"filePath": ["a.py", "b.py"]}, "📄 a.py (lines 1-3/3)\n1→x\n\n📄 b.py (lines 1-1/1)\n1→y"
    )
    whole = s.read("a.py")
    s.call("filesystem-read", {"filePath": ["a.py"]}, "Error: a.py is gone", status="error")
    out = contents(s.messages)
    assert out[error] == s.messages[error].content and out[batch] == s.messages[batch].content
    assert out[whole] == s.messages[whole].content


def test_a_read_before_an_edit_goes_once_the_edit_is_grace_requests_old():
    s = Session()
    before = s.read("a.py")
    other = s.read("b.py")
    s.edit("a.py")
    s.talk(GRACE - 1)  # requests after the edit's result: one short of the grace
    assert contents(s.messages)[before] == s.messages[before].content
    s.talk(1)
    out = contents(s.messages)
    assert out[before] == DEFAULT_PLACEHOLDER and out[other] == s.messages[other].content


def test_a_read_after_the_edit_stays():
    s = Session()
    s.edit("a.py")
    after = s.read("a.py", 1, 2, 3)
    s.talk(GRACE + 2)
    assert contents(s.messages)[after] == s.messages[after].content


def test_an_edit_result_gives_way_when_the_file_is_touched_again():
    s = Session()
    first = s.edit("a.py")
    short = s.edit("b.py", diff="+1 line")  # shorter than the note: kept
    s.edit("b.py")
    s.read("a.py", 1, 2, 3)
    out = contents(s.messages)
    assert out[first] == stale.SUPERSEDED_EDIT_NOTE
    assert out[short] == s.messages[short].content
    failed = s.call("filesystem-edit", {"filePath": "c.py"}, "Error: searchContent not found " + "x" * 300, "error")
    s.edit("c.py")
    assert contents(s.messages)[failed].startswith("Error:")


def test_nothing_stale_gives_back_the_same_list_and_the_input_is_untouched():
    s = Session()
    s.read("a.py")
    s.edit("b.py")
    facts = facts_of(s.messages)
    out, changed = stale.run(facts, memory=PassMemory(), workspace=WS)
    assert changed == 0 and out is facts
    s.read("a.py")
    before = [m.content for m in s.messages]
    stale.apply(s.messages, workspace=WS)
    assert [m.content for m in s.messages] == before


def test_a_warm_run_on_a_longer_list_gives_what_a_fresh_run_gives():
    s = Session()
    memory = PassMemory()
    steps = [
        lambda: s.read("a.py"),
        lambda: s.edit("a.py"),
        lambda: s.talk(2),
        lambda: s.read("a.py", 1, 2, 3),
        lambda: s.talk(GRACE),
        lambda: s.read("a.py"),
        lambda: s.edit("b.py"),
        lambda: s.edit("b.py"),
    ]
    facts = facts_of(s.messages)
    for step in steps:
        step()
        facts = facts + facts_of(s.messages[len(facts) :])
        warm, warm_changed = stale.run(facts, memory=memory, workspace=WS)
        cold, cold_changed = stale.run(facts, memory=PassMemory(), workspace=WS)
        assert [f.content for f in warm] == [f.content for f in cold] and warm_changed == cold_changed


def _history_with_a_covered_read() -> list[Message]:
    s = Session()
    s.read("a.py")
    s.read("a.py")
    s.messages.append(Message(role="assistant", content="done"))
    return s.messages


def test_the_pipeline_runs_the_rule_under_auto_only():
    settings = Settings.model_validate({"workspace": WS})
    history = _history_with_a_covered_read()
    now = history[-1].created_at + 10**9  # the cache is cold: nothing is held
    auto = build_api_messages(history, now_ms=now, settings=settings, policy=CachePolicy(mode="auto"))
    exact = build_api_messages(history, now_ms=now, settings=settings, policy=EXACT)
    sent_auto = [m.get("content") for m in auto.messages if m["role"] == "tool"]
    sent_exact = [m.get("content") for m in exact.messages if m["role"] == "tool"]
    assert sent_auto[0] == settings.context.file_read_placeholder and sent_auto[1].startswith("📄 a.py")
    assert all(c.startswith("📄 a.py") for c in sent_exact)  # seed 000 keeps five reads whole
    assert {r.name: r.changed for r in auto.report}[stale.NAME] == 1
    assert stale.NAME not in {r.name for r in exact.report}
