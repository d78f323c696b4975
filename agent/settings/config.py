"""Settings loaded: defaults < user config.toml < project .cairn/config.toml < CAIRN_* env < flags.

Bad files or values never stop cairn: each problem becomes a readable warning and the
default is kept. A project's file is read as a repository's (no symlink out, no FIFO, a size
cap) and its widening keys wait for folder trust (agent/settings/trust.py); the user's and the
project's lists of rules, hooks and hidden paths add up instead of replacing each other.
The warnings and the pending trust come back beside the settings (`LoadedConfig`), not in
them: a front end shows them once, everything else reads only the settings (`load_settings`).
What the keys are is agent/settings/schema.py.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agent.hooks.names import EVENTS as HOOK_EVENTS
from agent.hooks.names import closest_event
from agent.paths import config_dir
from agent.process.secrets import remember_secret
from agent.prompt import instruction_notices
from agent.settings import trust
from agent.settings.schema import ContextSettings, ModelOverride, Section, Settings
from agent.settings.toml_salvage import error_text, has_values, salvage

MAX_CONFIG_BYTES = 1024 * 1024  # a config file is a few lines; a huge one is a mistake or hostile


def _read_toml(path: Path, warnings: list[str]) -> dict[str, Any]:
    return _read_toml_bytes(path, warnings)[0]


def _read_toml_bytes(
    path: Path, warnings: list[str], workspace: Path | None = None
) -> tuple[dict[str, Any], bytes | None]:
    """The parsed file and the bytes it was parsed from (None when there is no file or it
    could not be read; a file that does not parse gives {} and its bytes).

    With `workspace`, `path` is a repository's file (the project's `.cairn/config.toml`): it
    is read through agent/fs/repo_files.py below the workspace, so a symlink out of it, a FIFO
    (it would block cairn) or a huge file is refused with a warning. The user's own config
    may be a symlink (a dotfiles manager's) but must be a regular file too."""
    from agent.fs.repo_files import FileMissing, FileTooLarge, RepoFileError, read_own_file, read_repo_file

    raw: bytes | None = None
    try:
        if workspace is not None:
            raw = read_repo_file(workspace, path.relative_to(workspace), max_bytes=MAX_CONFIG_BYTES, follow_inside=True)
        else:
            raw = read_own_file(path, max_bytes=MAX_CONFIG_BYTES)
    except FileMissing:
        return {}, None
    except FileTooLarge:
        warnings.append(f"Ignoring {path}: larger than {MAX_CONFIG_BYTES // 1024} KiB")
        return {}, None
    except RepoFileError as exc:
        warnings.append(f"Ignoring {path}: it {exc.reason}")
        return {}, None
    try:
        # Universal newlines, as read_text gives.
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        return tomllib.loads(text), raw
    except tomllib.TOMLDecodeError as exc:
        if workspace is not None:  # a repository's file: never half-applied
            warnings.append(f"Ignoring {path}: {error_text(exc)}")
            return {}, raw
        return _salvaged(path, text, exc, warnings), raw
    except UnicodeDecodeError as exc:
        warnings.append(f"Ignoring {path}: {exc}")
        return {}, raw
    except RecursionError:  # tomllib recurses per nesting level: `a = [[[[…` overflows the stack
        warnings.append(f"Ignoring {path}: nested too deeply")
        return {}, raw


def _salvaged(path: Path, text: str, exc: tomllib.TOMLDecodeError, warnings: list[str]) -> dict[str, Any]:
    """The user's own file that does not parse: the tables that do are kept
    (agent/settings/toml_salvage.py), and one warning names the file, the line and what was dropped."""
    kept = salvage(text)
    if not kept.dropped or not has_values(kept.data):  # nothing to keep, or no table to blame
        warnings.append(f"Ignoring {path}: {error_text(exc)}")
        return {}
    warnings.append(
        f"{path} is not valid TOML ({error_text(exc)}): ignored {', '.join(kept.dropped)}; the rest applies"
    )
    return kept.data


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


MAX_WARNINGS_PER_KIND = 20  # a file of 10,000 typos gives a readable list, not a flood


def _key_name(parts: list[Any]) -> str:
    name = ".".join(str(p) for p in parts)
    return name if name.isprintable() else ascii(name)  # keys are shown to the user


class _Warner:
    """Appends warnings of one kind, the first MAX_WARNINGS_PER_KIND and then a count."""

    def __init__(self, warnings: list[str], more: str) -> None:
        self.warnings, self.more, self.count = warnings, more, 0

    def __call__(self, text: str) -> None:
        self.count += 1
        if self.count <= MAX_WARNINGS_PER_KIND:
            self.warnings.append(text)

    def finish(self) -> None:
        if self.count > MAX_WARNINGS_PER_KIND:
            self.warnings.append(f"… and {self.count - MAX_WARNINGS_PER_KIND} more {self.more}")


def _sections() -> dict[str, type[Section]]:
    """Settings' fields that are tables of known keys (every `Section` field)."""
    return {
        name: field.annotation
        for name, field in Settings.model_fields.items()
        if isinstance(field.annotation, type) and issubclass(field.annotation, Section)
    }


def _drop_unknown_keys(data: dict[str, Any], warnings: list[str]) -> None:
    """Remove keys no setting reads (a typo such as `comand_timeout`), each with a warning.

    `models` is a table of per-model tables: its keys are model names (any), their keys
    ModelOverride fields. Values of the wrong type are left to validation.
    """
    warn = _Warner(warnings, "unknown config keys ignored")

    def check(table: dict[str, Any], known: set[str], prefix: list[Any]) -> None:
        for key in [k for k in table if k not in known]:
            del table[key]
            close = closest_event(str(key)) if prefix == ["hooks"] else None  # `[[hooks.PretoolUse]]`
            hint = f" (did you mean {close}?)" if close else ""
            warn(f"Unknown config key {_key_name(prefix + [key])} ignored{hint}")

    check(data, set(Settings.model_fields), [])
    for name, section in _sections().items():
        if isinstance(data.get(name), dict):
            check(data[name], set(section.model_fields), [name])
    models = data.get("models")
    if isinstance(models, dict):
        for model, override in models.items():
            if isinstance(override, dict):
                check(override, set(ModelOverride.model_fields), ["models", model])
    warn.finish()


def _error_target(data: dict[str, Any], loc: tuple[Any, ...]) -> tuple[dict[str, Any], Any] | None:
    """The (table, key) holding the value an error points at: the deepest table on the path
    (an error inside a list drops the whole list, `allow = ["x", 3]`)."""
    target = None
    node: Any = data
    for part in loc:
        if not isinstance(node, dict) or part not in node:
            break
        target = (node, part)
        node = node[part]
    return target


def _validate(data: dict[str, Any], warnings: list[str]) -> Settings:
    """Validate; on error drop each offending key (keeping its default) and warn.

    Every error of a round is dropped at once; dropping a value cannot make another one
    invalid, so this settles in a round or two (bounded anyway). Everything valid is kept,
    the workspace and the flags included.
    """
    data = dict(data)
    warn = _Warner(warnings, "config values ignored")
    settings: Settings | None = None
    for _ in range(10):
        try:
            settings = Settings.model_validate(data)
            break
        except ValidationError as exc:
            errors = exc.errors()
        targets: dict[tuple[int, Any], tuple[dict[str, Any], Any]] = {}
        for err in errors:
            target = _error_target(data, err["loc"])
            if target is not None and (id(target[0]), target[1]) not in targets:
                targets[(id(target[0]), target[1])] = target
                warn(f"Config value {_key_name(list(err['loc']))} ignored: {err['msg']}")
        if not targets:
            break
        for table, key in targets.values():
            table.pop(key, None)
    warn.finish()
    if settings is None:  # not expected: keep at least the workspace
        warnings.append("Config ignored: it could not be validated")
        settings = Settings(workspace=data.get("workspace") or Path.cwd())
    ctx = settings.context
    if not ctx.truncation_middle_start < ctx.truncation_middle_end:
        warnings.append("Config values context.truncation_middle_start/end ignored: the start must be below the end")
        default = ContextSettings()
        ctx.truncation_middle_start = default.truncation_middle_start
        ctx.truncation_middle_end = default.truncation_middle_end
    return settings


def project_config_path(workspace: Path) -> Path:
    return Path(workspace) / ".cairn" / "config.toml"


def read_project_config(workspace: Path, warnings: list[str]) -> tuple[dict[str, Any], bytes | None]:
    """The project config as parsed and the bytes it came from (None: no readable file).

    `hooks.read_claude_settings` is the user's own choice: a project's is left out."""
    data, raw = _read_toml_bytes(project_config_path(workspace), warnings, Path(workspace))
    hooks = data.get("hooks")
    if isinstance(hooks, dict) and "read_claude_settings" in hooks:
        data["hooks"] = {k: v for k, v in hooks.items() if k != "read_claude_settings"}
        warnings.append(
            f"Ignoring hooks.read_claude_settings in {project_config_path(workspace)}: only your own config sets it"
        )
    return data, raw


def _permission_lists(user: dict[str, Any], project: dict[str, Any]) -> dict[str, Any] | None:
    """The user's and the project's `[permissions]` lists add up (a plain merge would let
    the project's list replace the user's)."""
    u, p = user.get("permissions"), project.get("permissions")
    if not isinstance(u, dict) or not isinstance(p, dict):
        return None
    out = _merge(u, p)
    for key in ("allow_commands", "allow"):
        if isinstance(u.get(key), list) and isinstance(p.get(key), list):
            out[key] = u[key] + [v for v in p[key] if v not in u[key]]
    return out


def _hook_lists(user: dict[str, Any], project: dict[str, Any]) -> dict[str, Any] | None:
    """The user's and the project's hooks of an event add up: a project's hook runs beside
    the user's guard, never instead of it."""
    u, p = user.get("hooks"), project.get("hooks")
    if not isinstance(u, dict) or not isinstance(p, dict):
        return None
    out = _merge(u, p)
    for event in HOOK_EVENTS:
        if isinstance(u.get(event), list) and isinstance(p.get(event), list):
            out[event] = u[event] + p[event]
    return out


def _hidden_paths(user: dict[str, Any], project: dict[str, Any]) -> list[Any] | None:
    """`sandbox.hide` of the user and the project add up: a project cannot un-hide a path."""
    u, p = user.get("sandbox"), project.get("sandbox")
    if not isinstance(u, dict) or not isinstance(p, dict):
        return None
    uh, ph = u.get("hide"), p.get("hide")
    if not isinstance(uh, list) or not isinstance(ph, list):
        return None
    return uh + [v for v in ph if v not in uh]


@dataclass(frozen=True)
class LoadedConfig:
    """What one load found: the settings, and what happened while reading them, which is not
    configuration. `warnings`: the problems (bad TOML, wrong types, keys left out), shown to the
    user once (the TUI's chat and /status, headless's stderr). `project_trust`: the project
    config's widening keys the user has not trusted as the file is now (they were left out; the
    TUI asks), None when there are none."""

    settings: Settings
    warnings: list[str]
    project_trust: trust.ProjectTrust | None


def load_settings(workspace: Path | None = None, flags: dict[str, Any] | None = None) -> Settings:
    """The settings alone, for a caller that shows neither the warnings nor the trust question."""
    return load_config(workspace, flags).settings


def load_config(workspace: Path | None = None, flags: dict[str, Any] | None = None) -> LoadedConfig:
    warnings: list[str] = []
    ws = (workspace or Path.cwd()).resolve()
    user = _read_toml(config_dir() / "config.toml", warnings)
    project, raw = read_project_config(ws, warnings)
    # Folder trust (agent/settings/trust.py): keys that widen what cairn may do or where data goes
    # apply only when the user trusted this file's content; without that they are left out.
    pending = trust.pending(ws, project_config_path(ws), raw, project, flags) if raw is not None else None
    if pending is not None:
        project = trust.without_widening(project)
        warnings.append(pending.notice)
    data: dict[str, Any] = _merge(user, project)
    permissions = _permission_lists(user, project)
    if permissions is not None:
        data["permissions"] = permissions
    hooks = _hook_lists(user, project)
    if hooks is not None:
        data["hooks"] = hooks
    hide = _hidden_paths(user, project)
    if hide is not None:
        data["sandbox"] = {**data["sandbox"], "hide": hide}
    data = _merge(data, _env_layer())
    data = _merge(data, {k: v for k, v in (flags or {}).items() if v is not None})
    data["workspace"] = ws
    _drop_unknown_keys(data, warnings)
    settings = _validate(data, warnings)
    warnings.extend(instruction_notices(ws))  # an AGENTS.md that leads outside is named once
    if settings.api_key:
        remember_secret(settings.api_key)
    return LoadedConfig(settings, warnings, pending)


def untrusted_project_keys(workspace: Path) -> list[str]:
    """The keys of the project config left out because its folder is not trusted ([] = none)."""
    ws = Path(workspace).resolve()
    project, raw = read_project_config(ws, [])
    pending = trust.pending(ws, project_config_path(ws), raw, project) if raw is not None else None
    return [name for name, _ in pending.items] if pending is not None else []
