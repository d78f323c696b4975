"""Which model a subagent talks to: every `model:` Claude Code accepts maps to one that runs.

A definition's `model` is what Claude Code accepts there: `inherit` (also `default`, or none:
the parent's model), a family alias (`haiku`, `sonnet`, `opus`; `opusplan` and a `[1m]`
suffix read as their family), or a model id. A family alias means the newest model of that
family at the parent's provider, read from litellm's bundled price map (under the parent's
route: `openrouter/anthropic/…`, `vertex_ai/…`); a bare Claude id under a parent reached
through such a route goes the same way. Where the parent's provider has no such model (an
OpenAI parent asked for `haiku`) the child runs on the parent's model and the user is told
why: a definition written for Claude Code must never fail its child (issue 45).

A key goes only to its own provider's endpoint. The user's `api_base` and `api_key` (flag,
CAIRN_* variable or config) are one address and one key for the provider of the model they
chose, yet every request carries them: a child on another provider would post to the user's
address with that provider's key from the environment (`ANTHROPIC_API_KEY` to a local
OpenAI-compatible server), or send the user's key to the other provider. So while either is
set, a child whose model names another provider runs on the parent's model instead; without
them, a model of another provider runs only when that provider's key variable is set (it
would fail without one). In each case the task still gets done and the user is told why
(refusing would only hand the parent model an error it cannot fix: the cause is the config).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from agent.llm.providers import lookup, named_provider, provider_of

FAMILIES = ("haiku", "sonnet", "opus")
INHERIT = ("inherit", "default")  # Claude Code's words for "the parent's model"
FAMILY_ALIASES = {"opusplan": "opus"}  # Claude Code's plan-on-Opus setting: Opus for an agent
_CLAUDE = re.compile(r"^(?P<route>.*?)claude-(?P<family>haiku|sonnet|opus)-(?P<version>[0-9]+(?:-[0-9]+)?)")
_PLAIN_KEY = re.compile(r"claude-(?P<family>haiku|sonnet|opus)-(?P<version>[0-9]+(?:-[0-9]+)?)")  # no date
UNKNOWN_PROVIDER = ""


@dataclass(frozen=True)
class ChildModel:
    model: str
    note: str = ""  # why the definition's model is not the one used, for the user


def child_model(wanted: str | None, parent_model: str) -> ChildModel:
    """The model for a child whose definition says `wanted`, at the parent's provider where it
    names a family; the parent's, with a note, where that provider has none."""
    raw = (wanted or "").strip()
    if not raw or raw.lower() in INHERIT:
        return ChildModel(parent_model)
    if raw.lower().endswith("[1m]"):  # Claude Code's 1M-context suffix: a request option, not a model name
        raw = raw[: -len("[1m]")]
    alias = FAMILY_ALIASES.get(raw.lower(), raw.lower())
    parent = _CLAUDE.match(parent_model)
    if alias in FAMILIES:
        if parent is None:
            return ChildModel(
                parent_model, note=f"`{raw}` is a Claude model family and {parent_model} is not a Claude model"
            )
        newest = _newest(alias, parent["route"])
        if newest is None:
            return ChildModel(parent_model, note=f"no {alias} model is known at {parent['route'] or 'your provider'}")
        return ChildModel(newest)
    route = parent["route"] if parent is not None else ""
    if "/" not in raw and route.endswith("/") and _CLAUDE.match(raw):
        return ChildModel(route + raw)  # a bare Claude id, through the route the parent's Claude goes
    return ChildModel(raw)


def choose_child_model(
    wanted: str | None,
    parent_model: str,
    *,
    api_base: str | None,
    api_key: str | None,
    environ: Mapping[str, str] | None = None,
) -> ChildModel:
    """The child's model, held to the user's endpoint and keys (module docstring)."""
    chosen = child_model(wanted, parent_model)
    model = chosen.model
    if model == parent_model:
        return chosen
    # "" (UNKNOWN_PROVIDER) when nothing says: never taken to match (agent/llm/providers.py).
    theirs, ours = named_provider(model), named_provider(parent_model)
    if theirs == ours and theirs != UNKNOWN_PROVIDER:
        return chosen
    if (api_base or "").strip() or (api_key or "").strip():
        what = "api_base" if (api_base or "").strip() else "api_key"
        return ChildModel(
            parent_model,
            note=(
                f"its model {model} is {theirs or 'another provider'}'s, and your {what} is for "
                f"{ours or parent_model}: a key goes only to its own provider"
            ),
        )
    env = os.environ if environ is None else environ
    variables = lookup(provider_of(model)).key_variables
    if variables and not any(env.get(name, "").strip() for name in variables):
        return ChildModel(parent_model, note=f"its model {model} needs {variables[0]}, which is not set")
    return chosen


def _newest(family: str, route: str) -> str | None:
    """The newest `claude-<family>-<version>` under `route` in the price map (a bare name for
    the provider bare Claude names belong to)."""
    from agent.llm.cost_map import load_cost_map

    cost_map = load_cost_map()
    if cost_map is None:
        return None
    bare_home = f"{named_provider('claude-' + family)}/"
    found: list[tuple[tuple[int, ...], str]] = []
    for key in cost_map.entries:
        if key.startswith(route) and (m := _PLAIN_KEY.fullmatch(key[len(route) :])):
            chosen = key
        elif route.lower() == bare_home and (m := _PLAIN_KEY.fullmatch(key)):
            chosen = route + key
        else:
            continue
        if m["family"] == family:
            found.append((tuple(int(n) for n in m["version"].split("-")), chosen))
    return max(found)[1] if found else None
