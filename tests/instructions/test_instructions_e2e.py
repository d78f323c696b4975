"""Instructions as Claude Code loads them, checked in what the fake server receives.

A Claude Code user's monorepo as it is on disk: `~/.claude/CLAUDE.md`, a root CLAUDE.md
importing two documents (one importing a third), a CLAUDE.local.md, a package folder with a
CLAUDE.md of its own. The start's files reach the model in the system prompt, outermost
first; the package's reaches it once, after the first read under that folder, and the
system prompt (the cached prefix) does not change when it does.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent.runtime.ops import Prompt
from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, needs_cairn


@pytest.fixture
def repo(tmp_path) -> Path:
    """A monorepo: instructions at the root, documents it imports, a package with its own."""
    root = tmp_path / "shop"
    (root / ".git").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "packages" / "api" / "src").mkdir(parents=True)
    (root / "CLAUDE.md").write_text(
        "# Shop\n\nROOT_MARKER: pnpm workspaces.\n\n"
        "- Architecture: @docs/architecture.md\n- Testing: @docs/testing.md\n\n"
        "Decorators look like `@cached` and this example is not an import:\n\n"
        "```bash\ncat @docs/secret-plan.md\n```\n"
    )
    (root / "docs" / "architecture.md").write_text("ARCH_MARKER: hexagonal, ports in core/.\n")
    (root / "docs" / "testing.md").write_text("TESTING_MARKER: vitest. Style: @style.md\n")
    (root / "docs" / "style.md").write_text("STYLE_MARKER: two spaces.\n")
    (root / "docs" / "secret-plan.md").write_text("CODE_BLOCK_MARKER\n")
    (root / "CLAUDE.local.md").write_text("LOCAL_MARKER: my sandbox is at localhost:4000.\n")
    (root / "packages" / "api" / "CLAUDE.md").write_text("API_MARKER: every handler returns a Result.\n")
    (root / "packages" / "api" / "src" / "handler.py").write_text("def handle():\n    return 1\n")
    (root / "packages" / "api" / "src" / "routes.py").write_text("ROUTES = []\n")
    (root.parent / "CLAUDE.md").write_text("ABOVE_REPO_MARKER\n")  # above the repository: not the project's
    return root


@pytest.fixture
def workspace(repo) -> Path:  # the open_runtime fixture opens the runtime here
    return repo


def _tool_results(request: dict) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


async def test_a_monorepos_instructions_reach_the_model_as_claude_code_loads_them(server, open_runtime, repo, home):
    (home / ".claude" / "CLAUDE.md").write_text("USER_MARKER: answer in British English.\n")
    server.add(
        tool_calls([("r1", "filesystem-read", {"filePath": "packages/api/src/handler.py"})]),
        tool_calls([("r2", "filesystem-read", {"filePath": "packages/api/src/routes.py"})]),
        text("Done."),
    )
    runtime = await open_runtime()
    try:
        await runtime.submit(Prompt("add a route"))
    finally:
        await runtime.close()

    first, second, third = server.requests
    system = first["messages"][0]["content"]
    order = ["USER_MARKER", "ROOT_MARKER", "ARCH_MARKER", "TESTING_MARKER", "STYLE_MARKER", "LOCAL_MARKER"]
    positions = [system.index(marker) for marker in order]
    assert positions == sorted(positions)  # outermost first, an import right after its importer
    for marker in ("CODE_BLOCK_MARKER", "ABOVE_REPO_MARKER", "API_MARKER"):
        assert marker not in system
    assert "imported by docs/testing.md" in system  # a relative import is relative to its importer

    # The package's CLAUDE.md arrives once, after the first read under its folder.
    results = _tool_results(third)
    assert "def handle()" in results["r1"] and results["r1"].count("API_MARKER") == 1
    assert "API_MARKER" not in results["r2"]
    assert json.dumps(third).count("API_MARKER") == 1
    # The cached prefix stays byte-identical.
    assert second["messages"][0] == first["messages"][0] == third["messages"][0]


def test_a_workspace_in_a_package_reads_up_to_the_repository_root(repo, home):
    from agent.prompt import build_system_prompt

    system = build_system_prompt(repo / "packages" / "api")
    assert system.index("ROOT_MARKER") < system.index("LOCAL_MARKER") < system.index("API_MARKER")
    assert "Project instructions from ../../CLAUDE.md" in system
    assert "ABOVE_REPO_MARKER" not in system


@needs_cairn
def test_claude_md_importing_agents_md_sends_agents_md_once(tmp_path):
    """The common pattern: AGENTS.md for every agent, CLAUDE.md `@AGENTS.md` plus a few lines."""
    workspace = tmp_path / "plain"
    workspace.mkdir()
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "CLAUDE.md").write_text("USER_MARKER\n@~/.claude/personal.md\n")
    (home / ".claude" / "personal.md").write_text("PERSONAL_MARKER\n")
    (workspace / "AGENTS.md").write_text("AGENTS_MARKER: run make check before committing.\n")
    (workspace / "CLAUDE.md").write_text("@AGENTS.md\n\nCLAUDE_MARKER: use the Task tool sparingly.\n")
    env = {**os.environ, "HOME": str(home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    with FakeLLMServer([text("ok")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hi", env=env)
        [request] = srv.requests
    assert out.returncode == 0, out.stderr
    system = request["messages"][0]["content"]
    assert system.count("AGENTS_MARKER") == 1 and "CLAUDE_MARKER" in system
    assert system.index("USER_MARKER") < system.index("PERSONAL_MARKER") < system.index("AGENTS_MARKER")
