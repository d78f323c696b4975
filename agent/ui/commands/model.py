"""/model [name]: switch to another litellm model string; without one, pick from the models a key is set for."""

from __future__ import annotations

from agent.ui.commands import Command


async def run(app, args: str) -> None:
    name = args.strip()
    if not name:
        from agent.ui import sessions

        sessions.start(app, pick_model)
        return
    await use_model(app, name)


async def pick_model(app) -> None:
    """No name: a picker of the models a key is set for (none: say how to set one)."""
    import asyncio

    from agent.ui.model_choices import available_models, with_known_windows
    from agent.ui.screens.model_picker import ModelPicker

    current = app.runtime.model if app.runtime else (app.settings.model if app.settings else None)
    own_key = bool(app.settings and app.settings.api_key)
    choices = await asyncio.to_thread(available_models, current, own_key)
    choices = with_known_windows(choices, app.runtime.known_windows() if app.runtime else {})
    if not choices:
        text = f"Model: {current}. " if current else "No model configured. "
        app.chat.add_notice(
            text + "No provider key is set (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) to pick "
            "from; set one with /model <provider/name>."
        )
        return
    chosen = await app.push_screen_wait(ModelPicker(choices, current))
    app.prompt.focus()
    if chosen and chosen != current:
        await use_model(app, chosen)


async def use_model(app, name: str) -> None:
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


COMMAND = Command("model", "choose the model (a picker without a name)", run, usage="[name]")
