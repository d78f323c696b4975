"""The folders a program's code comes from, when they lie in the workspace: kept read-only whole.

Protecting the one file a trusted MCP server or hook runs (`.venv/bin/python tools/server.py`)
is not enough when the interpreter loads more from the workspace: a `.pth` file or a patched
module in a virtualenv's site-packages runs at every start of any Python of that environment,
and a package under `node_modules/` runs when `npx` starts its bin. cairn itself is such a
program when it is installed in the project's own virtualenv: a planted `.pth` would run at the
user's next `cairn`, unconfined. So for each such file, and for cairn's own interpreter, the
enclosing virtualenv (the folder holding `pyvenv.cfg`) or `node_modules` package is protected
as a whole. An editable install's source folder is not: it is the project the user edits.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

from agent.fs.repo_files import within

VENV_MARKER = "pyvenv.cfg"
NODE_MODULES = "node_modules"


def _venv_root(path: str, workspace: str) -> str | None:
    """The virtualenv inside `workspace` that holds `path` (its folder with `pyvenv.cfg`)."""
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    while within(folder, workspace) and folder != workspace:
        if os.path.isfile(os.path.join(folder, VENV_MARKER)):
            return folder
        folder = os.path.dirname(folder)
    return None


def _node_package(path: str) -> str | None:
    """`…/node_modules/pkg` (or `…/node_modules/@scope/pkg`) for a file inside a package."""
    parts = path.split(os.sep)
    if NODE_MODULES not in parts:
        return None
    at = len(parts) - 1 - parts[::-1].index(NODE_MODULES)  # the innermost node_modules
    rest = parts[at + 1 :]
    if not rest or rest[0] == ".bin":
        return None  # a bin link: its target (pinned beside it) names the package
    width = 2 if rest[0].startswith("@") and len(rest) > 1 else 1
    return os.sep.join(parts[: at + 1 + width])


def own_installation() -> list[str]:
    """Where cairn's own interpreter loads code from: its environment and its site-packages."""
    import site
    import sysconfig

    paths = [sys.prefix, os.path.realpath(sys.executable)]
    paths += [sysconfig.get_paths().get(key, "") for key in ("purelib", "platlib")]
    paths += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    return [p for p in dict.fromkeys(paths) if p]


def program_roots(files: Iterable[str], workspace: str) -> list[str]:
    """The workspace folders whose code `files` load: a virtualenv, a node package."""
    ws = os.path.realpath(workspace)
    out: list[str] = []
    for raw in files:
        # The name as given, in a real folder: a venv's `bin/python` is a link out of the
        # workspace, yet the environment it starts is the one around the link.
        path = os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(raw))), os.path.basename(raw))
        if not within(path, ws):
            continue
        for root in (_venv_root(path, ws), _node_package(path)):
            if root is not None and root not in out:
                out.append(root)
    return out
