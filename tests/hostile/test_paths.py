"""Hostile file paths for the filesystem tools: refused, or answered in bounded time and memory.

`..`, absolute paths and symlinks that lead out of the workspace need approval; devices and
FIFOs are never opened in a way that blocks or streams forever; a 2 GB sparse file is never
read whole; file names that are not UTF-8 are shown in a form the model can send back.
"""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path

import pytest

from agent.tools.workspace import resolve_path
from tests.hostile.conftest import assert_error, bounded_sync, execute

SECRET = "top secret, never shown"
GB = 1024**3
# Reading anything above must stay far below the 2 GB file it reads from.
MEMORY_BOUND = 64 * 1024 * 1024


@pytest.fixture
def outside(tmp_path) -> Path:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    return secret


OUTSIDE_PATHS = [
    pytest.param(lambda ws, out: "../secret.txt", id="dotdot"),
    pytest.param(lambda ws, out: "a/../../secret.txt", id="dotdot-through-folder"),
    pytest.param(lambda ws, out: "./" + "../" * 30 + str(out).lstrip("/"), id="many-dotdots"),
    pytest.param(lambda ws, out: str(out), id="absolute"),
    pytest.param(lambda ws, out: "link-to-secret", id="symlink-file"),
    pytest.param(lambda ws, out: "link-to-dir/secret.txt", id="symlink-folder"),
    pytest.param(lambda ws, out: "/etc/passwd", id="etc-passwd"),
    pytest.param(lambda ws, out: "~/.ssh/id_rsa", id="home"),
]


def _links(workspace: Path, outside: Path) -> None:
    (workspace / "a").mkdir()
    os.symlink(outside, workspace / "link-to-secret")
    os.symlink(outside.parent, workspace / "link-to-dir")


@pytest.mark.parametrize("make", OUTSIDE_PATHS)
@pytest.mark.parametrize("tool", ["filesystem-read", "filesystem-edit", "filesystem-create"])
async def test_outside_the_workspace_is_refused_without_approval(registry, ctx, workspace, outside, make, tool):
    _links(workspace, outside)
    raw = make(workspace, outside)
    args = {"filePath": raw, "searchContent": "top", "replaceContent": "new", "content": "pwned", "overwrite": True}
    result = await execute(registry, ctx, tool, args)
    assert_error(result, "outside the workspace")
    assert SECRET not in result.content
    assert outside.read_text() == SECRET and not result.edits


async def test_terminal_working_directory_outside_is_refused(registry, ctx, workspace, outside):
    _links(workspace, outside)
    result = await execute(
        registry, ctx, "terminal-execute", {"command": "cat secret.txt", "workingDirectory": "link-to-dir"}
    )
    assert_error(result)
    assert SECRET not in result.content


def _special(workspace: Path) -> None:
    os.mkfifo(workspace / "fifo")
    os.symlink("/dev/zero", workspace / "zero-link")
    os.symlink("/dev/urandom", workspace / "random-link")


SPECIAL = [
    pytest.param("fifo", "not a regular file", id="fifo"),
    pytest.param("/dev/zero", "not a regular file", id="dev-zero"),
    pytest.param("/dev/urandom", "not a regular file", id="dev-urandom"),
    pytest.param("/dev/stdin", "", id="dev-stdin"),
    pytest.param("zero-link", "not a regular file", id="symlink-to-dev-zero"),
    pytest.param("random-link", "not a regular file", id="symlink-to-dev-urandom"),
    pytest.param(".", "is a directory", id="workspace-folder"),
]


@pytest.mark.parametrize("raw, fragment", SPECIAL)
async def test_devices_fifos_and_folders_are_never_opened_for_edit(registry, yolo_ctx, workspace, raw, fragment):
    """Approved (yolo): the tools' own checks. Nothing blocks, nothing is written."""
    _special(workspace)
    edit = await execute(
        registry, yolo_ctx, "filesystem-edit", {"filePath": raw, "searchContent": "a", "replaceContent": "b"}
    )
    assert_error(edit, fragment)
    create = await execute(
        registry, yolo_ctx, "filesystem-create", {"filePath": raw, "content": "x", "overwrite": True}
    )
    assert_error(create)
    assert not edit.edits and not create.edits
    assert (workspace / "fifo").is_fifo()


@pytest.mark.parametrize("raw, fragment", [p for p in SPECIAL if p.id != "workspace-folder"])
async def test_devices_and_fifos_are_not_read(registry, yolo_ctx, workspace, raw, fragment):
    _special(workspace)
    for args in ({"filePath": raw}, {"filePath": raw, "startLine": 1, "endLine": 5}):
        result = await execute(registry, yolo_ctx, "filesystem-read", args)
        assert_error(result, fragment)
        assert len(result.content) < 1000


def test_opening_a_fifo_never_blocks(workspace):
    """The FIFO has no writer: a plain open() would wait forever for one."""
    from agent.tools.workspace import ToolError, open_regular

    os.mkfifo(workspace / "fifo")
    rp = resolve_path("fifo", workspace)
    with pytest.raises(ToolError, match="not a regular file"):
        bounded_sync(lambda: open_regular(rp), 10)


async def test_terminal_working_directory_that_is_a_fifo(registry, yolo_ctx, workspace):
    os.mkfifo(workspace / "fifo")
    result = await execute(registry, yolo_ctx, "terminal-execute", {"command": "pwd", "workingDirectory": "fifo"})
    assert_error(result, "not an existing folder")


async def test_folder_listing_and_folder_as_file(registry, yolo_ctx, workspace):
    (workspace / "sub").mkdir()
    (workspace / "sub" / "f.txt").write_text("x\n")
    listing = await execute(registry, yolo_ctx, "filesystem-read", {"filePath": "sub", "startLine": 3})
    assert listing.content.startswith("📁 sub (1 entries)") and "f.txt" in listing.content
    created = await execute(registry, yolo_ctx, "filesystem-create", {"filePath": "sub/", "content": "x"})
    assert_error(created)
    assert (workspace / "sub").is_dir() and (workspace / "sub" / "f.txt").read_text() == "x\n"


# -- a 2 GB sparse file ------------------------------------------------------------------------


def _sparse(workspace: Path, head: bytes = b"") -> Path:
    path = workspace / "huge.log"
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(2 * GB)  # a hole: no disk space, reads as NUL bytes
    return path


async def _measured(coro):
    tracemalloc.start()
    try:
        result = await coro
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


@pytest.mark.parametrize(
    "args", [{}, {"startLine": 1, "endLine": 3}, {"startLine": 100_000}], ids=["whole", "range", "far-range"]
)
async def test_sparse_2gb_file_read_is_bounded(registry, yolo_ctx, workspace, args):
    _sparse(workspace)
    result, peak = await _measured(execute(registry, yolo_ctx, "filesystem-read", {"filePath": "huge.log", **args}))
    assert_error(result, "binary")
    assert peak < MEMORY_BOUND


async def test_sparse_2gb_file_with_a_text_head(registry, yolo_ctx, workspace):
    """2,000 text lines (more than the binary sniff), then 2 GB of hole: too large to read
    whole; a line range streams only what it needs; reading into the hole stops there."""
    _sparse(workspace, "".join(f"line {n}\n" for n in range(1, 2001)).encode())
    whole, peak = await _measured(execute(registry, yolo_ctx, "filesystem-read", {"filePath": "huge.log"}))
    assert_error(whole, "too large to read whole", "startLine")
    assert peak < MEMORY_BOUND
    part, peak = await _measured(
        execute(registry, yolo_ctx, "filesystem-read", {"filePath": "huge.log", "startLine": 1999, "endLine": 2000})
    )
    assert not part.is_error and "1999→line 1999\n2000→line 2000" in part.content
    assert peak < MEMORY_BOUND
    beyond, peak = await _measured(
        execute(registry, yolo_ctx, "filesystem-read", {"filePath": "huge.log", "startLine": 3000})
    )
    assert_error(beyond, "binary content at line 2001")
    assert peak < MEMORY_BOUND


@pytest.mark.parametrize(
    "tool, args, fragment",
    [
        ("filesystem-edit", {"searchContent": "a", "replaceContent": "b"}, "too large to edit"),
        ("filesystem-create", {"content": "small", "overwrite": True}, "too large to overwrite"),
    ],
)
async def test_sparse_2gb_file_is_not_loaded_to_change_it(registry, yolo_ctx, workspace, tool, args, fragment):
    path = _sparse(workspace, b"a\n")
    result, peak = await _measured(execute(registry, yolo_ctx, tool, {"filePath": "huge.log", **args}))
    assert_error(result, fragment)
    assert peak < MEMORY_BOUND
    assert path.stat().st_size == 2 * GB  # untouched


# -- file names that are not UTF-8 -------------------------------------------------------------


def _bad_name(workspace: Path, name: bytes, data: bytes = b"hello\n") -> None:
    with open(os.fsencode(str(workspace)) + b"/" + name, "wb") as f:
        f.write(data)


async def test_non_utf8_file_name_is_listed_and_readable_back(registry, yolo_ctx, workspace):
    _bad_name(workspace, b"caf\xe9.txt")  # Latin-1 é
    listing = await execute(registry, yolo_ctx, "filesystem-read", {"filePath": "."})
    assert "caf\\xe9.txt" in listing.content  # visible, storable
    read = await execute(registry, yolo_ctx, "filesystem-read", {"filePath": "caf\\xe9.txt"})
    assert not read.is_error and "1→hello" in read.content
    assert read.content.startswith("📄 caf\\xe9.txt")
    edit = await execute(
        registry,
        yolo_ctx,
        "filesystem-edit",
        {"filePath": "caf\\xe9.txt", "searchContent": "hello", "replaceContent": "bye"},
    )
    assert not edit.is_error, edit.content
    assert (Path(os.fsdecode(os.fsencode(str(workspace)) + b"/caf\xe9.txt"))).read_bytes() == b"bye\n"


async def test_non_utf8_folder_and_missing_file_errors_are_storable(registry, yolo_ctx, workspace):
    os.mkdir(os.fsencode(str(workspace)) + b"/dir\xff\xfe")
    _bad_name(workspace, b"dir\xff\xfe/in\x80side.txt")
    listing = await execute(registry, yolo_ctx, "filesystem-read", {"filePath": "dir\\xff\\xfe"})
    assert "in\\x80side.txt" in listing.content
    missing = await execute(registry, yolo_ctx, "filesystem-read", {"filePath": "dir\\xff\\xfe/nope\\x81"})
    assert_error(missing, "not found")


async def test_a_literal_backslash_x_name_still_wins(registry, yolo_ctx, workspace):
    (workspace / "odd\\xe9.txt").write_text("literal\n")
    _bad_name(workspace, b"odd\xe9.txt", b"byte\n")
    read = await execute(registry, yolo_ctx, "filesystem-read", {"filePath": "odd\\xe9.txt"})
    assert "1→literal" in read.content


PATHS_ERRORS = [
    pytest.param("", "empty", id="empty"),
    pytest.param("   ", "empty", id="blank"),
    pytest.param("a\x00b", "NUL", id="nul"),
    pytest.param("x" * 300, "File name too long", id="long-name"),
    pytest.param("d/" * 5000 + "f", "too long", id="over-path-max"),
    pytest.param("loop-a", "", id="symlink-loop"),
]


@pytest.mark.parametrize("raw, fragment", PATHS_ERRORS)
async def test_unusable_paths(registry, yolo_ctx, workspace, raw, fragment):
    os.symlink("loop-b", workspace / "loop-a")
    os.symlink("loop-a", workspace / "loop-b")
    for tool, extra in (
        ("filesystem-read", {}),
        ("filesystem-create", {"content": "x"}),
        ("filesystem-edit", {"searchContent": "a", "replaceContent": "b"}),
    ):
        result = await execute(registry, yolo_ctx, tool, {"filePath": raw, **extra})
        assert_error(result, fragment)
        assert len(result.content) < 3000
    assert sorted(p.name for p in workspace.iterdir()) == ["loop-a", "loop-b"]


# -- project instruction files (AGENTS.md, CLAUDE.md) ------------------------------------------


def test_instruction_file_resolving_outside_is_not_read(workspace, outside):
    """A cloned repository's `AGENTS.md -> ~/.ssh/id_rsa` must not go into every request."""
    from agent.prompt import build_system_prompt, instruction_notices

    os.symlink(outside, workspace / "AGENTS.md")
    notices: list[str] = []
    prompt = build_system_prompt(workspace, notices=notices)

    assert SECRET not in prompt and "Project instructions" not in prompt
    [notice] = notices
    assert "AGENTS.md" in notice and "outside the workspace" in notice and str(outside) in notice
    assert instruction_notices(workspace) == notices  # what a front end shows at start


def test_instruction_file_through_a_folder_outside_is_not_read_and_the_next_one_is(workspace, outside):
    from agent.prompt import build_system_prompt

    os.symlink(outside.parent, workspace / "up")
    os.symlink("up/secret.txt", workspace / "AGENTS.md")
    (workspace / "CLAUDE.md").write_text("Use tabs.\n")
    notices: list[str] = []
    prompt = build_system_prompt(workspace, notices=notices)

    assert SECRET not in prompt
    assert "Project instructions from CLAUDE.md" in prompt and "Use tabs." in prompt
    assert len(notices) == 1 and "AGENTS.md" in notices[0]


def test_instruction_symlinks_inside_the_workspace_are_followed(workspace):
    from agent.prompt import build_system_prompt, instruction_notices

    (workspace / "docs").mkdir()
    (workspace / "docs" / "agents.md").write_text("Run the tests.\n")
    os.symlink("docs/agents.md", workspace / "AGENTS.md")
    os.mkfifo(workspace / "CLAUDE.md")  # both files are read (issue 45): a FIFO is skipped, never blocks

    assert "Project instructions from AGENTS.md" in build_system_prompt(workspace)
    assert "Run the tests." in build_system_prompt(workspace)
    assert instruction_notices(workspace) == [
        "Not reading CLAUDE.md as project instructions: it is a FIFO (named pipe), not a regular file"
    ]


def test_instruction_file_that_is_a_fifo_or_device_is_skipped_without_blocking(workspace):
    from agent.prompt import build_system_prompt

    os.mkfifo(workspace / "AGENTS.md")
    os.symlink("/dev/zero", workspace / "CLAUDE.md")  # outside: refused with a notice
    notices: list[str] = []
    prompt = bounded_sync(lambda: build_system_prompt(workspace, notices=notices))
    assert "Project instructions" not in prompt
    assert [n.split(":")[0] for n in notices] == [  # Claude Code's order: CLAUDE.md, then AGENTS.md
        "Not reading CLAUDE.md as project instructions",
        "Not reading AGENTS.md as project instructions",
    ]
    assert "FIFO" in notices[1]  # said why: a FIFO would have blocked cairn
