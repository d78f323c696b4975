"""Snapshots of the modal screens and /context (issue 18), as tests/ui/test_snapshots.py's.

Times are fixed instants long past, drawn in UTC (the `utc` fixture), so a date shows
instead of "5 min ago" and the pictures never depend on when or where they are taken.
Accept a deliberate change with `pytest tests/ui/test_snapshots_modals.py --snapshot-update`.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agent.session.models import Session, SessionSummary
from tests.ui.test_snapshots import SIZES, conversation, fixed_home, make_app, settle  # noqa: F401 - autouse

MARCH_2024_MS = 1_709_631_000_000  # 2024-03-05 09:30 UTC
MINUTE_MS = 60_000


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def summaries() -> list[SessionSummary]:
    rows = [
        ("Fix the parser's generics", "Why does parse() return a Vec<T>?", 14, "/srv/projects/parser"),
        ("Lexer tokens", "make the lexer return a Vec<Token> too", 6, "/srv/projects/parser"),
        ("", "write a README section about the Keys table", 2, "/srv/projects/docs"),
    ]
    return [
        SessionSummary(
            session=Session(
                id=f"s-{i:04d}",
                title=title,
                cwd=cwd,
                created_at=MARCH_2024_MS,
                updated_at=MARCH_2024_MS - i * 86_400_000,
            ),
            first_prompt=prompt,
            message_count=count,
        )
        for i, (title, prompt, count, cwd) in enumerate(rows)
    ]


@pytest.mark.parametrize("size", SIZES)
def test_session_picker(snap_compare, tmp_path, utc, size):
    async def run_before(pilot) -> None:
        from agent.ui.screens.picker import SessionPicker

        pilot.app.push_screen(SessionPicker(summaries(), current_id="s-0000"))
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_session_picker_one_folder(snap_compare, tmp_path, utc, size):
    """Every session in one folder (the usual case): the folder is named once, in the picker's
    title, and the titles get the row's width (issue 46 item 11)."""

    async def run_before(pilot) -> None:
        from agent.ui.screens.picker import SessionPicker

        pilot.app.push_screen(SessionPicker([one(s) for s in summaries()], current_id="s-0000"))
        await settle(pilot)

    def one(summary: SessionSummary) -> SessionSummary:
        session = summary.session.model_copy(update={"cwd": "/srv/projects/parser"})
        return summary.model_copy(update={"session": session})

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_rewind_menu(snap_compare, tmp_path, utc, size):
    async def run_before(pilot) -> None:
        from agent.session.branches import SessionBranch
        from agent.session.rewind import RewindPoint
        from agent.ui.screens.rewind import RewindScreen

        points = [
            RewindPoint(
                message_id="u2",
                created_at=MARCH_2024_MS + 5 * MINUTE_MS,
                text="Run the tests.",
                preview="Run the tests and the type check.",
                files_changed=2,
            ),
            RewindPoint(
                message_id="u1",
                created_at=MARCH_2024_MS,
                text="Why?",
                preview="Why does parse() return a Vec<T>?",
                files_changed=0,
            ),
        ]
        branches = [
            SessionBranch(
                leaf_id="b1",
                created_at=MARCH_2024_MS - MINUTE_MS,
                messages=6,
                preview="make the lexer return a Vec<Token> too",
            )
        ]
        pilot.app.chat.show_history(conversation())
        await settle(pilot)
        pilot.app.push_screen(RewindScreen(points, branches))
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


def context_report() -> dict:
    """A /context report as agent/context/inspect.py builds it (fixed figures)."""
    return {
        "session_id": "s-0000",
        "model": "openai/fake-model",
        "tokens": {"total": 24_310, "system": 2_104, "tools": 3_890, "messages": 18_316},
        "window": 128_000,
        "window_source": "price map",
        "threshold": 96_000,
        "allowed": 110_000,
        "passes": [
            {"name": "file_reads", "changed": 2, "tokens_before": 26_020, "tokens_after": 24_900},
            {"name": "terminal_outdated", "changed": 1, "tokens_before": 24_900, "tokens_after": 24_310},
        ],
        "events": [],
        "refs": [],
        "cache": {"policy": "auto", "ttl_ms": 300_000, "held": 0, "held_tokens": 0, "applying": 0, "reason": ""},
        "calibration": {"estimated": 23_950, "reported": 24_102},
        "last_request": None,
    }


@pytest.mark.parametrize("size", SIZES)
def test_context_report(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.context.inspect import format_report

        pilot.app.chat.show_history(conversation()[:2])
        await settle(pilot)
        pilot.app.chat.add_notice(format_report(context_report()), kind="help")  # what /context adds
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_trust_question(snap_compare, tmp_path, size):
    async def run_before(pilot) -> None:
        from agent.settings.trust import ProjectTrust
        from agent.ui.screens.trust import TrustScreen

        pending = ProjectTrust(
            folder=Path("/srv/projects/parser"),
            config=Path("/srv/projects/parser/.cairn/config.toml"),
            sha256="0" * 64,
            notice="",
            items=[
                ("permissions.allow", '["git push", "rm -rf build"]'),
                ("api_base", "https://llm.example.com/v1"),
                ("api_key", "sk-…f3a9"),
                ("web.allow_private", "true"),
                ("mcp.servers.db.command", "dbtool"),
            ],
        )
        pilot.app.push_screen(TrustScreen(pending))
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)


@pytest.mark.parametrize("size", SIZES)
def test_command_approval_with_a_long_scope(snap_compare, tmp_path, size):
    """Issue 46, item 9: docked under the chat, every choice on one row at 80 columns."""

    async def run_before(pilot) -> None:
        from agent.tools.permissions import ApprovalRequest
        from agent.ui.screens.approval import ApprovalScreen

        pilot.app.chat.show_history(conversation()[:2])
        await settle(pilot)
        command = "python -m pytest tests/test_signer.py::test_sha256_default_digest -x -q"
        request = ApprovalRequest(
            tool="terminal-execute",
            kind="command",
            title="[general agent: TASK-C: run the signer tests] Run command",
            detail=command,
            key="command:" + command,
            scopes=["command:" + command],
        )
        pilot.app.push_screen(ApprovalScreen(request))
        await settle(pilot)

    assert snap_compare(make_app(tmp_path), terminal_size=size, run_before=run_before)
