"""Hostile transcripts for `parse_any` / `import_session`: ImportFormatError or a bounded import.

Truncated lines, wrong types, duplicated ids, parent cycles, lone surrogates, absurd numbers
and deep nesting: either a clear ImportFormatError before anything is written, or a session
that is stored whole and loads back (its active path walks to the root and stops).
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.session.importers import ImportFormatError, import_session, parse_any
from agent.session.loading import load_session_messages
from agent.session.store import Store
from tests.hostile.conftest import bounded, bounded_sync


@pytest.fixture
async def store(tmp_path):
    s = await Store.open(tmp_path / "sessions.db")
    yield s
    await s.close()


def jsonl(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def cc(uuid, parent, kind="user", content="hi", **extra) -> dict:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message.update(id=extra.pop("msg_id", f"msg-{uuid}"), model="claude-test")
    return {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "timestamp": "2025-01-01T10:00:00Z",
        "cwd": "/proj",
        "message": message,
        **extra,
    }


HEADER = {
    "type": "session",
    "format": "cairn-session",
    "version": 1,
    "id": "s-1",
    "title": "t",
    "cwd": "/p",
    "created_at": 1,
    "updated_at": 2,
    "head_id": "m2",
    "model": "x",
}


def cairn(*messages, header=None) -> str:
    return jsonl(header or HEADER, *({"type": "message", "role": "user", "content": "x", **m} for m in messages))


async def import_text(store, text: str, fmt: str = "auto"):
    """parse + import + load the active path, each under a hang guard."""
    imported = bounded_sync(lambda: parse_any(text, fmt), 30)
    session = await bounded(import_session(store, imported, cwd_default="/ws"), 30)
    path = await bounded(load_session_messages(store, session.id), 30)
    return imported, session, path


async def assert_refused(store, text: str, fragment: str, fmt: str = "auto") -> None:
    with pytest.raises(ImportFormatError, match=fragment):
        await import_text(store, text, fmt)
    assert await store.list_summaries() == []  # nothing half-written


def _long_line() -> str:
    return json.dumps(cc("u1", None, content="x" * 100))[:-7]


REFUSED = [
    pytest.param(
        jsonl(cc("u1", None)) + '{"type": "user", "uuid": "u2", "mess',
        "line 2: not valid JSON",
        "claude-code",
        id="claude-truncated-last-line",
    ),
    pytest.param(
        jsonl(_long_line(), cc("u2", "u1")), "line 1: not valid JSON", "claude-code", id="claude-truncated-first-line"
    ),
    pytest.param(
        jsonl(cc("u1", None), "[1, 2]"), "line 2: expected a JSON object", "claude-code", id="claude-line-not-object"
    ),
    pytest.param(
        jsonl({"type": "summary", "summary": "s"}), "no user or assistant", "claude-code", id="claude-no-conversation"
    ),
    pytest.param(jsonl(cc("u1", None), "[" * 50_000), "not valid JSON", "claude-code", id="claude-deep-nesting"),
    pytest.param(
        jsonl(cc("u1", None)) + '{"a": ' + "9" * 5000 + "}",
        "not valid JSON",
        "claude-code",
        id="claude-5000-digit-number",
    ),
    pytest.param(
        '[{"role": "user", "content": "hi"}, {"role": "assist', "not valid JSON", "openai", id="openai-truncated"
    ),
    pytest.param('{"messages": "nope"}', "expected a JSON list", "openai", id="openai-messages-not-list"),
    pytest.param('[{"role": 3}]', "unknown role", "openai", id="openai-role-int"),
    pytest.param(
        '[{"role": "assistant", "tool_calls": "x"}]', "tool_calls must be a list", "openai", id="openai-tool-calls-str"
    ),
    pytest.param(
        '[{"role": "assistant", "tool_calls": [{"function": 3}]}]',
        "no function name",
        "openai",
        id="openai-function-int",
    ),
    pytest.param("[" * 100_000, "not valid JSON", "openai", id="openai-deep-nesting"),
    pytest.param(cairn({"id": "m1"})[:-30], "not valid JSON", "cairn", id="cairn-truncated"),
    pytest.param(cairn({"id": "m1", "role": "wizard"}), "line 2: role", "cairn", id="cairn-bad-role"),
    pytest.param(cairn({"id": "m1", "seq": "first"}), "line 2: seq", "cairn", id="cairn-seq-str"),
    pytest.param(cairn({"id": "m1", "tool_calls": {"a": 1}}), "line 2: tool_calls", "cairn", id="cairn-calls-dict"),
    pytest.param(jsonl({**HEADER, "version": 99}), "unsupported cairn export version", "cairn", id="cairn-version"),
    pytest.param(jsonl({**HEADER, "created_at": "yesterday"}), "line 1: created_at", "cairn", id="cairn-header-type"),
    pytest.param("", "empty", "auto", id="empty"),
    pytest.param("\n\n   \n", "empty", "auto", id="blank"),
    pytest.param("\x00\x01binary\xff", "not a recognised session format", "auto", id="garbage"),
    pytest.param("not json at all", "not a recognised session format", "auto", id="prose"),
]


@pytest.mark.parametrize("text, fragment, fmt", REFUSED)
async def test_broken_files_are_refused_clearly(store, text, fragment, fmt):
    await assert_refused(store, text, fragment, fmt)
    if fmt != "auto":  # auto-detection never raises anything else either
        with contextlib.suppress(ImportFormatError):
            bounded_sync(lambda: parse_any(text), 30)


CAIRN_LINKS = [
    pytest.param([{"id": "m1", "parent_id": "m2"}, {"id": "m2", "parent_id": "m1"}], "cycle", id="two-cycle"),
    pytest.param([{"id": "m1", "parent_id": None}, {"id": "m2", "parent_id": "m2"}], "cycle", id="self-parent"),
    pytest.param(
        [
            {"id": "m0"},
            {"id": "m1", "parent_id": "m3"},
            {"id": "m3", "parent_id": "m2"},
            {"id": "m2", "parent_id": "m1"},
        ],
        "cycle",
        id="long-cycle-off-root",
    ),
    pytest.param(
        [{"id": "m1", "parent_id": "ghost"}, {"id": "m2", "parent_id": "m1"}],
        "parent ghost is not",
        id="dangling-parent",
    ),
    pytest.param([{"id": "m1"}, {"id": "m1", "parent_id": "m1"}], "occurs twice", id="duplicate-ids"),
    pytest.param([{"id": "m1"}], "head message m2 is not in the file", id="missing-head"),
    pytest.param(
        [{"id": "m1"}, {"id": "m2", "parent_id": "m1", "seq": 2**70}], "seq .* out of range", id="seq-over-int64"
    ),
    pytest.param(
        [{"id": "m1"}, {"id": "m2", "parent_id": "m1", "created_at": -(2**64)}],
        "created_at .* out of range",
        id="time-under-int64",
    ),
    pytest.param(
        [{"id": "m1"}, {"id": "m2", "parent_id": "m1", "meta": {"k": json.loads("[" * 500 + "]" * 500)}}],
        "nested more than",
        id="deep-meta",
    ),
]


@pytest.mark.parametrize("messages, fragment", CAIRN_LINKS)
async def test_cairn_links_and_numbers_are_checked_before_writing(store, messages, fragment):
    await assert_refused(store, cairn(*messages), fragment)


async def test_cairn_lone_surrogates_are_stored_as_replacement_characters(store):
    text = cairn(
        {"id": "m1", "content": "half \ud83d emoji"}, {"id": "m2", "parent_id": "m1", "meta": {"note": "\udcff"}}
    )
    assert "\\ud83d" in text  # json.dumps wrote a valid escape for it
    _, session, path = await import_text(store, text)
    assert [m.content for m in path] == ["half \ufffd emoji", "x"] and path[1].meta == {"note": "\ufffd"}


CLAUDE_ODDITIES = [
    pytest.param([cc("u1", "u2"), cc("u2", "u1", "assistant", [{"type": "text", "text": "a"}])], 2, id="two-cycle"),
    pytest.param([cc("u1", "u1"), cc("u2", "u2", "assistant", [{"type": "text", "text": "a"}])], 2, id="self-parents"),
    pytest.param(
        [cc("u1", None), cc("u2", "u3", "assistant", [{"type": "text", "text": "a"}]), cc("u3", "u2", content="again")],
        3,
        id="forward-cycle",
    ),
    pytest.param([cc("u1", None), cc("u1", None, content="duplicate line")], 1, id="duplicate-uuid"),
    pytest.param([cc("u1", None), cc("u2", {"not": "hashable"}), cc("u3", [1, 2])], 3, id="parent-wrong-types"),
    pytest.param(
        [
            cc("u1", None),
            cc("u2", "u1", "assistant", 5),
            cc("u3", "u2", "assistant", {"x": 1}),
            cc("u4", "u3", content=[{"type": "text", "text": 7}, "junk", None]),
        ],
        2,
        id="content-wrong-types",
    ),
    pytest.param(
        [cc("u1", None), {**cc("u2", "u1"), "message": "not an object"}, {**cc("u3", "u2"), "uuid": 42}],
        1,
        id="record-wrong-types",
    ),
    pytest.param(
        [cc("u1", None, content="\ud800 lone"), cc("u2", "u1", "assistant", [{"type": "text", "text": "\udfff"}])],
        2,
        id="lone-surrogates",
    ),
    pytest.param([cc("u1", None, timestamp="year 12345"), cc("u2", "u1", timestamp=1e308)], 2, id="bad-timestamps"),
]


@pytest.mark.parametrize("records, count", CLAUDE_ODDITIES)
async def test_claude_code_oddities_import_bounded(store, records, count):
    imported, session, path = await import_text(store, jsonl(*records), "claude-code")
    assert len(imported.messages) == count
    assert path and len(path) <= count and path[0].parent_id is None
    for message in path:
        (message.content or "").encode("utf-8")


async def test_claude_code_uuid_colliding_with_a_derived_id(store):
    # Two tool results on line "u3" become "u3" and "u3:1"; a later line claims "u3:1" too.
    calls = [{"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}} for i in (1, 2)]
    results = [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"} for i in (1, 2)]
    text = jsonl(
        cc("u1", None),
        cc("u2", "u1", "assistant", calls),
        cc("u3", "u2", content=results),
        cc("u3:1", "u3", content="clash"),
    )
    await assert_refused(store, text, "occurs twice", "claude-code")


OPENAI_ODDITIES = [
    pytest.param(
        '[{"role": "user", "content": "a", "id": "x"}, {"role": "assistant", "content": "b", "id": "x"}]',
        2,
        id="duplicate-ids-renamed",
    ),
    pytest.param(
        '[{"role": "user", "content": "a", "timestamp": Infinity}, {"role": "user", "timestamp": NaN},'
        ' {"role": "user", "timestamp": 1e300}, {"role": "user", "timestamp": -5}]',
        4,
        id="absurd-timestamps",
    ),
    # The block `1` is not understood: kept as a note after its message, never dropped (4).
    pytest.param(
        '[{"role": "user", "content": 12}, {"role": "assistant", "content": [1, {"type": "text"}]},'
        ' {"role": "tool", "content": null, "tool_call_id": 3}]',
        4,
        id="content-wrong-types",
    ),
    pytest.param(
        '[{"role": "user", "content": "\\ud800"}, {"role": "assistant", "content": "b\\udfff"}]',
        2,
        id="lone-surrogates",
    ),
    pytest.param(
        '{"messages": [{"role": "user", "content": "a"}], "title": ["x"], "cwd": {"a": 1}, "model": 5}',
        1,
        id="header-wrong-types",
    ),
]


@pytest.mark.parametrize("text, count", OPENAI_ODDITIES)
async def test_openai_oddities_import_whole(store, text, count):
    imported, session, path = await import_text(store, text, "openai")
    assert len(path) == count  # one chain: nothing dropped
    assert all(0 <= m.created_at < 2**63 for m in path)


async def test_a_long_claude_chain_imports_and_loads(store):
    records = [
        cc(
            f"u{i}",
            f"u{i - 1}" if i else None,
            "user" if i % 2 == 0 else "assistant",
            "q" if i % 2 == 0 else [{"type": "text", "text": "a"}],
        )
        for i in range(5000)
    ]
    _, session, path = await import_text(store, jsonl(*records), "claude-code")
    assert len(path) == 5000


# -- property tests ----------------------------------------------------------------------------

UUIDS = ["u1", "u2", "u3", "u1:1", "u2:1"]
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=6), st.sampled_from(UUIDS)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)
blocks = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image", "other"])},
    optional={
        "text": values,
        "thinking": values,
        "name": st.sampled_from(["Bash", "Read", "Edit", "X"]) | values,
        "id": st.sampled_from(["t1", "t2"]) | values,
        "input": values,
        "tool_use_id": st.sampled_from(["t1", "t2"]) | values,
        "content": values,
        "is_error": values,
    },
)
claude_records = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "summary", "system"]), "uuid": st.sampled_from(UUIDS) | values},
    optional={
        "parentUuid": st.sampled_from(UUIDS + [None]) | values,
        "message": st.fixed_dictionaries(
            {},
            optional={
                "role": values,
                "id": st.sampled_from(["m1", "m2"]) | values,
                "model": values,
                "content": st.lists(blocks, max_size=3) | values,
            },
        )
        | values,
        "timestamp": st.just("2025-01-01T10:00:00Z") | values,
        "toolUseResult": values,
        "isSidechain": values,
        "isMeta": values,
        "cwd": values,
        "summary": values,
    },
)
openai_messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system"]) | values},
        optional={
            "content": values,
            "id": st.sampled_from(["a", "b"]) | values,
            "timestamp": values,
            "tool_calls": st.lists(
                st.dictionaries(st.sampled_from(["id", "function", "type"]), values, max_size=3), max_size=2
            )
            | values,
            "tool_call_id": values,
            "name": values,
            "messageStatus": values,
        },
    ),
    max_size=6,
)
cairn_messages = st.lists(
    st.fixed_dictionaries(
        {"type": st.just("message"), "id": st.sampled_from(["m1", "m2", "m3"])},
        optional={
            "parent_id": st.sampled_from(["m1", "m2", "m3", None]),
            "role": st.sampled_from(["user", "tool"]) | values,
            "content": values,
            "seq": st.integers(),
            "created_at": st.integers(),
            "meta": values,
            "status": values,
        },
    ),
    max_size=5,
)
PROPERTY = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def _import_or_refuse(tmp_path, text: str) -> None:
    """Either ImportFormatError, or a stored session whose active path loads."""

    async def go():
        store = await Store.open(tmp_path / "prop.db")
        try:
            with contextlib.suppress(ImportFormatError):
                await import_text(store, text)
        finally:
            await store.close()

    asyncio.run(go())


@PROPERTY
@given(records=st.lists(claude_records, min_size=1, max_size=6))
def test_any_claude_code_lines(tmp_path, records):
    _import_or_refuse(tmp_path, jsonl(*records))


@PROPERTY
@given(messages=openai_messages, wrap=st.booleans())
def test_any_openai_messages(tmp_path, messages, wrap):
    _import_or_refuse(tmp_path, json.dumps({"messages": messages} if wrap else messages))


@PROPERTY
@given(messages=cairn_messages, head=st.sampled_from(["m1", "m2", "m3", None]))
def test_any_cairn_export(tmp_path, messages, head):
    _import_or_refuse(tmp_path, jsonl({**HEADER, "head_id": head}, *messages))
