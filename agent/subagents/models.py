"""Which model a subagent talks to: Claude Code's family aliases (`haiku`, `sonnet`, `opus`)
mean the newest model of that family at the parent's provider, read from litellm's bundled
price map; for a parent that is not a Claude model (no such family there) the parent's own
model is used. Any other name is used as written, like `--model`."""

from __future__ import annotations

import re

FAMILIES = ("haiku", "sonnet", "opus")
_CLAUDE = re.compile(r"^(?P<route>.*?)claude-(?P<family>haiku|sonnet|opus)-(?P<version>[0-9]+(?:-[0-9]+)?)")
_PLAIN_KEY = re.compile(r"claude-(?P<family>haiku|sonnet|opus)-(?P<version>[0-9]+(?:-[0-9]+)?)")  # no date


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
