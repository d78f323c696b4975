"""ContextRef (seed 004): the only thing the model holds for a context file.

Ids are opaque and stable: derived from what the file is made of (a stored message, a
history range, the tool catalog), never from a path, so the same session always gives the
same ids and an id can only be resolved inside its own session's folder.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel

Kind = Literal["artifact", "history", "catalog"]
ID_DIGITS = 16
MAX_ID_CHARS = 64
# art-: a large tool output; hist-: a condensed range of the conversation; cat-: the tool catalog.
REF_ID = re.compile(rf"^(art|hist|cat)-[0-9a-f]{{{ID_DIGITS}}}$")
PREFIX_KIND: dict[str, Kind] = {"art": "artifact", "hist": "history", "cat": "catalog"}


class ContextRef(BaseModel):
    id: str
    kind: Kind
    mimeType: str | None = None
    byteSize: int | None = None
    createdAt: int
    hint: str


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()[:ID_DIGITS]


def artifact_ref_id(message_id: str) -> str:
    """The ref of a stored tool result's full output."""
    return f"art-{_digest('artifact', message_id)}"


def history_ref_id(first_message_id: str, last_message_id: str) -> str:
    """The ref of a conversation range written out when it was condensed."""
    return f"hist-{_digest('history', first_message_id, last_message_id)}"


def catalog_ref_id(session_id: str) -> str:
    return f"cat-{_digest('catalog', session_id)}"


def kind_of(ref_id: object) -> Kind | None:
    """The kind an id names, or None when it is not a well-formed id (refuse it)."""
    if not isinstance(ref_id, str) or len(ref_id) > MAX_ID_CHARS or not REF_ID.match(ref_id):
        return None
    return PREFIX_KIND[ref_id.split("-", 1)[0]]
