"""Issue 46, item 9 at 80×24: the approval is a panel docked under the chat (the model's words
above it stay in view), each choice on one row however long the scope, and a diff's long
lines hang under their text, numbered."""

from __future__ import annotations

from rich.console import Console

from agent.tools.permissions import ApprovalRequest
from agent.ui.app import CairnApp
from agent.ui.screens.approval import LABEL_COLUMNS, ApprovalScreen, choice_labels
from agent.ui.screens.diff_view import NumberedDiff
from agent.ui.widgets.chat import AssistantMessage
from tests.fakes.llm_server import text, tool_calls
from tests.ui.conftest import READY_TIMEOUT, send, wait_for, wait_ready

LONG = "python -m pytest tests/test_signer.py::test_sha256_default_digest_is_used_everywhere -x -q"
EXPLANATION = "EXPLAINED: the tests show the digest; let me run them."


def test_long_scopes_are_cut_inside_their_quotes_and_each_label_fits():
    request = ApprovalRequest(
        tool="terminal-execute", kind="command", title="Run command", detail=LONG, key="k", scopes=["command:" + LONG]
    )
    labels = dict(choice_labels(request))
    assert all(len(label) <= LABEL_COLUMNS for label in labels.values())
    assert labels["always"].startswith("Yes, always for `python -m pytest tests/")
    assert labels["always"].endswith("…` commands this session  (a)")
    assert labels["always_project"].endswith("…` commands in this project  (p)")


def test_a_long_diff_line_hangs_under_its_text_with_its_number():
    diff = "@@ -9,2 +9,2 @@\n-x = 1\n+x = " + "1 + " * 20 + "1\n unchanged"
    console = Console(width=40, color_system=None, record=True)
    console.print(NumberedDiff(diff))
    rows = console.export_text().splitlines()
    assert rows[0].startswith("   @@ -9,2")
    assert rows[1] == " 9 -x = 1"
    assert rows[2].startswith(" 9 +x = 1 + 1")
    assert rows[3].startswith("    1 + 1")  # under the text, past " 9 +"
    assert rows[-1] == "10  unchanged"


async def test_the_approval_is_docked_under_the_chat_with_every_choice_on_one_row(make_settings, server):
    server.add(tool_calls([("c1", "terminal-execute", {"command": LONG})], text=EXPLANATION), text("No."))
    app = CairnApp(make_settings())
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.chat.add_notice("\n".join(f"earlier line {i}" for i in range(16)))  # the chat is full
        await send(pilot, "run the tests")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen), READY_TIMEOUT, "the approval")
        screen = app.screen
        box, choices = screen.query_one("#approval-box"), screen.query_one("#approval-choices")
        await wait_for(pilot, lambda: box.region.bottom == 24 and box.region.width == 80, what="a bottom panel")
        assert choices.virtual_size.height == choices.option_count  # no label wraps
        assert box.region.y >= 6
        [said] = [w for w in app.chat.query(AssistantMessage) if EXPLANATION in w.text]
        await wait_for(
            pilot,
            lambda: said.region.height > 0 and said.region.y >= 0 and said.region.bottom <= box.region.y,
            what="the model's explanation above the panel, in view",
        )
        await wait_for(pilot, lambda: app.chat.region.bottom <= box.region.y, what="the chat ending above the panel")
        await pilot.press("n")
        await wait_for(pilot, lambda: not app.turn_running, READY_TIMEOUT, "the turn to finish")
        await app.workers.wait_for_complete()
