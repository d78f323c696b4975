"""`/model` without a name: pick one of a custom server's models or those a key is set for
(agent/ui/model_choices.py), window shown, the current one marked and highlighted.

Type to filter (every word must appear), ↑↓ to move, Enter to choose, Esc to close.
Dismisses with the model string, or None.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent.ui.model_choices import ModelChoice
from agent.ui.widgets.status import human_tokens

HINT = "type to filter · ↑↓ move · Enter choose · Esc close"
MAX_SHOWN = 500  # a filter narrows it; thousands of rows would only slow the list


def choice_row(choice: ModelChoice, current: str | None) -> Content:
    window = f"{human_tokens(choice.window)} window" if choice.window else "window unknown"
    parts: list[tuple[str, str] | str] = [choice.model, (f"  {window}", "dim")]
    if choice.model == current:
        parts.append(("  (current)", "italic"))
    return Content.assemble(*parts)


class ModelPicker(ModalScreen[str | None]):
    AUTO_FOCUS = "#model-filter"
    BINDINGS = [
        Binding("escape", "close", "Close", show=False),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("down", "move(1)", show=False, priority=True),
    ]

    def __init__(self, choices: list[ModelChoice], current: str | None, *, title: str | None = None) -> None:
        super().__init__()
        self.choices = choices
        self.current = current
        self.title_text = title or f"Choose a model — {len(choices)} with a key set"

    def compose(self):
        with Vertical(id="picker-box"):
            yield Static(self.title_text, id="picker-title", markup=False)
            yield Input(placeholder="filter: provider or name", id="model-filter")
            yield OptionList(id="picker-list")
            yield Static(HINT, id="picker-hint", markup=False)

    def on_mount(self) -> None:
        self.refilter("")

    def refilter(self, value: str) -> None:
        words = value.lower().split()
        shown = [c for c in self.choices if all(w in c.model.lower() for w in words)][:MAX_SHOWN]
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options([Option(choice_row(c, self.current), id=c.model) for c in shown])
        current = next((i for i, c in enumerate(shown) if c.model == self.current), 0)
        options.highlighted = current if shown else None

    def on_input_changed(self, event: Input.Changed) -> None:
        self.refilter(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        options = self.query_one(OptionList)
        if options.highlighted is not None:
            self.dismiss(options.get_option_at_index(options.highlighted).id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option_id)

    def action_move(self, step: int) -> None:
        options = self.query_one(OptionList)
        if options.option_count:
            index = 0 if options.highlighted is None else options.highlighted + step
            options.highlighted = max(0, min(options.option_count - 1, index))

    def action_close(self) -> None:
        self.dismiss(None)
