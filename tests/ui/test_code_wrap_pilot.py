"""A code block's long line is on screen whole at 80×24 (issue 46, item 14; the walk's 17): it
wraps, in an answer and in the plan review. Textual's code fence scrolled sideways with its
scrollbar hidden, so the line's end was cut with no sign, and copying from the screen gave
wrong code."""

from __future__ import annotations

from agent.session.models import Message
from tests.ui.conftest import wait_for
from tests.ui.test_snapshots import fixed_home, make_app, settle  # noqa: F401 - autouse

END = "wh6tMHxLgJqB6oY1uT73iMlyrOA-END"
CODE = f"""Sign it:

```python
signed = s.sign("my string")        # b'my string.{END}'
```

That is all."""


async def test_a_long_code_line_in_an_answer_wraps_whole_onto_the_screen(tmp_path):
    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        app.chat.show_history(
            [Message(id="u1", role="user", content="how?"), Message(id="a1", role="assistant", content=CODE)]
        )
        await settle(pilot)
        assert END in app.export_screenshot()


async def test_a_long_code_line_in_the_plan_review_wraps_whole_onto_the_screen(tmp_path):
    from agent.ui.screens.plan_review import PlanReviewScreen

    app = make_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.push_screen(PlanReviewScreen("# Plan\n\n" + CODE))
        await wait_for(pilot, lambda: app.screen.query("MarkdownFence"), what="the plan's code block")
        await pilot.pause()
        assert END in app.export_screenshot()
