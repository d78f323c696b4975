"""Offline facts of SPEC §1, applied before litellm or tiktoken is imported, and the one
place litellm is imported.

tiktoken downloads encodings on first use; litellm ships them, so point
TIKTOKEN_CACHE_DIR at litellm's folder (found without importing litellm). litellm
fetches its price map at import unless told to use the local copy.

No library reads a repository's `.env`: litellm's `__init__` calls python-dotenv's
`load_dotenv()` unless `LITELLM_MODE` (its documented mode switch) is other than "DEV". With no
path given, dotenv looks for `.env` upwards from litellm's own folder (from the working
directory under a debugger, a REPL or `python -c`), so with cairn installed in a virtualenv
inside the project, the project's `.env` became cairn's environment: `OPENAI_BASE_URL=…`
there sent the user's key to the repository's host. The import runs in "PRODUCTION" mode,
whatever the variable says (a user's "DEV" would read the repository's file just the same);
the variable is put back afterwards, so commands cairn runs see the user's own.
tests/runtime/test_no_dotenv.py fails if a litellm upgrade reads `.env` another way.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

# litellm's switch for its import-time `.env` load ("DEV", its default, loads it).
LITELLM_MODE_VARIABLE = "LITELLM_MODE"
LITELLM_MODE_NO_DOTENV = "PRODUCTION"


def litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.origin:
        return None
    folder = Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def apply_offline_env() -> None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    if "TIKTOKEN_CACHE_DIR" not in os.environ:
        folder = litellm_tokenizer_dir()
        if folder is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


@contextlib.contextmanager
def no_dotenv() -> Iterator[None]:
    """litellm's import without its `.env` load (module docstring); the variable as it was after."""
    before = os.environ.get(LITELLM_MODE_VARIABLE)
    os.environ[LITELLM_MODE_VARIABLE] = LITELLM_MODE_NO_DOTENV
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(LITELLM_MODE_VARIABLE, None)
        else:
            os.environ[LITELLM_MODE_VARIABLE] = before


_litellm = None


def import_litellm():
    """Import litellm once, quietly (its banners would corrupt the TUI and headless output)."""
    global _litellm
    if _litellm is None:
        apply_offline_env()
        # litellm's own deprecation noise would land on the terminal, under the TUI.
        warnings.filterwarnings("ignore", module=r"litellm(\..*)?$")
        warnings.filterwarnings("ignore", message=r".*ReadOnly.*", category=UserWarning)
        with no_dotenv():
            import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        litellm.telemetry = False
        # litellm prices each streamed request itself by counting the whole prompt with its own
        # encoding (cl100k_base: ~0.3 s to load, then every message encoded again per request);
        # cairn's costs come from the provider's reported usage (agent/llm/cost_map.py), so only
        # the encoding the context engine uses is ever loaded.
        litellm.disable_token_counter = True
        from agent.llm.litellm_http import install

        install(litellm)  # its clients follow no redirect, and are held to the wire caps
        _litellm = litellm
    return _litellm
