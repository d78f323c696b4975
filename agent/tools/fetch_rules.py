"""What "always" remembers for web-fetch: a host, and `fetch:*.domain` rules covering a domain's hosts.

Kept apart from the approval decision (agent/tools/permissions.py) because web-fetch builds
its keys with it and `allowed-tools` (agent/commands/allowed_tools.py) turns `WebFetch(domain:…)`
into the same keys.
"""

from __future__ import annotations

FETCH_PREFIX = "fetch:"


def fetch_key(host: str) -> str:
    """What "always" remembers for a fetch: the host, lower-case, without a trailing dot."""
    return FETCH_PREFIX + host.lower().rstrip(".")


def fetch_covered(key: str, keys: set[str]) -> str | None:
    """The rule among `keys` covering the fetch `key`: the same host, or `fetch:*.domain`
    for any host under that domain (not the domain itself: `fetch:example.com` says that)."""
    if key in keys:
        return key
    host = key[len(FETCH_PREFIX) :]
    labels = host.split(".")
    for i in range(1, len(labels)):
        wildcard = FETCH_PREFIX + "*." + ".".join(labels[i:])
        if wildcard in keys:
            return wildcard
    return None
