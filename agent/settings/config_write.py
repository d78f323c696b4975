"""Writing the project's `.cairn/config.toml`: "always for this project" approvals.

Kept apart from agent/settings/config.py (reading, on the path to the first screen): a write is rare,
and goes through a round-tripping TOML editor so the user's file keeps its comments and layout.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

from agent.fs.atomic import atomic_write
from agent.settings import trust
from agent.settings.config import project_config_path


class ConfigWriteError(Exception):
    """The project's config.toml could not be updated; the message says why."""


def add_project_permissions(workspace: Path, keys: list[str]) -> Path:
    """Add "always for this project" keys to `[permissions]` in `.cairn/config.toml`.

    `command:<prefix>` keys go to `allow_commands`, the rest to `allow`. The file is the
    user's: edited through a round-tripping TOML document (tomlkit) so its comments, layout,
    key style (inline table, dotted keys) and line endings stay as they were, and the result
    is parsed back and compared with what was meant before it replaces the file.

    Folder trust: the new content stays trusted when the file it replaced was trusted or
    needed no trust (missing, or without widening keys), so the rule just approved keeps
    working; otherwise the file stays untrusted (agent.settings.trust.trusted_after_write).
    """
    import tomlkit  # a config write is rare: keep the editor off the start-up path
    from tomlkit.exceptions import TOMLKitError

    from agent.fs.repo_files import FileMissing, RepoFileError, read_repo_file

    path = project_config_path(workspace)
    try:
        try:  # a repository's file: no FIFO, no symlink out, no huge file (agent/fs/repo_files.py)
            before: bytes | None = read_repo_file(workspace, path.relative_to(workspace), follow_inside=True)
        except FileMissing:
            before = None
        except RepoFileError as exc:
            raise ConfigWriteError(f"cannot read {exc}") from None
        text = before.decode("utf-8") if before is not None else ""
        data = tomllib.loads(text)
        doc = tomlkit.parse(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, TOMLKitError) as exc:
        raise ConfigWriteError(f"cannot read {path}: {exc}") from None
    section = data.get("permissions", {})
    if not isinstance(section, dict):
        raise ConfigWriteError(f"{path}: `permissions` is not a table")
    wanted = {
        "allow_commands": [k.split(":", 1)[1] for k in keys if k.startswith("command:")],
        "allow": [k for k in keys if not k.startswith("command:")],
    }
    expected = {**data, "permissions": dict(section)}
    try:
        if "permissions" not in doc:
            doc["permissions"] = tomlkit.table()
        table = doc["permissions"]
        for name, values in wanted.items():
            current = section.get(name, [])
            if not isinstance(current, list):
                raise ConfigWriteError(f"{path}: permissions.{name} is not a list")
            added = [v for v in dict.fromkeys(values) if v not in current]
            if not added:
                continue
            expected["permissions"][name] = current + added
            if name in table:
                table[name].extend(added)  # the array keeps its own layout and comments
            else:
                table[name] = added
        after = _same_line_endings(tomlkit.dumps(doc), text)
        ok = _same_toml(tomllib.loads(after), expected)
    except (TOMLKitError, tomllib.TOMLDecodeError, TypeError, ValueError, AttributeError):
        ok = False
    if not ok:
        raise ConfigWriteError(
            f"{path} is laid out in a way cairn cannot update safely; add {keys[-1]!r} to its [permissions] yourself"
        )
    raw = after.encode("utf-8")
    if raw != before:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            mode = os.stat(path).st_mode & 0o7777 if before is not None else None
            atomic_write(path, raw, mode)
        except OSError as exc:
            raise ConfigWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    trust.trusted_after_write(Path(workspace), before, data, raw)
    return path


def _same_toml(a: Any, b: Any) -> bool:
    """Equality of parsed TOML in which `nan` equals `nan` and `1` is not `true`: a file
    holding either must not look changed by a write that kept it."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_toml(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_toml(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return type(a) is type(b) and a == b


def _same_line_endings(written: str, original: str) -> str:
    """Lines the editor added end in "\n"; in a file whose every line ends in "\r\n" they get
    the same ending (a mixed file is left as the editor wrote it)."""
    if "\r\n" in original and "\n" not in original.replace("\r\n", ""):
        return written.replace("\r\n", "\n").replace("\n", "\r\n")
    return written
