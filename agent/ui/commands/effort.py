"""/effort [off|minimal|low|medium|high|default]: how much a model that reasons thinks first.

Set for the rest of this session (the request builder reads it on every request, so the next
one asks for it), over the configured efforts (`--effort` included); `default` goes back to them
(or to the model's own). Without an argument it says what the next request asks for, and the
choices. The status bar shows the effort while one is set. A model litellm's price map does
not list as reasoning is sent no effort at all: that is said rather than left for the user to
wonder why nothing changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.runtime.ops import SetEffort
from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.runtime.runtime import Runtime
    from agent.ui.host import Host

CHOICES = ("off", "minimal", "low", "medium", "high", "default")


def _caveat(runtime: Runtime) -> str:
    """Why the effort set may not be what the model gets ("" when it is)."""
    from agent.llm.reasoning import sent_effort

    model = runtime.model
    if runtime.effort(model) is not None and sent_effort(runtime.settings, model, runtime.chosen_effort) is None:
        return (
            f" {model} is not listed as a reasoning model, so no effort is sent to it"
            f' (supports_reasoning = true in [models."{model}"] sends it).'
        )
    return ""


def _current(runtime: Runtime) -> str:
    effort = runtime.effort()
    return effort if effort is not None else "the model's default"


async def run(app: Host, args: str) -> None:
    choice = args.strip().lower()
    if choice and choice not in CHOICES:
        app.chat.add_notice(f"Unknown effort {args.strip()!r}. Usage: /effort [{'|'.join(CHOICES)}]", kind="warning")
        return
    if app.runtime is None:
        app.notice_not_ready()
        return
    runtime = app.runtime
    if not choice:
        app.chat.add_notice(
            f"Effort: {_current(runtime)}.{_caveat(runtime)} Choices: {', '.join(CHOICES)} (/effort <choice>)."
        )
        return
    runtime.submit(SetEffort(None if choice == "default" else choice))
    app.refresh_status()
    app.chat.add_notice(f"Effort for this session: {_current(runtime)}.{_caveat(runtime)}")


COMMAND = Command("effort", "how much a reasoning model thinks first (off … high, default)", run, usage="[level]")
