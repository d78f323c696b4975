"""tiktoken's encoding, kept ready to load in a file of the data folder.

Why: tiktoken builds an encoding from its BPE file by base64-decoding every one of its
200,000 ranks (~0.3 s of CPU, ~0.6 s on a loaded machine), on the way to the first request
of every launch. The decoded ranks are written once with `marshal` (the user's own data
folder, trusted as the database beside it is) and read back in a few tens of ms; the
encoding is then built with tiktoken's public constructor from the same arguments. Any
failure (a read-only folder, a damaged or foreign file) falls back to tiktoken's own load.
"""

from __future__ import annotations

import logging
import marshal
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CACHE_FOLDER = "cache"
_FIELDS = ("name", "pat_str", "mergeable_ranks", "special_tokens", "explicit_n_vocab")


def cache_file(folder: Path, name: str, version: str) -> Path:
    return folder / CACHE_FOLDER / f"tiktoken-{name}-{version}.marshal"


def load(name: str, folder: Path | None):
    """The encoding `name`; `folder`: the data folder (None: no cache)."""
    import tiktoken

    path = cache_file(folder, name, tiktoken.__version__) if folder is not None else None
    if path is not None:
        kwargs = _read(path, name)
        if kwargs is not None:
            return tiktoken.Encoding(**kwargs)
    kwargs = _constructor_arguments(name)
    if kwargs is None:  # a name only a plugin tiktoken finds knows: its own way
        return tiktoken.get_encoding(name)
    if path is not None:
        _write(path, kwargs)
    return tiktoken.Encoding(**kwargs)


def _constructor_arguments(name: str) -> dict[str, Any] | None:
    """What tiktoken's bundled constructor for `name` passes to `Encoding` (its public plugin
    table, `tiktoken_ext.openai_public.ENCODING_CONSTRUCTORS`)."""
    try:
        from tiktoken_ext.openai_public import ENCODING_CONSTRUCTORS
    except ImportError:
        return None
    constructor = ENCODING_CONSTRUCTORS.get(name)
    return dict(constructor()) if constructor is not None else None


def _read(path: Path, name: str) -> dict[str, Any] | None:
    try:
        kwargs = marshal.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, EOFError, TypeError):
        log.info("ignoring the tokenizer cache %s (unreadable)", path)
        return None
    valid = (
        isinstance(kwargs, dict)
        and set(kwargs) <= set(_FIELDS)
        and kwargs.get("name") == name
        and isinstance(kwargs.get("pat_str"), str)
        and isinstance(kwargs.get("mergeable_ranks"), dict)
        and isinstance(kwargs.get("special_tokens"), dict)
    )
    return kwargs if valid else None


def _write(path: Path, kwargs: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(marshal.dumps({k: v for k, v in kwargs.items() if k in _FIELDS}))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:  # read-only or full: the next launch loads it the slow way again
        log.info("could not keep the tokenizer cache %s: %s", path, exc)
