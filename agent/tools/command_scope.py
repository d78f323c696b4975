"""What "always" remembers for one simple command, and how a remembered prefix matches.

A rule is a prefix of whole words (`git status`, `python -m pytest`), so it must end at the
word that says which code runs. For most programs that is the program, or its subcommand
(`git commit`, `npm test`). For an interpreter or launcher it is further on: `python -m pytest`
is pytest and `python -c …` is anything, so "always" given for the first must never cover the
second (Claude Code offers `python -m pytest:*` there). A launcher's scope runs through the
module, script, package or script name it runs; code given inline (`-c`, `-e`) is scoped to
itself, exactly; an option cairn does not know makes the scope the whole command (it asks
again for any other).

A word the shell would not read back as written (a space, a quote, a parenthesis) is quoted
in the prefix; `prefix_matches` reads such a prefix as the shell would, so a scope
offered for a command always covers that command.
"""

from __future__ import annotations

import re
import shlex

# Interpreters run the module (`-m`), the inline code or the script their arguments name.
PYTHON_NAME = re.compile(r"(python|pypy)(\d+(\.\d+)*)?")
# Per interpreter family: options that run inline code (the next word), that name a module
# to run (the next word), that take a value which is not code, and flags that change nothing
# about which code runs.
INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]] = {
    "python": (
        frozenset({"-c"}),
        frozenset({"-m"}),
        frozenset({"-W", "-X"}),
        frozenset({"-u", "-B", "-O", "-OO", "-s", "-S", "-E", "-I", "-q", "-b", "-bb", "-P", "-v"}),
    ),
    "node": (
        frozenset({"-e", "--eval", "-p", "--print"}),
        frozenset(),
        frozenset(),
        frozenset({"--no-warnings", "--enable-source-maps", "--trace-warnings", "--test"}),
    ),
    "ruby": (frozenset({"-e"}), frozenset(), frozenset(), frozenset({"-w", "-W", "-v"})),
    "perl": (frozenset({"-e", "-E"}), frozenset(), frozenset(), frozenset({"-w", "-W"})),
    "php": (frozenset({"-r"}), frozenset(), frozenset(), frozenset()),
    "bash": (frozenset(), frozenset(), frozenset(), frozenset({"-e", "-u", "-x", "-eu", "-ex", "-eux"})),
}
INTERPRETER_FAMILY = {"node": "node", "ruby": "ruby", "perl": "perl", "php": "php", "bash": "bash", "sh": "bash"}
# Launchers whose next word (after options, if any) names the package or tool they run.
PACKAGE_RUNNERS = {"npx", "bunx", "pnpx"}
# Program + subcommand that runs the next word: the script, package, tool or file it names.
LAUNCHING_SUBCOMMANDS = {
    ("uv", "run"),
    ("uv", "tool"),
    ("uvx", ""),
    ("poetry", "run"),
    ("pipx", "run"),
    ("pdm", "run"),
    ("hatch", "run"),
    ("pipenv", "run"),
    ("rye", "run"),
    ("npm", "run"),
    ("npm", "run-script"),
    ("npm", "exec"),
    ("pnpm", "run"),
    ("pnpm", "exec"),
    ("pnpm", "dlx"),
    ("yarn", "run"),
    ("yarn", "dlx"),
    ("yarn", "exec"),
    ("bun", "run"),
    ("bun", "x"),
    ("deno", "run"),
    ("deno", "task"),
    ("go", "run"),
}
# Launcher flags that take no value, so the word after them is still what runs.
RUNNER_FLAGS = {"-y", "--yes", "-q", "--quiet", "--no-install", "--offline", "--frozen", "--locked", "--no-sync"}
# Programs whose subcommand says what runs: options before it (`git -C sub commit`) keep the
# scope going to the subcommand, not back to every command of the program.
SUBCOMMAND_PROGRAMS = {"git", "cargo", "go", "docker", "podman", "kubectl", "helm", "gh", "pip", "pip3", "make"}
# Runners that take the command to run, scoped in turn (`uv run python -m pytest`).
NESTING_RUNNERS = {"uv", "uvx", "poetry", "pdm", "hatch", "pipenv", "rye", "pipx"}


def _subcommand(word: str) -> bool:
    """A word that looks like a subcommand: not an option, a path or a value."""
    return bool(word) and word[0].isalpha() and all(c.isalnum() or c in "-_:" for c in word)


def _interpreter(name: str) -> str:
    base = name.rsplit("/", 1)[-1]
    if PYTHON_NAME.fullmatch(base):
        return "python"
    return INTERPRETER_FAMILY.get(base, "")


def _interpreter_scope(words: list[str], family: str) -> list[str]:
    """Through the module, the inline code or the script; the whole command when an option
    is not known to leave which code runs alone."""
    code, module, valued, flags = INTERPRETERS[family]
    i = 1
    while i < len(words):
        word = words[i]
        if word in code or word in module:
            return words[: i + 2]
        if word in valued:
            i += 2
            continue
        if word in flags:
            i += 1
            continue
        if word == "-" or word.startswith("-"):
            return words
        return words[: i + 1]  # the script
    return words


def _launched_scope(words: list[str], start: int) -> list[str]:
    """`words[start:]` is what a launcher runs: through the first word that is not an option
    (the tool, script or package), scoped again when it is itself an interpreter or runner."""
    i = start
    while i < len(words) and words[i].startswith("-"):
        valued = words[i] not in RUNNER_FLAGS and "=" not in words[i]
        if valued and i + 1 < len(words) and not words[i + 1].startswith("-"):
            return words  # an option that may take the next word: cairn cannot tell which runs
        i += 1
    if i >= len(words):
        return words
    if i == start and words[0].rsplit("/", 1)[-1] in NESTING_RUNNERS:
        inner = scope_words(words[start:])
        return words[:start] + inner
    return words[: i + 1]


def scope_words(words: list[str]) -> list[str]:
    """The words "always" remembers for one simple command (a prefix of `words`)."""
    if not words:
        return []
    base = words[0].rsplit("/", 1)[-1]
    family = _interpreter(words[0])
    if family:
        return _interpreter_scope(words, family)
    if base in PACKAGE_RUNNERS:
        return _launched_scope(words, 1)
    second = words[1] if len(words) > 1 else ""
    if (base, "") in LAUNCHING_SUBCOMMANDS:
        return _launched_scope(words, 1)
    if (base, second) in LAUNCHING_SUBCOMMANDS:
        return _launched_scope(words, 2)
    if _subcommand(second):
        return words[:2]
    if base in SUBCOMMAND_PROGRAMS and second.startswith("-"):
        return _launched_scope(words, 1)
    return words[:1]


def command_scope(words: list[str]) -> str:
    """What "always" covers for one simple command, as the rule's text: its program, plus a
    subcommand (`git status`, `npm test`) or what a launcher runs (`python -m pytest`,
    `npx prettier`, `uv run pytest`, `python -c '…'` exactly)."""
    return shlex.join(scope_words(words))


def prefix_words(prefix: str) -> list[str]:
    """A rule's words: split on whitespace, or as the shell would when it quotes a word."""
    if not set(prefix) & set("'\"\\"):
        return prefix.split()
    try:
        return shlex.split(prefix)
    except ValueError:
        return prefix.split()


def prefix_matches(words: list[str], prefix: str) -> bool:
    """`pytest -x tests` starts with `pytest`; `git statusx` does not start with `git status`."""
    want = prefix_words(prefix)
    return bool(want) and words[: len(want)] == want
