"""Helpers for the loop tests (the `server` and `open_runtime` fixtures live in tests/conftest.py)."""

from __future__ import annotations


def of_type(events, name):
    return [e for e in events if e.type == name]
