"""/model [name]: switch to another litellm model string; without one, pick from the models a key is set for.

A name litellm cannot route to a provider (no known `provider/` prefix, not in its model
list) is refused at once, with the nearest names litellm knows, instead of failing at the
next prompt. The check reads litellm's bundled model list through agent/llm/cost_map.py (no
litellm import) and mirrors `litellm.get_llm_provider`: a known provider prefix, a listed
name, a routing rule of the map (`claude-*` → anthropic), an OpenAI fine-tune (`ft:gpt-4…`).
"""

from __future__ import annotations

import difflib
import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agent.runtime.ops import SetModel
from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from collections.abc import Mapping

    from agent.ui.host import Host
    from agent.ui.model_choices import ModelChoice

NEAREST = 3  # names offered for one that is refused or unknown
NEAREST_CUTOFF = 0.6  # difflib's similarity, 0..1, below which a name is no suggestion
# For a name that routes but is not listed (a new model, a server's own name) only a near
# miss is worth a note: `anthropic/claude-sonet-4-5`, not `openai/fake` → `openai/o3`.
TYPO_CUTOFF = 0.85
# Model modes a chat agent can use (the map also lists embedding, image, audio models).
CHAT_MODES = frozenset({"chat", "responses"})


@dataclass(frozen=True)
class ModelCheck:
    """What litellm's bundled model list says about a name given to `/model`."""

    name: str
    routable: bool  # litellm can tell which provider serves it
    known: bool  # the list has it (so its window and price are known)
    nearest: tuple[str, ...] = ()

    @property
    def refusal(self) -> str | None:
        """Why the name is refused (None: it is not)."""
        if self.routable:
            return None
        hint = f" Nearest known: {', '.join(self.nearest)}." if self.nearest else ""
        return (
            f"Unknown model {self.name!r}: litellm cannot tell which provider serves it. Write it as "
            f"provider/model (e.g. anthropic/claude-sonnet-4-5), or openai/<name> for an OpenAI-compatible "
            f"server.{hint}"
        )

    @property
    def note(self) -> str | None:
        """For a name that routes but is not listed: the listed names it is nearest to."""
        if not self.routable or self.known or not self.nearest:
            return None
        return f"{self.name} is not in litellm's model list; did you mean {' or '.join(self.nearest)}?"


def check_model_name(name: str) -> ModelCheck:
    """Can litellm route `name`, is it listed, and which listed chat models are nearest."""
    from agent.llm.cost_map import load_cost_map

    cmap = load_cost_map()
    if cmap is None:  # no bundled list to check against: litellm will say
        return ModelCheck(name, routable=True, known=True)
    prefix, slash, rest = name.partition("/")
    key = cmap.key_for(name)
    routable = bool(
        (slash and rest and prefix in cmap.providers)
        or (key is not None and cmap.entries[key].get("litellm_provider"))
        or any(pattern.search(name) for pattern, _ in cmap.routing)
        or "ft:gpt-3.5-turbo" in name
        or "ft:gpt-4" in name
    )
    prefixed, bare = _chat_models()
    known = name.lower() in prefixed or key is not None
    if routable and known:
        return ModelCheck(name, routable=True, known=True)
    lowered = name.lower()
    cutoff = TYPO_CUTOFF if routable else NEAREST_CUTOFF
    if slash:
        matches = difflib.get_close_matches(lowered, prefixed, NEAREST, cutoff)
        nearest = [prefixed[m] for m in matches]
    else:
        matches = difflib.get_close_matches(lowered, bare, NEAREST * 2, cutoff)
        nearest = [model for m in matches for model in bare[m]]
    return ModelCheck(name, routable=routable, known=known, nearest=tuple(dict.fromkeys(nearest))[:NEAREST])


@functools.cache
def _chat_models() -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """litellm's chat models as `provider/name` (by lower-cased form), and by the bare name."""
    from agent.llm.cost_map import load_cost_map

    cmap = load_cost_map()
    prefixed: dict[str, str] = {}
    bare: dict[str, list[str]] = {}
    for key, info in cmap.entries.items() if cmap is not None else ():
        provider = info.get("litellm_provider")
        if not isinstance(provider, str) or info.get("mode") not in CHAT_MODES:
            continue
        model = key if key.startswith(f"{provider}/") else f"{provider}/{key}"
        prefixed.setdefault(model.lower(), model)
        same = bare.setdefault(model.split("/", 1)[1].lower(), [])
        # The provider litellm routes the bare name to first (`claude-…` → anthropic), then resellers.
        same.insert(0 if "/" not in key else len(same), model)
    return prefixed, {name: tuple(models) for name, models in bare.items()}


async def run(app: Host, args: str) -> None:
    name = args.strip()
    if not name:
        from agent.ui import sessions

        sessions.start(app, pick_model)
        return
    await use_model(app, name)


async def pick_model(app: Host) -> None:
    """No name: a picker of the models a key is set for (none: say how to set one)."""
    import asyncio

    from agent.ui.model_choices import available_models, served_first, with_known_windows
    from agent.ui.screens.model_picker import ModelPicker

    current = app.runtime.model if app.runtime else (app.settings.model if app.settings else None)
    own_key = bool(app.settings and app.settings.api_key)
    api_base = (app.settings.api_base or "") if app.settings else ""
    catalogue = await asyncio.to_thread(available_models, current, own_key)
    served = None
    if api_base:  # a custom server: what it serves, asked off the event loop, a bounded wait
        from agent.llm.models import server_models

        key = app.settings.api_key if app.settings else None
        served = await asyncio.to_thread(server_models, api_base, key)
    offered = served_first(served, catalogue, current, api_base)
    windows = app.runtime.known_windows() if app.runtime else {}
    choices = with_known_windows(offered.choices, windows) if served is None else _windows(offered.choices, windows)
    if not choices:
        text = f"Model: {current}. " if current else "No model configured. "
        app.chat.add_notice(
            text + "No provider key is set (e.g. ANTHROPIC_API_KEY, OPENAI_API_KEY) to pick "
            "from; set one with /model <provider/name>."
        )
        return
    chosen = await app.push_screen_wait(ModelPicker(choices, current, title=offered.title))
    app.prompt.focus()
    if chosen and chosen != current:
        await use_model(app, chosen)


def _windows(choices: list[ModelChoice], windows: Mapping[str, int]) -> list[ModelChoice]:
    """The windows the servers reported, in place (the server's order kept)."""
    from agent.ui.model_choices import ModelChoice

    return [ModelChoice(c.model, windows.get(c.model, c.window)) for c in choices]


async def use_model(app: Host, name: str) -> None:
    import asyncio

    if app.settings is None:  # still starting
        app.notice_not_ready()
        return
    check = await asyncio.to_thread(check_model_name, name)
    if check.refusal is not None:
        app.chat.add_error(check.refusal)
        return
    if check.note is not None and not app.settings.api_base:  # a custom server's names are its own
        app.chat.add_notice(check.note, kind="warning")
    if app.runtime is None:
        # No runtime yet (no model was configured): open one with this model.
        app.settings.model = name
        app.open_runtime()
        return
    app.runtime.submit(SetModel(name))
    app.chat.add_notice(f"Model set to {name}")
    app.refresh_status()


COMMAND = Command("model", "choose the model (a picker without a name)", run, usage="[name]")
