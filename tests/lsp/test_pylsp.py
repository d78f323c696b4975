"""The real python-lsp-server (with pyflakes), in the sandbox, through cairn's own tools: an edit
that introduces an undefined name is told so, one that fixes it is not; `lsp` finds a
definition and a hover. The bound is generous here: a cold pylsp on a busy machine takes
seconds to start, and what is tested is what the server says, not how fast."""

from __future__ import annotations

import json

import pytest

from agent.session.models import ToolCall
from agent.settings.schema import LspSettings
from agent.tools.base import ToolContext
from agent.tools.fs_create import FsCreate
from agent.tools.fs_edit import FsEdit
from agent.tools.lsp_tool import Lsp
from agent.tools.permissions import Permissions
from agent.tools.registry import ToolRegistry
from tests.fakes.approver import FakeApprover
from tests.lsp.conftest import PYLSP

pytestmark = pytest.mark.skipif(not PYLSP.exists(), reason="python-lsp-server is a dev dependency: not installed")

SOURCE = '''import os


def where(name):
    """Where `name` would go."""
    return os.path.join(os.getcwd(), name)


print(where("x"))
'''


@pytest.fixture
async def tools(make_manager, workspace):
    manager = make_manager(LspSettings(timeout_ms=60_000, servers={"pylsp": {"command": [str(PYLSP)]}}))
    assert manager.offered
    ctx = ToolContext(workspace=workspace, permissions=Permissions(FakeApprover("once")))
    ctx.lsp = manager
    registry = ToolRegistry([FsEdit(), FsCreate(), Lsp(manager)])

    async def call(name: str, **arguments) -> str:
        result = await registry.execute(ToolCall(id="c", name=name, arguments=json.dumps(arguments)), ctx)
        assert not result.is_error, result.content
        return result.content

    return call


async def test_an_edit_introducing_an_undefined_name_is_told_and_its_fix_is_not(tools, workspace):
    (workspace / "app.py").write_text(SOURCE)
    broken = await tools(
        "filesystem-edit", filePath="app.py", searchContent='print(where("x"))', replaceContent="print(wher('x'))"
    )
    assert "Diagnostics (pylsp): this edit introduced 1 error in app.py:" in broken
    assert "9:7 error: undefined name 'wher' [pyflakes]" in broken
    fixed = await tools(
        "filesystem-edit", filePath="app.py", searchContent="print(wher('x'))", replaceContent="print(where('x'))"
    )
    assert "undefined name" not in fixed
    assert fixed.endswith("Diagnostics (pylsp): fixed 1 error in app.py; none new.")


async def test_a_created_file_reports_what_is_wrong_in_it(tools):
    said = await tools("filesystem-create", filePath="new.py", content="print(missing_name)\n")
    assert "1:7 error: undefined name 'missing_name' [pyflakes]" in said


async def test_definition_and_hover_at_the_position_the_model_sees(tools, workspace):
    (workspace / "app.py").write_text(SOURCE)
    definition = await tools("lsp", operation="definition", filePath="app.py", line=9, character=8)
    assert definition == "1 definition of app.py:9:8:\napp.py:4:5: def where(name):"
    hover = await tools("lsp", operation="hover", filePath="app.py", line=9, character=8)
    assert "Where `name` would go." in hover
    references = await tools("lsp", operation="references", filePath="app.py", line=4, character=6)
    assert references.splitlines()[1:] == ["app.py:4:5: def where(name):", 'app.py:9:7: print(where("x"))']
