"""Commands that run other code or change the shell: what follows them cannot be checked.

A simple command whose words are known exactly may still hand a string to another program to
run (`eval`, `sudo`, `sh -c`…), or change how bash reads the rest of the command (aliases,
options, variables, the directory stack). Each asks, with why.
"""

from __future__ import annotations

RESERVED = {
    "if",
    "then",
    "else",
    "elif",
    "fi",
    "case",
    "esac",
    "for",
    "select",
    "while",
    "until",
    "do",
    "done",
    "in",
    "function",
    "time",
    "coproc",
    "{",
    "}",
    "!",
    "[[",
    "]]",
}
RUNNERS = {
    "eval",
    "exec",
    "source",
    ".",
    "command",
    "builtin",
    "xargs",
    "sudo",
    "doas",
    "su",
    "env",
    "nohup",
    "timeout",
    "nice",
    "ionice",
    "setsid",
    "stdbuf",
    "chroot",
    "watch",
    "parallel",
    "busybox",
    "unbuffer",
    "script",
    "flock",
    "runuser",
    "pkexec",
    "strace",
    "ltrace",
    "gdb",
}
SHELLS = {"sh", "bash", "zsh", "dash", "ksh", "mksh", "fish", "csh", "tcsh", "yash", "ash"}
# Builtins that change how the rest of the command is read or run (aliases, options,
# variables, the directory stack): what follows them cannot be checked.
STATE_BUILTINS = {
    "alias",
    "unalias",
    "shopt",
    "enable",
    "trap",
    "export",
    "declare",
    "typeset",
    "local",
    "readonly",
    "unset",
    "hash",
    "pushd",
    "popd",
    "let",
    "read",
    "mapfile",
    "readarray",
    "getopts",
    "bind",
    "complete",
    "compgen",
    "compopt",
    "fc",
    "history",
}
# `set` with these only: stop on errors, trace; nothing that changes how words are read.
SAFE_SET_FLAGS = {
    "-e",
    "+e",
    "-u",
    "+u",
    "-x",
    "+x",
    "-eu",
    "-ue",
    "-ex",
    "-xe",
    "-eux",
    "-eo",
    "-euo",
    "-o",
    "+o",
    "pipefail",
    "errexit",
    "nounset",
    "xtrace",
}


def runs_other_code(words: tuple[str, ...]) -> str:
    """Why this simple command runs other code or changes the shell; "" when it does neither."""
    name = words[0]
    base = name.rsplit("/", 1)[-1]
    if name in RESERVED:
        return f"it uses the shell keyword {name!r} where cairn expects a command"
    if "=" in name:
        return "it sets a variable (NAME=…)"
    if base in RUNNERS:
        return f"it runs another command through {base}"
    if base in SHELLS and any(w.startswith("-") and not w.startswith("--") and "c" in w for w in words[1:]):
        return f"it runs a command string with {base} -c"
    if name in STATE_BUILTINS:
        return f"it changes the shell's state ({name}), so what follows cannot be checked"
    if name == "set" and not all(w in SAFE_SET_FLAGS for w in words[1:]):
        return "it changes the shell's options (set), so what follows cannot be checked"
    if name == "printf" and any(w.startswith("-") and "v" in w for w in words[1:]):
        return "it sets a variable (printf -v)"
    if name == "cd" and (len(words) != 2 or words[1].startswith("-") or not words[1]):
        return "it changes to a folder cairn cannot tell (cd without one plain folder)"
    return ""
