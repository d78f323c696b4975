"""Settings: defaults < user config.toml < project .cairn/config.toml < CAIRN_* env < flags.

Bad files or values never stop cairn: each problem becomes a readable warning and the
default is kept. Imports nothing heavy (this module is on the path to the first screen).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

APP_NAME = "cairn"


class _Section(BaseModel):
    # defer_build: schemas are built on first use, not at import (config is on the startup path).
    model_config = ConfigDict(extra="ignore", defer_build=True)


class ModelOverride(_Section):
    """Per-model limits that win over litellm's model info."""

    context_window: int | None = None
    max_output_tokens: int | None = None
    auto_condense_percent: float | None = None


class LLMSettings(_Section):
    max_retries: int = 5
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    request_timeout: float = 600.0
    temperature: float | None = None


class ToolSettings(_Section):
    command_timeout: float = 120.0
    max_read_lines: int = 2000
    max_file_bytes: int = 10 * 1024 * 1024


class ContextSettings(_Section):
    tokenizer: str = "o200k_base"
    default_context_window: int = 128_000
    # Seed 001 §3.3.5: the reply's reservation when the model's output limit is unknown.
    default_max_output_tokens: int = 4_096
    # Seed 001 budget: condense when a request reaches this percent of the window (or
    # exceeds the allowed tokens); when condensing is off or fails, smart truncation shapes
    # the request copy toward `fallback_max_tokens`.
    auto_condense: bool = True
    auto_condense_percent: float = 80.0
    condense_model: str | None = None  # a cheaper model for summaries; default: the chat model
    condense_keep_recent_user_tokens: int = 20_000
    fallback_max_tokens: int = 50_000
    truncation_middle_start: float = 1 / 6
    truncation_middle_end: float = 5 / 6
    fold_max_tokens: int = 10_000
    fold_max_line_span: int = 100
    # Seed 004: a tool output longer than this reaches the model as a preview (its first and
    # last lines, `inline_preview_chars` in all) and a context-file ref; storage keeps all.
    max_inline_chars: int = 5_000
    inline_preview_chars: int = 1_024
    # Context files (SPEC §6, §12.9): a cache of SQLite under <data>/context/<session>/.
    files_read_default_bytes: int = 8_192
    files_read_max_bytes: int = 65_536
    files_tail_default_lines: int = 200
    files_tail_max_lines: int = 2_000
    files_grep_max_results: int = 50
    files_grep_timeout: float = 5.0
    files_cache_max_bytes: int = 1024 ** 3
    files_ttl_days: int = 30
    redact: bool = False
    # Seed 003: old successful terminal outputs become a placeholder.
    terminal_keep_recent_results: int = 5
    terminal_max_age_ms: int = 15 * 60 * 1000
    terminal_outdated_placeholder: str = "此命令返回内容已过时"
    # Seed 000: only the newest successful reads of each file are sent whole.
    file_keep_recent_reads: int = 5
    file_read_placeholder: str = "[该文件的历史读取内容已压缩,请参看最新读取结果]"


class Settings(_Section):
    model: str | None = None
    api_base: str | None = None
    api_key: str | None = None
    yolo: bool = False
    workspace: Path = Field(default_factory=Path.cwd)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    models: dict[str, ModelOverride] = Field(default_factory=dict)
    # Problems found while loading (bad TOML, wrong types); shown to the user once.
    warnings: list[str] = Field(default_factory=list, exclude=True)


def home_dir() -> Path | None:
    value = os.environ.get("CAIRN_HOME")
    return Path(value).expanduser() if value else None


def data_dir() -> Path:
    home = home_dir()
    if home is not None:
        return home
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    home = home_dir()
    if home is not None:
        return home
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME, appauthor=False))


def db_path() -> Path:
    return data_dir() / "sessions.db"


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as exc:
        warnings.append(f"Ignoring {path}: {exc}")
        return {}


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


_ENV_KEYS = {
    "CAIRN_MODEL": ("model",),
    "CAIRN_API_BASE": ("api_base",),
    "CAIRN_API_KEY": ("api_key",),
    "CAIRN_YOLO": ("yolo",),
    "CAIRN_TOKENIZER": ("context", "tokenizer"),
    "CAIRN_COMMAND_TIMEOUT": ("tools", "command_timeout"),
    "CAIRN_MAX_RETRIES": ("llm", "max_retries"),
}


def _env_layer() -> dict[str, Any]:
    layer: dict[str, Any] = {}
    for var, path in _ENV_KEYS.items():
        value = os.environ.get(var)
        if value is None or value == "":
            continue
        node = layer
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return layer


def _validate(data: dict[str, Any], warnings: list[str]) -> Settings:
    """Validate; on error drop each offending key (keeping its default) and warn."""
    data = dict(data)
    for _ in range(50):
        try:
            return Settings.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = [str(p) for p in err["loc"]]
            warnings.append(f"Config value {'.'.join(loc)} ignored: {err['msg']}")
            node: Any = data
            for part in loc[:-1]:
                node = node.get(part) if isinstance(node, dict) else None
                if node is None:
                    break
            if isinstance(node, dict) and loc[-1] in node:
                del node[loc[-1]]
            elif loc and loc[0] in data:
                del data[loc[0]]
            else:
                break
    return Settings()


def load_settings(workspace: Path | None = None, flags: dict[str, Any] | None = None) -> Settings:
    warnings: list[str] = []
    ws = (workspace or Path.cwd()).resolve()
    data: dict[str, Any] = {}
    data = _merge(data, _read_toml(config_dir() / "config.toml", warnings))
    data = _merge(data, _read_toml(ws / ".cairn" / "config.toml", warnings))
    data = _merge(data, _env_layer())
    data = _merge(data, {k: v for k, v in (flags or {}).items() if v is not None})
    data["workspace"] = ws
    settings = _validate(data, warnings)
    settings.warnings = warnings
    return settings


def model_override(settings: Settings, model: str) -> ModelOverride:
    return settings.models.get(model) or settings.models.get(model.split("/", 1)[-1]) or ModelOverride()
