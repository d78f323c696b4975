"""Which model a subagent talks to.

Claude Code's family aliases (`haiku`, `sonnet`, `opus`) mean the newest model of that family
at the parent's provider, read from litellm's bundled price map; for a parent that is not a
Claude model (no such family there) the parent's own model is used. Any other name is used as
written, like `--model`.

A key goes only to its own provider's endpoint. The user's `api_base` and `api_key` (flag,
CAIRN_* variable or config) are one address and one key for the provider of the model they
chose, yet every request carries them: a child on another provider would post to the user's
address with that provider's key from the environment (`ANTHROPIC_API_KEY` to a local
OpenAI-compatible server), or send the user's key to the other provider. So while either is
set, a child whose model names another provider runs on the parent's model instead: the task
still gets done, as with a family alias the parent's provider lacks, and the user is told why
(refusing would only hand the parent model an error it cannot fix: the cause is the config).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.llm.providers import named_provider

FAMILIES = ("haiku", "sonnet", "opus")
_CLAUDE = re.compile(r"^(?P<route>.*?)claude-(?P<family>haiku|sonnet|opus)-(?P<version>[0-9]+(?:-[0-9]+)?)")
_PLAIN_KEY = re.compile(r"claude-(?P<family>haiku|sonnet|opus)-(?P<version>[0-9]+(?:-[0-9]+)?)")  # no date
UNKNOWN_PROVIDER = ""


@dataclass(frozen=True)
class ChildModel:
    model: str
    note: str = ""  # why the definition's model is not the one used, for the user


def child_model(wanted: str | None, parent_model: str) -> str:
    """The model string for a child whose definition says `wanted` (None or `inherit`: the parent's)."""
    if not wanted or wanted == "inherit":
        return parent_model
    family = wanted.strip().lower()
    if family not in FAMILIES:
        return wanted
    parent = _CLAUDE.match(parent_model)
    if parent is None:
        return parent_model
    newest = _newest(family)
    return f"{parent['route']}{newest}" if newest else parent_model


def choose_child_model(
    wanted: str | None, parent_model: str, *, api_base: str | None, api_key: str | None
) -> ChildModel:
    """The child's model, held to the user's endpoint: with an `api_base` or `api_key` set, a
    model of another provider than the parent's is replaced by the parent's (module docstring)."""
    model = child_model(wanted, parent_model)
    if model == parent_model or not ((api_base or "").strip() or (api_key or "").strip()):
        return ChildModel(model)
    # "" (UNKNOWN_PROVIDER) when nothing says: never taken to match (agent/llm/providers.py).
    theirs, ours = named_provider(model), named_provider(parent_model)
    if theirs == ours and theirs != UNKNOWN_PROVIDER:
        return ChildModel(model)
    what = "api_base" if (api_base or "").strip() else "api_key"
    return ChildModel(
        parent_model,
        note=(
            f"its model {model} is {theirs or 'another provider'}'s, and your {what} is for "
            f"{ours or parent_model}: a key goes only to its own provider"
        ),
    )


def _newest(family: str) -> str | None:
    from agent.llm.cost_map import load_cost_map

    cost_map = load_cost_map()
    if cost_map is None:
        return None
    found = [
        (tuple(int(n) for n in m["version"].split("-")), key)
        for key in cost_map.entries
        if (m := _PLAIN_KEY.fullmatch(key)) and m["family"] == family
    ]
    return max(found)[1] if found else None
