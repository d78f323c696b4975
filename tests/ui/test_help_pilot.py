"""Issue 46 item 16 (walk 19): /help opens at its top (its commands), not at its end (the
keys), and lists every dialog's keys as their bindings are: the approval's y/a/p/n/t, the plan
review's a/y/n and its scrolling, the trust question's t/n."""

from __future__ import annotations

from agent.ui.app import CairnApp
from agent.ui.commands import help_text
from agent.ui.screens.approval import ApprovalScreen
from agent.ui.screens.plan_review import PlanReviewScreen
from agent.ui.widgets.chat import Notice
from tests.ui.conftest import run_prompt, send, wait_for, wait_ready

SIZE = (80, 24)


def _keys(screen_class) -> set[str]:
    return {b.key for b in screen_class.BINDINGS if len(b.key) == 1}


def test_help_lists_every_dialogs_letter_keys():
    keys_part = help_text().split("\nKeys\n", 1)[1]
    approval = next(line for line in keys_part.splitlines() if "in an approval: yes once" in line)
    denial = next(line for line in keys_part.splitlines() if "in an approval: no" in line)
    plan = next(line for line in keys_part.splitlines() if "in a plan review:" in line)
    for key in _keys(ApprovalScreen):
        assert f" {key} " in f" {approval.split('in an')[0]} {denial.split('in an')[0]} ", key
    for key in _keys(PlanReviewScreen):
        assert f" {key} " in f" {plan.split('in a')[0]} ", key
    assert "in the trust question" in keys_part and "plan review: scroll" in " ".join(keys_part.split()).replace(
        "approval or plan review", "plan review"
    )


async def test_help_opens_at_its_top(make_settings, server):
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        for _ in range(3):  # something above it, so the chat is scrolled when /help arrives
            await run_prompt(pilot, "/status")
        await send(pilot, "/help")
        chat = app.chat
        [notice] = [n for n in chat.query(Notice) if n.text.startswith("Commands")]
        await wait_for(pilot, lambda: notice.region.height > 0, what="/help on screen")
        await pilot.pause()
        top = notice.virtual_region.y
        assert chat.max_scroll_y > top  # longer than what is left below it: it could open at its end
        at_top = lambda: top - 1 <= round(chat.scroll_y) <= top  # noqa: E731 - its margin may show
        await wait_for(pilot, at_top, what="the list's top at the view's top")
        await pilot.pause(0.2)
        assert at_top()  # and it stays there
