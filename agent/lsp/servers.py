"""Which language server serves which file: the servers cairn knows, found on PATH, and those
`[lsp.servers.NAME]` configures (a known NAME keeps what the table does not say).

Found once, when the session opens (a `which` per server: a few stats). A server whose program
is not found is listed as such for /status, and never offered.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from agent.settings.schema import LspSettings

PYTHON = (".py", ".pyi")
TYPESCRIPT = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
# Known servers, in the order one is preferred over another for the same extension.
KNOWN: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("pylsp", ("pylsp",), PYTHON),
    ("pyright", ("pyright-langserver", "--stdio"), PYTHON),
    ("basedpyright", ("basedpyright-langserver", "--stdio"), PYTHON),
    ("typescript", ("typescript-language-server", "--stdio"), TYPESCRIPT),
    ("gopls", ("gopls",), (".go",)),
    ("rust-analyzer", ("rust-analyzer",), (".rs",)),
)
# The protocol's language identifiers by extension; another extension sends its own name.
LANGUAGE_IDS = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescriptreact",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascriptreact",
    ".go": "go",
    ".rs": "rust",
}


class ServerSpec(BaseModel):
    """A server as configured or known: `program` is the resolved executable, None when not found."""

    name: str
    command: list[str]
    extensions: list[str]
    program: str | None
    configured: bool = False

    @property
    def found(self) -> bool:
        return self.program is not None

    def argv(self) -> list[str]:
        assert self.program is not None
        return [self.program, *self.command[1:]]


def _extension(raw: str) -> str:
    raw = raw.strip().lower()
    return raw if raw.startswith(".") else f".{raw}"


def language_id(path: Path) -> str:
    suffix = path.suffix.lower()
    return LANGUAGE_IDS.get(suffix, suffix.lstrip(".") or "plaintext")


def discover(settings: LspSettings, which: Callable[[str], str | None] = shutil.which) -> list[ServerSpec]:
    """Configured servers first (their order), then the known ones not configured; disabled ones
    left out. An entry with no command or no extensions (and no known defaults) is left out."""
    known = {name: (list(command), list(exts)) for name, command, exts in KNOWN}
    specs: list[ServerSpec] = []
    for name, table in settings.servers.items():
        default_command, default_exts = known.get(name, ([], []))
        if not table.enabled:
            continue
        command = list(table.command) or default_command
        extensions = [_extension(e) for e in table.extensions] or default_exts
        if not command or not extensions or not command[0]:
            continue
        specs.append(
            ServerSpec(name=name, command=command, extensions=extensions, program=which(command[0]), configured=True)
        )
    for name, (command, extensions) in known.items():
        if name in settings.servers:
            continue
        specs.append(ServerSpec(name=name, command=command, extensions=extensions, program=which(command[0])))
    return specs


def server_for(specs: list[ServerSpec], path: Path) -> ServerSpec | None:
    """The first found server for `path`'s extension."""
    suffix = path.suffix.lower()
    return next((s for s in specs if s.found and suffix in s.extensions), None)
