"""Issue 46 item 11: a slash command's session is titled as typed (`/init`), never with its
expansion's markup; a title stored that way before reads as `/name`; the `/resume` picker
gives the title the width when every session is in one folder, and lists title matches first."""

from __future__ import annotations

from agent.session.models import Session, SessionSummary
from agent.session.titles import readable_title, title_for
from agent.ui.app import CairnApp
from agent.ui.screens.picker import SessionPicker
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, wait_for, wait_ready
from tests.ui.test_snapshots import fixed_home, make_app, settle  # noqa: F401 - autouse
from tests.ui.test_snapshots_modals import utc  # noqa: F401 - a fixture

SIZE = (80, 24)
FOLDER = "/home/newcomer/ws/itsdangerous"
INIT = '<command name="init">\nStudy this project (explore its layout) and write AGENTS.md'


def _summary(i: int, title: str, prompt: str, cwd: str = FOLDER) -> SessionSummary:
    return SessionSummary(
        session=Session(id=f"s-{i:04d}", title=title, cwd=cwd, created_at=1, updated_at=1_709_631_000_000 - i),
        first_prompt=prompt,
        message_count=4,
    )


def test_a_command_title_reads_as_the_command():
    assert title_for("/init") == "/init"
    assert title_for("/review   src/app.py") == "/review src/app.py"
    assert readable_title(" ".join(INIT.split())[:60]) == "/init"  # stored by an older cairn
    assert readable_title("plain words") == "plain words"


async def test_init_session_is_titled_as_typed(make_settings, server, workspace):
    server.add(text("Wrote AGENTS.md."))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "/init")
        await wait_for(pilot, lambda: app.runtime.session.title, what="a title")
        assert app.runtime.session.title == "/init"
        [listed] = [s for s in await app.runtime.list_sessions() if s.session.id == app.runtime.session.id]
        assert listed.session.title == "/init"


async def test_one_folder_gives_the_title_the_width_and_title_matches_come_first(tmp_path, utc):  # noqa: F811
    rows = [
        _summary(0, "/init", INIT),  # newest, matches "explore" only in its hidden prompt
        _summary(1, "explain the signer module and how explore agents read it", "explain …"),
    ]
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = SessionPicker(rows)
        app.push_screen(picker)
        await settle(pilot)
        lines = [picker.options.get_option_at_index(i).prompt.plain for i in range(2)]  # type: ignore[union-attr]
        assert "itsdangerous" not in lines[0] and "itsdangerous" not in lines[1]
        assert lines[1].startswith("explain the signer module and how")  # the row's width, not ~12
        assert lines[0].split("\n")[1].strip() == "/init"  # the expansion is not the preview
        assert "itsdangerous" in str(picker.query_one("#picker-title").content)  # named once
        picker.refilter("explore")
        assert [s.session.id for s in picker.shown] == ["s-0001", "s-0000"]


async def test_different_folders_keep_the_folder_column(tmp_path, utc):  # noqa: F811
    rows = [_summary(0, "parser work", "p"), _summary(1, "docs work", "d", cwd="/srv/docs")]
    app = make_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        picker = SessionPicker(rows)
        app.push_screen(picker)
        await settle(pilot)
        assert "/srv/docs" in picker.options.get_option_at_index(1).prompt.plain  # type: ignore[union-attr]
