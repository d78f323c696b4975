"""/model [name]: show the model, or switch to another litellm model string."""

from __future__ import annotations

from agent.ui.commands import Command


async def run(app, args: str) -> None:
    name = args.strip()
    if not name:
        current = app.runtime.model if app.runtime else (app.settings.model if app.settings else None)
        text = f"Model: {current}" if current else "No model configured. Set one with /model <provider/name>."
        app.chat.add_notice(text)
        return
    if app.settings is None:  # still starting
        app.notice_not_ready()
        return
    if app.runtime is None:
        # No runtime yet (no model was configured): open one with this model.
        app.settings.model = name
        app.open_runtime()
        return
    app.runtime.set_model(name)
    app.chat.add_notice(f"Model set to {name}")
    app.refresh_status()


COMMAND = Command("model", "show or set the model", run, usage="[name]")
