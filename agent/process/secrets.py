"""Secrets cairn holds (API keys): remembered, redacted from everything shown or logged,
kept out of the commands the model runs and out of what `ps` shows.

Standard library only: the log filter and the CLI use it before anything heavy loads.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

_SECRETS: set[str] = set()
_SECRET_ENV_SUFFIXES = ("_API_KEY", "_TOKEN", "_SECRET", "_ACCESS_KEY", "_SECRET_KEY")
MIN_SECRET_CHARS = 8  # shorter values would redact ordinary words


def remember_secret(value: str | None) -> None:
    """A value cairn holds that must never be written anywhere (see agent/cli.py logging)."""
    if value and len(value) >= MIN_SECRET_CHARS:
        _SECRETS.add(value)


def known_secrets() -> list[str]:
    """Remembered values plus key-like environment variables, longest first."""
    found = set(_SECRETS)
    for name, value in os.environ.items():
        if name.upper().endswith(_SECRET_ENV_SUFFIXES) and value and len(value) >= MIN_SECRET_CHARS:
            found.add(value)
    return sorted(found, key=len, reverse=True)


REDACTED = "[REDACTED]"
# Key shapes redacted even when cairn never saw the value (a provider's own key in a log).
_KEY_PATTERNS = (
    (re.compile(r"\b(sk-(?:ant-|proj-)?)[A-Za-z0-9_\-]{16,}"), r"\1" + REDACTED),
    (re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._\-~+/=]{8,}"), r"\1" + REDACTED),
    (
        re.compile(r"(?i)((?:api[_-]?key|x-api-key|x-goog-api-key)[\"']?\s*[:=]\s*[\"']?)[^\"'\s,}]{8,}"),
        r"\1" + REDACTED,
    ),
)


def redact_secrets(text: str) -> str:
    """`text` with every known secret and every key-shaped value replaced by [REDACTED]."""
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern, replacement in _KEY_PATTERNS:
        text = pattern.sub(replacement, text)
    return text


# cairn's own key variable: never handed to a command the model runs.
OWN_KEY_VARIABLES = ("CAIRN_API_KEY",)


def command_environment(environ: dict[str, str]) -> dict[str, str]:
    """`environ` for a command the model runs: without cairn's own key variable and without
    any variable holding a key cairn was given or uses (the provider's variable, e.g.
    OPENAI_API_KEY, is remembered when cairn relies on it: agent/runtime/runtime.py, llm/client.py).
    A model's command has no business with the key cairn talks to its provider with."""
    secrets = _SECRETS
    return {name: value for name, value in environ.items() if name not in OWN_KEY_VARIABLES and value not in secrets}


def hide_from_proc(values: Iterable[str | None]) -> bool:
    """Overwrite `values` where they sit in this process's original argv and environment
    memory: what /proc/<pid>/cmdline (anyone: `ps`) and /proc/<pid>/environ (the same user,
    so a model's command) show. `--api-key KEY` then reads `--api-key ******` in `ps`.

    sys.argv and os.environ are copies made at start-up and keep the values (litellm reads
    the key from there); commands get their environment from os.environ through
    `command_environment`. Linux only (the areas' addresses come from /proc/self/stat,
    fields 48-51); elsewhere, or if they cannot be read, nothing changes. True if some
    value was overwritten."""
    import sys

    secrets = {v.encode() for v in values if v and len(v) >= MIN_SECRET_CHARS}
    if not secrets or not sys.platform.startswith("linux"):
        return False
    try:
        stat = Path("/proc/self/stat").read_bytes()
        fields = stat[stat.rindex(b")") + 2 :].split()  # from field 3 on: the name may hold spaces
        arg_start, arg_end, env_start, env_end = (int(f) for f in fields[45:49])
    except (OSError, ValueError):
        return False
    import ctypes

    hidden = False
    for start, end in ((arg_start, arg_end), (env_start, env_end)):
        if not 0 < start < end:
            continue
        area = ctypes.string_at(start, end - start)
        for secret in secrets:
            at = area.find(secret)
            while at != -1:
                ctypes.memset(start + at, ord("*"), len(secret))
                hidden = True
                at = area.find(secret, at + len(secret))
    return hidden
