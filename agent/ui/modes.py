"""The permission modes in the TUI: Shift+Tab switches, the status bar shows, exit-plan-mode asks.

The mode lives in the runtime (agent/tools/modes.py says what each one lets run, and that it
is kept in memory for this launch only); the app switches it and shows what the runtime
reports (a `ModeChanged` event, drawn by agent/ui/event_render.py, also when the user approved
a plan).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.runtime.ops import SetMode

if TYPE_CHECKING:
    from textual.app import App

    from agent.runtime.runtime import Runtime
    from agent.tools.modes import PlanReview
    from agent.ui.widgets.chat import ChatView
    from agent.ui.widgets.status import StatusBar

    _AppBase = App[Any]  # for the checker only: the mixin's methods run on CairnApp
else:
    _AppBase = object

MODE_FLASH_SECONDS = 3.0
# Short enough for the status line at 80 columns (agent/tools/modes.py MODE_INFO says it in full).
HINTS = {
    "default": "file changes and commands ask",
    "acceptEdits": "file edits run unasked, commands ask",
    "plan": "read-only, cairn plans and you approve",
}


class ModeActions(_AppBase):
    """Mixed into CairnApp: Shift+Tab and the plan review."""

    if TYPE_CHECKING:  # what CairnApp provides
        runtime: Runtime | None

        @property
        def status(self) -> StatusBar: ...

        @property
        def chat(self) -> ChatView: ...

    def action_cycle_mode(self) -> None:
        """default → acceptEdits → plan → default; effective at the next approval check."""
        from agent.tools.modes import MODE_INFO, next_mode
        from agent.ui.widgets.header import SessionHeader

        runtime = self.runtime
        if runtime is None:
            self.status.flash("The mode can be switched once cairn has started", MODE_FLASH_SECONDS)
            return
        mode = next_mode(runtime.mode)
        runtime.submit(SetMode(mode))  # its ModeChanged event puts the mode in the status bar
        self.query_one("#header", SessionHeader).set_mode(mode)  # shown while the chat is empty
        self.status.flash(f"{MODE_INFO[mode][0]} mode: {HINTS[mode]}", MODE_FLASH_SECONDS)

    async def review_plan(self, plan: str) -> PlanReview:
        """The runtime's `plan_review`: exit-plan-mode's plan in a modal, the user's answer."""
        from agent.ui.screens.plan_review import review

        answer = await review(self, plan)
        if answer.feedback:  # what the user said goes to the model in the tool's result: shown as theirs
            self.chat.add_user(answer.feedback)
        return answer
