"""What a front end is told when the runtime cannot do what it asked: each says what to do next."""

from __future__ import annotations


class NoModelConfigured(Exception):
    """No model flag/config and no provider key in the environment."""


class SessionNotFound(Exception):
    """--resume named a session that does not exist (or a prefix matching several)."""

    def __init__(self, id_or_prefix: str) -> None:
        super().__init__(f"No session matches '{id_or_prefix}' (give the full id or a unique prefix).")


class RuntimeBusy(Exception):
    """A session change was asked for while a turn runs (interrupt it first)."""

    def __init__(self) -> None:
        super().__init__("The agent is working; press Esc to interrupt it first.")
