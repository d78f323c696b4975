"""The work-tree files a repository's installed git hooks read: kept read-only with the hooks.

The writable sandbox keeps the git folder and the `core.hooksPath` folder read-only
(agent/tools/sandbox_protect.py), so a command cannot rewrite a hook. But the usual hook
managers keep what the hook runs in the work tree: pre-commit's hook reads
`.pre-commit-config.yaml` (a `repo: local` entry is any command), lefthook's `lefthook.yml`,
lint-staged, husky 4 and simple-git-hooks a key of `package.json`. A test script that rewrites
one of those plants a command the user's next `git commit` runs unconfined. So each installed
hook (not a `.sample`) is read: the configs of the managers it names, and every work-tree file
it names by path, are protected with it.

Only for the sandbox: a file tool's edit of these (the model's own, in the transcript) is a
change the user sees, like an edit of a Makefile.
"""

from __future__ import annotations

import os
import re

from agent.fs.repo_files import within

# A hook manager's name in a hook script → the work-tree files it takes its commands from.
MANAGER_CONFIGS: dict[str, tuple[str, ...]] = {
    "pre-commit": (".pre-commit-config.yaml", ".pre-commit-config.yml"),
    "lefthook": tuple(
        f"{dot}lefthook{local}.{ext}"
        for dot in ("", ".")
        for local in ("", "-local")
        for ext in ("yml", "yaml", "toml", "json")
    ),
    "lint-staged": (
        "package.json",
        ".lintstagedrc",
        *(f".lintstagedrc.{ext}" for ext in ("json", "yaml", "yml", "js", "mjs", "cjs")),
        *(f"lint-staged.config.{ext}" for ext in ("js", "mjs", "cjs")),
    ),
    "simple-git-hooks": (
        "package.json",
        *(f"{dot}simple-git-hooks.{ext}" for dot in ("", ".") for ext in ("json", "js", "cjs", "mjs")),
    ),
    "husky": ("package.json", ".huskyrc", ".huskyrc.json", ".huskyrc.js", "husky.config.js"),
    "yorkie": ("package.json",),
    "overcommit": (".overcommit.yml",),
    "npm": ("package.json",),
    "npx": ("package.json",),
    "make": ("Makefile", "makefile", "GNUmakefile"),
}
MAX_HOOKS = 64  # a hooks folder holds one file per git event (about 30)
MAX_HOOK_BYTES = 64 * 1024  # a hook is a short script; a manager's generated one is a few KiB
MAX_NAMED_FILES = 64
# A word of a script that may be a path: no spaces, quotes or shell punctuation around it.
_PATH_WORD = re.compile(r"[\w@%+~./-]+")


def installed_hooks(hooks_dir: str) -> list[str]:
    """The hook files in `hooks_dir` git would run (regular files; git's `.sample`s are not)."""
    try:
        entries = sorted(os.scandir(hooks_dir), key=lambda e: e.name)
    except OSError:
        return []
    hooks = [e.path for e in entries if not e.name.endswith(".sample") and e.is_file(follow_symlinks=True)]
    return hooks[:MAX_HOOKS]


def _read(path: str) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(MAX_HOOK_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""


def hook_inputs(hooks: list[str], workspace: str, top: str) -> list[str]:
    """The work-tree files (inside `workspace`) that these hook scripts read or run: the
    configs of the managers they name, and the files they name by path (relative to `top`,
    where git runs hooks, or absolute). A config named that does not exist cannot be bound
    (the sandbox binds only what exists): the caller drops it."""
    found: list[str] = []
    for hook in hooks:
        text = _read(hook)
        for manager, configs in MANAGER_CONFIGS.items():
            if re.search(rf"(?<![\w-]){re.escape(manager)}(?![\w-])", text):
                found += [os.path.join(top, name) for name in configs]
        named = 0
        for word in dict.fromkeys(_PATH_WORD.findall(text)):
            if named >= MAX_NAMED_FILES:
                break
            if "/" not in word and "." not in word:
                continue
            path = os.path.join(top, os.path.expanduser(word.removeprefix("./")))
            if os.path.isfile(path) and within(os.path.realpath(path), workspace):
                found.append(os.path.abspath(path))
                named += 1
    return [p for p in dict.fromkeys(found) if within(os.path.abspath(p), workspace)]
