"""Hostile tool arguments through `default_registry().execute`: always an `Error: …` result.

Wrong types, missing fields, huge strings, broken JSON, unknown tools and a thousand calls
in one go: nothing raises, nothing hangs, every result is storable text, and errors are
short (they never echo megabytes of input back to the model).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.tools.base import MAX_ERROR_CHARS
from tests.hostile.conftest import assert_error, assert_storable, bounded, execute, make_call

# Generous: an error names the problem, maybe a path; it never carries the input whole.
SHORT = MAX_ERROR_CHARS + 500
MB = 1024 * 1024

UNKNOWN_TOOLS = [
    pytest.param("rm-rf", id="plain"),
    pytest.param("", id="empty-name"),
    pytest.param("x" * 100_000, id="100k-name"),
    pytest.param("read\x1b[2J\x00", id="control-chars"),
    pytest.param("filesystem-read ", id="trailing-space"),
    pytest.param("\udcff", id="lone-surrogate"),
]


@pytest.mark.parametrize("name", UNKNOWN_TOOLS)
async def test_unknown_tool(registry, ctx, name):
    result = await execute(registry, ctx, name, {"filePath": "a.py"})
    assert_error(result, "unknown tool", "filesystem-read")  # and it lists the real ones
    assert len(result.content) < SHORT


BROKEN_JSON = [
    pytest.param('{"filePath": "a.py"', "invalid JSON", id="truncated"),
    pytest.param("{'filePath': 'a.py'}", "invalid JSON", id="single-quotes"),
    pytest.param('{"filePath": "a.py",}', "invalid JSON", id="trailing-comma"),
    pytest.param("[" * 100_000, "invalid JSON", id="deep-nesting"),
    pytest.param('{"a":' * 50_000 + "1" + "}" * 50_000, "invalid JSON", id="deep-objects"),
    pytest.param('{"filePath": ' + "9" * 5000 + "}", "invalid JSON", id="5000-digit-number"),
    pytest.param("\x00\x01\x02", "invalid JSON", id="control-bytes"),
    pytest.param('{"filePath": "a.py"} trailing', "invalid JSON", id="trailing-garbage"),
    pytest.param("[1, 2]", "must be a JSON object", id="list"),
    pytest.param("null", "must be a JSON object", id="null"),
    pytest.param('"a.py"', "must be a JSON object", id="string"),
    pytest.param("1e999999", "must be a JSON object", id="infinite-number"),
    pytest.param('{"filePath": NaN}', "invalid arguments", id="nan-path"),
]


@pytest.mark.parametrize("raw, fragment", BROKEN_JSON)
async def test_broken_json(registry, ctx, raw, fragment):
    result = await execute(registry, ctx, "filesystem-read", raw)
    assert_error(result, fragment)
    assert len(result.content) < SHORT


WRONG_ARGUMENTS = [
    pytest.param("filesystem-read", {}, "filePath: missing required field", id="read-missing-path"),
    pytest.param("filesystem-read", {"filePath": 3}, "filePath", id="read-path-int"),
    pytest.param("filesystem-read", {"filePath": {"path": "a"}}, "filePath", id="read-path-object"),
    pytest.param("filesystem-read", {"filePath": [1, None]}, "filePath item", id="read-list-of-junk"),
    pytest.param("filesystem-read", {"filePath": "a", "startLine": "ten"}, "startLine", id="read-start-str"),
    pytest.param("filesystem-read", {"filePath": "a", "startLine": 0}, "startLine", id="read-start-zero"),
    pytest.param("filesystem-read", {"filePath": "a", "startLine": 1.5}, "startLine", id="read-start-float"),
    pytest.param("filesystem-read", {"filePath": "a", "endLine": -3}, "endLine", id="read-end-negative"),
    pytest.param("filesystem-read", {"filePath": "a.py", "startLine": 9, "endLine": 2}, "before", id="read-end-before"),
    pytest.param("filesystem-read", {"filePath": []}, "empty list", id="read-empty-list"),
    pytest.param("filesystem-edit", {"filePath": "a.py"}, "searchContent: missing", id="edit-missing"),
    pytest.param(
        "filesystem-edit",
        {"filePath": "a.py", "searchContent": 1, "replaceContent": []},
        "searchContent",
        id="edit-wrong-types",
    ),
    pytest.param(
        "filesystem-edit",
        {"filePath": "a.py", "searchContent": "a", "replaceContent": "b", "replaceAll": "maybe"},
        "replaceAll",
        id="edit-bool-str",
    ),
    pytest.param("filesystem-create", {"content": "x"}, "filePath: missing", id="create-missing-path"),
    pytest.param("filesystem-create", {"filePath": "a.py", "content": None}, "content", id="create-null-content"),
    pytest.param("terminal-execute", {}, "command: missing", id="terminal-missing"),
    pytest.param("terminal-execute", {"command": ["ls", "-l"]}, "command", id="terminal-argv-list"),
    pytest.param("terminal-execute", {"command": ""}, "command", id="terminal-empty"),
    pytest.param("terminal-execute", {"command": "   "}, "command is empty", id="terminal-blank"),
    pytest.param("terminal-execute", {"command": "ls", "timeout": "soon"}, "timeout", id="terminal-timeout-str"),
    pytest.param("terminal-execute", {"command": "ls", "timeout": -1}, "timeout", id="terminal-timeout-negative"),
    pytest.param("terminal-execute", {"command": "ls", "timeout": 0}, "timeout", id="terminal-timeout-zero"),
    pytest.param("context-read", {}, "id: missing", id="context-read-missing"),
    pytest.param("context-grep", {"id": "x", "pattern": "a", "maxResults": 10**9}, "maxResults", id="grep-max"),
    pytest.param("context-tail", {"id": ["x"]}, "id", id="context-tail-list-id"),
]


@pytest.mark.parametrize("name, args, fragment", WRONG_ARGUMENTS)
async def test_wrong_or_missing_arguments(registry, ctx, workspace, name, args, fragment):
    (workspace / "a.py").write_text("a = 1\n")
    result = await execute(registry, ctx, name, args)
    assert_error(result, fragment)
    assert len(result.content) < SHORT
    assert (workspace / "a.py").read_text() == "a = 1\n"  # nothing was changed on the way


async def test_many_wrong_fields_are_summarised(registry, ctx):
    spec = [{"path": i, "startLine": "x", "endLine": "y"} for i in range(50)]
    result = await execute(registry, ctx, "filesystem-read", {"filePath": spec})
    assert_error(result, "invalid arguments", "more")
    assert len(result.content) < SHORT


HUGE = [
    pytest.param("filesystem-read", {"filePath": "x" * MB}, id="read-1mb-path"),
    pytest.param("filesystem-read", {"filePath": "d/" * 200_000 + "f"}, id="read-deep-path"),
    pytest.param("filesystem-read", {"filePath": [f"nope-{i}" for i in range(2000)]}, id="read-2000-paths"),
    pytest.param(
        "filesystem-edit",
        {"filePath": "a.py", "searchContent": "q" * (5 * MB), "replaceContent": "r"},
        id="edit-5mb-search",
    ),
    pytest.param(
        "filesystem-edit", {"filePath": "x" * MB, "searchContent": "a", "replaceContent": "b"}, id="edit-1mb-path"
    ),
    pytest.param("filesystem-create", {"filePath": "y" * MB, "content": "z"}, id="create-1mb-path"),
    # Over the kernel's 128 KiB limit for one argument (bash -c COMMAND): E2BIG, not a crash.
    # (Not megabytes: permissions.analyse_command is quadratic in the command's length.)
    pytest.param("terminal-execute", {"command": "echo " + "x" * 200_000}, id="terminal-200kb-command"),
    pytest.param("terminal-execute", {"command": "true", "workingDirectory": "w" * MB}, id="terminal-1mb-cwd"),
    pytest.param("context-grep", {"id": "i" * MB, "pattern": "p" * MB}, id="grep-1mb"),
]


@pytest.mark.parametrize("name, args", HUGE)
async def test_huge_strings_give_a_short_error(registry, yolo_ctx, workspace, name, args):
    (workspace / "a.py").write_text("a = 1\n")
    result = await execute(registry, yolo_ctx, name, args)
    assert_error(result)
    # An error names the problem; the input itself comes back at most once per path, cut.
    per_item = len(args["filePath"]) if isinstance(args.get("filePath"), list) else 1
    assert len(result.content) < SHORT * per_item
    assert (workspace / "a.py").read_text() == "a = 1\n"
    assert sorted(p.name for p in workspace.iterdir()) == ["a.py"]  # nothing created


async def test_huge_but_valid_content_is_written_whole(registry, yolo_ctx, workspace):
    content = "line\n" * (MB // 5)
    result = await execute(registry, yolo_ctx, "filesystem-create", {"filePath": "big.txt", "content": content})
    assert not result.is_error and (workspace / "big.txt").read_text() == content
    assert len(result.content) < 200  # the summary, not the content


async def test_lone_surrogates_in_arguments(registry, yolo_ctx, workspace):
    # Valid JSON (\\udXXX escapes) that Python cannot encode: must not reach SQLite raw.
    raw = '{"filePath": "a\\ud800b.txt", "content": "x\\udfffy"}'
    result = await execute(registry, yolo_ctx, "filesystem-create", raw)
    assert_error(result, "not valid Unicode")
    command = await execute(registry, yolo_ctx, "terminal-execute", '{"command": "echo \\ud83d"}')
    assert_storable(command)  # echo runs or fails, either way the text is storable


async def test_a_thousand_calls_in_one_message(registry, ctx, workspace):
    """What the loop does with 1,000 tool calls of one assistant message: one storable
    result each, in order, errors for the broken ones, the valid ones still served."""
    (workspace / "ok.txt").write_text("fine\n")
    kinds = [
        ("filesystem-read", {"filePath": "ok.txt"}, False),
        ("filesystem-read", '{"filePath": ', True),
        ("no-such-tool", {}, True),
        ("filesystem-edit", {"filePath": 7}, True),
        ("filesystem-read", {"filePath": "../outside.txt"}, True),
        ("terminal-execute", {"command": "touch made"}, True),  # refused: nobody to approve
        ("filesystem-read", {"filePath": "x" * 10_000}, True),
        ("filesystem-read", "[" * 20_000, True),
    ]
    calls = [
        (make_call(kinds[i % len(kinds)][0], kinds[i % len(kinds)][1], f"call-{i}"), kinds[i % len(kinds)][2])
        for i in range(1000)
    ]

    async def run_all():
        return [await registry.execute(call, ctx) for call, _ in calls]

    results = await bounded(run_all(), 120)
    assert len(results) == 1000
    for (call, should_fail), result in zip(calls, results, strict=False):
        assert_storable(result)
        assert result.is_error is should_fail, (call.name, call.arguments[:50], result.content[:200])
        if should_fail:
            assert result.content.startswith("Error: ") and len(result.content) < SHORT
        else:
            assert "1→fine" in result.content
    assert not (workspace / "made").exists()


async def test_concurrent_calls_do_not_interfere(registry, yolo_ctx, workspace):
    """Should a front end ever run calls in parallel: each still gets its own answer."""
    for i in range(50):
        (workspace / f"f{i}.txt").write_text(f"file {i}\n")
    calls = [make_call("filesystem-read", {"filePath": f"f{i}.txt"}, f"c{i}") for i in range(50)]
    calls += [make_call("filesystem-read", "{broken", f"b{i}") for i in range(50)]
    results = await bounded(asyncio.gather(*(registry.execute(c, yolo_ctx) for c in calls)), 60)
    for i, result in enumerate(results[:50]):
        assert f"1→file {i}" in result.content
    assert all(r.content.startswith("Error: invalid JSON") for r in results[50:])


# -- property tests ----------------------------------------------------------------------------

TOOL_NAMES = [
    "filesystem-read",
    "filesystem-edit",
    "filesystem-create",
    "terminal-execute",
    "context-list",
    "context-read",
    "context-tail",
    "context-grep",
]
KEYS = [
    "filePath",
    "startLine",
    "endLine",
    "searchContent",
    "replaceContent",
    "replaceAll",
    "content",
    "overwrite",
    "command",
    "timeout",
    "workingDirectory",
    "kind",
    "limit",
    "id",
    "offset",
    "lines",
    "pattern",
    "maxResults",
    "contextLines",
    "caseSensitive",
    "path",
]
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        st.text(max_size=30),
        st.sampled_from(["a.py", "..", "/etc/passwd", "/dev/zero", "~", "", " ", "\x00", "a/../../b"]),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS + ["x"]), inner, max_size=4)
    ),
    max_leaves=8,
)
argument_objects = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6)
PROPERTY_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def _run_call(registry, ctx, name, arguments):
    async def go():
        return await bounded(registry.execute(make_call(name, arguments), ctx), 20)

    return asyncio.run(go())


@PROPERTY_SETTINGS
@given(name=st.sampled_from(TOOL_NAMES), arguments=argument_objects)
def test_any_json_object_gives_a_result_not_an_exception(registry, ctx, workspace, name, arguments):
    (workspace / "a.py").write_text("a = 1\n")
    result = _run_call(registry, ctx, name, json.dumps(arguments))
    assert_storable(result)
    if result.is_error:
        assert result.content.startswith("Error: ")
    # Nothing approved (no approver, no yolo): nothing in the workspace may change.
    assert sorted(p.name for p in workspace.iterdir()) == ["a.py"]
    assert (workspace / "a.py").read_text() == "a = 1\n"


@PROPERTY_SETTINGS
@given(name=st.sampled_from(TOOL_NAMES + ["", "nope"]), raw=st.text(max_size=200))
def test_any_argument_text_gives_a_result_not_an_exception(registry, ctx, name, raw):
    result = _run_call(registry, ctx, name, raw)
    assert_storable(result)
    if result.is_error:
        assert result.content.startswith("Error: ") and len(result.content) < SHORT
