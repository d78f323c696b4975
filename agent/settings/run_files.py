"""Which files of the workspace a configured command runs: what trust pins besides the config.

A trusted hook (`sh .claude/hooks/format.sh`) or MCP server (`python tools/mcp_server.py`) was
trusted for its command line, but what runs is the file that line names: when the model or a
sandboxed command rewrites that file, the same line runs other code, unconfined. So trust
(agent/settings/trust.py, agent/settings/pins.py) records these files' content too, and the
sandbox keeps them read-only (agent/tools/trusted_programs.py).

The rule is deliberately wide rather than a model of each program's arguments: EVERY word of
the command, after the shell's quoting and the variables a hook sees (`$CLAUDE_PROJECT_DIR`,
`${VAR:-default}`, `~`, `$PWD`) are expanded, that names an existing regular file inside the
workspace counts, whatever it is given to: an interpreter's script, a `source`d file, a
redirect's input, `--config=x` (the part after `=` of any word is a word too), relative to the
command's folder or to any folder a `cd`, `-C` or `--directory` in the line names. On top of
that, the files no word spells: `python -m pkg.mod` (the module and its packages'
`__init__.py`), a JavaScript runtime's `server` (`server.js` …) or folder (`index.js`,
`package.json`), `python dir` (`dir/__main__.py`), `npx tool` (`node_modules/.bin/tool`),
and the manifest a task runner executes (`make` → Makefile, `npm run` → package.json …).
A word with spaces or shell operators (`sh -c "…"`, `bash -lc '…'`) is read as a command of
its own. A file reached through a symlink counts as the link's path and, inside, its target.
A script's own imports are not followed: the entry file is what the line names.

Standard library only, and it only looks (stat, never reads): settings load runs it.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

# How far a command is read: its nesting (`sh -c "bash -c '…'"`), its words (nested ones
# included) and the folders it moves to. A command beyond any of them is UncheckableCommand:
# what it runs cannot be told, so it is never trusted (a bound that skipped the rest would
# let padding hide the script at the end).
MAX_NESTING = 6
MAX_WORDS = 4_000
MAX_FOLDERS = 32
# Shell operators: each starts a new simple command.
OPERATORS = frozenset({"&&", "||", ";", ";;", "|", "|&", "&", "(", ")", "<", ">", ">>", "<<", "<&", ">&", "<>", ">|"})
# A word that is a shell command of its own (sh -c "…"): it has a space or an operator.
SHELL_TEXT = re.compile(r"[\s;&|()`]")
PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$")
JS_RUNTIMES = frozenset({"node", "nodejs", "bun", "deno", "tsx", "ts-node", "esno", "esr", "vite-node"})
# What `node server` tries after `server` itself (CommonJS and the TypeScript runners).
JS_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".json", ".node")
# The file a runtime runs when it is given a folder.
PYTHON_ENTRIES = ("__main__.py",)
JS_ENTRIES = ("index.js", "index.mjs", "index.cjs", "index.ts", "main.ts", "mod.ts", "package.json")
# Runners whose next words are programs from the project's node_modules/.bin.
PACKAGE_RUNNERS = frozenset({"npx", "bunx", "pnpx", "pnpm", "yarn", "npm"})
# Task runners and the files of the folder they execute.
MANIFESTS: dict[str, tuple[str, ...]] = {
    "make": ("Makefile", "makefile", "GNUmakefile"),
    "gmake": ("Makefile", "makefile", "GNUmakefile"),
    "npm": ("package.json",),
    "pnpm": ("package.json",),
    "yarn": ("package.json",),
    "bun": ("package.json",),
    "just": ("justfile", "Justfile", ".justfile"),
    "rake": ("Rakefile",),
    "nox": ("noxfile.py",),
    "tox": ("tox.ini",),
    "task": ("Taskfile.yml", "Taskfile.yaml"),
    "uv": ("pyproject.toml", "setup.py"),  # `uv run` builds the project before it runs anything
    "poetry": ("pyproject.toml", "setup.py"),
    "hatch": ("pyproject.toml", "setup.py"),
}
# Programs and options whose next word is a folder later words are relative to.
CHANGE_DIR_PROGRAMS = frozenset({"cd", "pushd"})
CHANGE_DIR_OPTIONS = frozenset({"-C", "--directory", "--cwd", "--prefix", "--project", "--dir", "--cd"})


class UncheckableCommand(ValueError):
    """A command too long or nested too deep to tell which files it runs."""


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=?+]([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")
_PWD = re.compile(r"\$\(\s*pwd\s*\)|`\s*pwd\s*`")


def executed_files(
    command: str | Sequence[str], *, cwd: Path, workspace: Path, environ: dict[str, str] | None = None
) -> list[Path]:
    """The existing regular files inside `workspace` that `command` would execute, sorted.

    `command`: a shell line (a hook's `sh -c` text) or an argument vector (an MCP server's
    `command` and `args`, no shell); `cwd`: the folder it runs in; `environ`: the variables it
    sees (default: cairn's, with `CLAUDE_PROJECT_DIR` and `CAIRN_PROJECT_DIR` the workspace).
    Raises UncheckableCommand beyond MAX_WORDS, MAX_NESTING or MAX_FOLDERS."""
    root = os.path.realpath(workspace)
    env = dict(os.environ if environ is None else environ)
    env.setdefault("CLAUDE_PROJECT_DIR", root)
    env.setdefault("CAIRN_PROJECT_DIR", root)
    walk = _Walk(root=root, alias=os.path.abspath(workspace), env=env)
    base = walk.rebased(os.path.normpath(os.path.join(root, walk.expand(str(cwd), root))))
    if isinstance(command, str):
        walk.shell(command, [base], 0)
    else:
        walk.segment([str(word) for word in command], [base], 0)
    return sorted(Path(p) for p in walk.found)


def files_of(commands: Iterable[tuple[str | Sequence[str], Path]], workspace: Path) -> list[Path]:
    """Every file the (command, cwd) pairs execute, once each, sorted (UncheckableCommand: one
    of them cannot be told)."""
    found: set[Path] = set()
    for command, cwd in commands:
        found.update(executed_files(command, cwd=cwd, workspace=workspace))
    return sorted(found)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


class _Walk:
    """One command's walk: what it found so far, the workspace it looks in."""

    def __init__(self, *, root: str, alias: str, env: dict[str, str]) -> None:
        self.root, self.alias, self.env = root, alias, env
        self.found: set[str] = set()
        self.words = 0

    def rebased(self, path: str) -> str:
        """`path` with the workspace as given (a symlinked folder) spelled as resolved."""
        if self.alias != self.root and _inside(path, self.alias):
            return self.root + path[len(self.alias) :]
        return path

    def folder(self, base: str, word: str) -> str:
        return self.rebased(os.path.normpath(os.path.join(base, word)))

    # -- reading the command -----------------------------------------------------------
    def shell(self, text: str, bases: list[str], depth: int) -> None:
        """A shell line: its simple commands in order (a `cd` moves the ones after it)."""
        segment: list[str] = []
        text = _PWD.sub(lambda _: bases[0], text)  # before the lexer cuts `$(pwd)` at its parentheses
        for word in _shell_words(text):
            if word in OPERATORS or word == "\n":
                bases = self.segment(segment, bases, depth, text)
                segment = []
            else:
                segment.append(word)
        self.segment(segment, bases, depth, text)

    def segment(self, words: list[str], bases: list[str], depth: int, parent: str = "") -> list[str]:
        """One simple command's words; returns the folders the commands after it run in."""
        self.words += len(words)
        if self.words > MAX_WORDS:
            raise UncheckableCommand(f"longer than {MAX_WORDS} words")
        if not words:
            return bases
        expanded = [self.expand(word, bases[0]) for word in words]
        names = [os.path.basename(word) for word in expanded]
        after, local = list(bases), list(bases)
        for i, word in enumerate(expanded):
            option, _, value = word.partition("=")
            if i == 1 and names[0] in CHANGE_DIR_PROGRAMS:  # `cd sub && ./x.sh`
                after.append(self.folder(bases[0], word))
                local.append(after[-1])
            elif i and expanded[i - 1] in CHANGE_DIR_OPTIONS:  # `make -C sub`, `uv run --directory sub`
                local.append(self.folder(bases[0], word))
            elif value and option in CHANGE_DIR_OPTIONS:  # `--directory=sub`
                local.append(self.folder(bases[0], value))
        if len(local) > MAX_FOLDERS:
            raise UncheckableCommand(f"moves to more than {MAX_FOLDERS} folders")
        for word in expanded:
            if SHELL_TEXT.search(word) and word != parent:  # (a line the lexer cannot read comes back whole)
                if depth >= MAX_NESTING:
                    raise UncheckableCommand(f"nested deeper than {MAX_NESTING} shells")
                self.shell(word, local, depth + 1)
            self.word(word, local)
            if "=" in word:
                self.word(word.partition("=")[2], local)
        self.programs(expanded, names, local)
        return after

    def programs(self, words: list[str], names: list[str], bases: list[str]) -> None:
        """The files no word spells: modules, extension-less scripts, entry files, manifests."""
        for i, name in enumerate(names):
            rest = words[i + 1 :]
            if PYTHON.match(name):
                for j, word in enumerate(rest):
                    module = rest[j + 1] if word == "-m" and j + 1 < len(rest) else word[2:] if word[:2] == "-m" else ""
                    if module:
                        self.module(module, bases)
                    self.word(word, bases, entries=PYTHON_ENTRIES)
            elif name in JS_RUNTIMES:
                for word in rest:
                    self.word(word, bases, suffixes=JS_SUFFIXES, entries=JS_ENTRIES)
            if name in PACKAGE_RUNNERS:
                for word in rest:
                    if word and not word.startswith("-") and "/" not in word:
                        self.word(os.path.join("node_modules", ".bin", word), bases)
            for manifest in MANIFESTS.get(name, ()):
                self.word(manifest, bases)

    def module(self, name: str, bases: list[str]) -> None:
        """`-m a.b.c`: a/__init__.py, a/b/__init__.py, then a/b/c.py or the package's own."""
        parts = [part for part in name.split(".") if part]
        if not parts or not all(part.isidentifier() for part in parts):
            return
        for i in range(1, len(parts)):
            self.word(os.path.join(*parts[:i], "__init__.py"), bases)
        last = os.path.join(*parts)
        for candidate in (last + ".py", os.path.join(last, "__main__.py"), os.path.join(last, "__init__.py")):
            self.word(candidate, bases)

    def expand(self, word: str, cwd: str) -> str:
        """The word as the shell would pass it: variables, `~`, `$(pwd)`."""
        word = _PWD.sub(lambda _: cwd, word)

        def one(match: re.Match) -> str:
            name = match.group(1) or match.group(3)
            return self.env.get(name) or (match.group(2) or "")

        word = _VARIABLE.sub(one, word)
        if word == "~" or word.startswith("~/"):
            word = os.path.expanduser(word)
        return word

    # -- finding files -------------------------------------------------------------------
    def word(
        self, word: str, bases: list[str], *, suffixes: tuple[str, ...] = (), entries: tuple[str, ...] = ()
    ) -> None:
        """Count the files `word` names from any of `bases` (with `suffixes`, or a folder's
        `entries`)."""
        word = word.strip("'\"")
        if not word or "\0" in word:
            return
        paths = [word] if os.path.isabs(word) else [os.path.join(base, word) for base in bases]
        for path in paths:
            path = self.rebased(os.path.normpath(path))
            for candidate in (path, *(path + suffix for suffix in suffixes)):
                self.regular(candidate)
            if entries and os.path.isdir(path):
                for entry in entries:
                    self.regular(os.path.join(path, entry))

    def regular(self, path: str) -> None:
        """Count `path` when it is a regular file (through links): as named when that is
        inside the workspace, and its target when that is."""
        try:
            info = os.stat(path)
        except (OSError, ValueError):
            return
        if not stat.S_ISREG(info.st_mode):
            return
        if _inside(path, self.root):
            self.found.add(path)
        real = os.path.realpath(path)
        if real != path and _inside(real, self.root):
            self.found.add(real)


def _shell_words(text: str) -> list[str]:
    """The words and operators of a shell line, quotes removed (`a&&b` is three); a line
    that does not parse (an open quote) is split at spaces instead."""
    lexer = shlex.shlex(text.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: list[str] = []
    try:
        for word in lexer:
            words.append(word)
            if len(words) > MAX_WORDS:
                raise UncheckableCommand(f"longer than {MAX_WORDS} words")
    except UncheckableCommand:
        raise
    except ValueError:
        return text.split()
    return words
