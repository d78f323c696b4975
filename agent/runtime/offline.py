"""Offline facts of SPEC §1, applied before litellm or tiktoken is imported.

tiktoken downloads encodings on first use; litellm ships them, so point
TIKTOKEN_CACHE_DIR at litellm's folder (found without importing litellm). litellm
fetches its price map at import unless told to use the local copy.
"""

from __future__ import annotations

import importlib.util
import os
import warnings
from pathlib import Path


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


_litellm = None


def import_litellm():
    """Import litellm once, quietly (its banners would corrupt the TUI and headless output)."""
    global _litellm
    if _litellm is None:
        apply_offline_env()
        # litellm's own deprecation noise would land on the terminal, under the TUI.
        warnings.filterwarnings("ignore", module=r"litellm(\..*)?$")
        warnings.filterwarnings("ignore", message=r".*ReadOnly.*", category=UserWarning)
        import litellm

        litellm.suppress_debug_info = True
        litellm.drop_params = True
        litellm.telemetry = False
        # litellm prices each streamed request itself by counting the whole prompt with its own
        # encoding (cl100k_base: ~0.3 s to load, then every message encoded again per request);
        # cairn's costs come from the provider's reported usage (agent/llm/cost_map.py), so only
        # the encoding the context engine uses is ever loaded.
        litellm.disable_token_counter = True
        _litellm = litellm
    return _litellm
