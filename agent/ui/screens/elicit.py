"""The form an MCP server asks the user to fill in (elicitation): its message, one line per field.

A server's `elicitation/create` (agent/mcp/client_requests.py) arrives while its tool runs;
the app shows this modal and the answer goes back to the server. Everything shown comes from
the server (a repository's, perhaps), so it is inert text, and the form says whose it is.
Enter sends (each value checked against its field's type and choices; a required field must
be filled), Esc declines. Kept small: MCP forms are flat (strings, numbers, booleans, enums).
Docked at the bottom like the approval (docked.py): the call that asks stays in view above it.
"""

from __future__ import annotations

import asyncio

from textual.app import App
from textual.binding import Binding
from textual.widgets import Input, Static

from agent.mcp.client_requests import ElicitAnswer, ElicitField, ElicitRequest
from agent.ui.screens.docked import DockedQuestion, PanelBox
from agent.ui.widgets.tool_render import inert

TRUE_WORDS = ("y", "yes", "true", "1", "on")
FALSE_WORDS = ("n", "no", "false", "0", "off", "")


def value_of(field: ElicitField, typed: str) -> str | int | float | bool | None:
    """The typed text as the field's type (None: left empty). Raises ValueError saying why not."""
    typed = typed.strip()
    if field.kind == "boolean":
        if typed.lower() not in TRUE_WORDS + FALSE_WORDS:
            raise ValueError(f"{field.title}: answer yes or no")
        return typed.lower() in TRUE_WORDS
    if not typed:
        if field.required:
            raise ValueError(f"{field.title} is required")
        return None
    if field.choices and typed not in field.choices:
        raise ValueError(f"{field.title}: one of {', '.join(field.choices)}")
    if field.kind == "integer":
        return int(typed)
    if field.kind == "number":
        return float(typed)
    return typed


class ElicitScreen(DockedQuestion[ElicitAnswer]):
    AUTO_FOCUS = "Input"
    BOX_ID = "elicit-box"
    BINDINGS = [Binding("escape", "decline", "Decline"), Binding("enter", "send", "Send", show=False)]
    DEFAULT_CSS = """
    ElicitScreen { align: center bottom; background: $background 0%; }
    #elicit-box {
        width: 100%; height: auto; max-height: 100%; border-top: solid $warning; padding: 0 1; background: $surface;
    }
    #elicit-error { color: $error; }
    .elicit-hint { color: $text-muted; }
    """

    def __init__(self, request: ElicitRequest) -> None:
        super().__init__()
        self.request = request

    def compose(self):
        r = self.request
        with PanelBox(id="elicit-box"):
            yield Static(inert(f"MCP server '{r.server}' asks (its own words):"), markup=False, id="elicit-title")
            yield Static(inert(r.message), markup=False, id="elicit-message")
            for i, field in enumerate(r.fields):
                hint = " / ".join(field.choices) or ("yes / no" if field.kind == "boolean" else field.kind)
                label = f"{field.title}{' *' if field.required else ''}  ({hint})"
                yield Static(inert(label + (f": {field.description}" if field.description else "")), markup=False)
                yield Input(id=f"elicit-field-{i}")
            yield Static("", markup=False, id="elicit-error")
            yield Static("Enter sends · Tab next field · Esc declines", classes="elicit-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_send()

    def action_send(self) -> None:
        """Send the form when every value fits its field; else say which does not."""
        content: dict[str, str | int | float | bool] = {}
        try:
            for i, field in enumerate(self.request.fields):
                value = value_of(field, self.query_one(f"#elicit-field-{i}", Input).value)
                if value is not None:
                    content[field.name] = value
        except ValueError as exc:
            self.query_one("#elicit-error", Static).update(inert(str(exc)))
            return
        self.dismiss(ElicitAnswer("accept", content=content))

    def action_decline(self) -> None:
        self.dismiss(ElicitAnswer("decline", reason="the user declined the form"))


async def ask(app: App, request: ElicitRequest) -> ElicitAnswer:
    """Push the form and wait for the answer; a turn interrupted meanwhile takes it down (cancel)."""
    future: asyncio.Future[ElicitAnswer] = asyncio.get_running_loop().create_future()

    def done(answer: ElicitAnswer | None) -> None:
        if not future.done():
            future.set_result(answer or ElicitAnswer("cancel"))

    screen = ElicitScreen(request)
    app.push_screen(screen, done)
    try:
        return await future
    finally:
        if not future.done() and app.screen is screen:
            screen.dismiss(ElicitAnswer("cancel"))
