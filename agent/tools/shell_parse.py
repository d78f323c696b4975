"""Shell commands parsed for approvals: the simple commands bash will run, or why we cannot tell.

`parse_command` is conservative by construction. tree-sitter-bash gives the structure (lists,
pipelines, simple commands, redirections); the value of every word is then computed by our
own strict evaluator from the raw text, for a small subset of bash whose meaning is exact:
plain characters, `\\x` escapes, '…' and "…" without `$` or backquotes. Anything outside that
subset, anything the parser reports as an error, any node type not on the list below and any
place where the parser's word boundaries might differ from bash's is *unsafe*: the command asks.
Why not trust the parser alone: tree-sitter-bash reads `"$\\<newline>(cmd)"` as a plain
string while bash joins the backslash-newline and runs `cmd` (SPEC §8), so a backslash-newline
anywhere makes a command unsafe before it is parsed at all.

Which parsed commands only read is agent/tools/read_only.py. Nothing here touches the file
system.

tree-sitter is imported on first use only: never on the path to the first screen.
"""

from __future__ import annotations

import os
import re
import threading
import unicodedata
from dataclasses import dataclass

# Longer commands always ask: no real command needs more (the kernel's limit for one
# argument, `bash -c <command>`, is 128 KiB).
MAX_COMMAND_BYTES = 128 * 1024


@dataclass(frozen=True)
class Redirect:
    fd: str  # "" when implied (`>x` is fd 1)
    op: str  # ">", ">>", "&>", "&>>", ">|", ">&", "<&", "<", ">&-", "<&-"
    target: str  # the evaluated word; "" for a close (`>&-`)


@dataclass(frozen=True)
class SimpleCommand:
    """One simple command as bash runs it: its words in order (redirections taken out)."""

    words: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()


@dataclass(frozen=True)
class ParsedCommand:
    commands: tuple[SimpleCommand, ...] = ()
    unsafe: str = ""  # why the command cannot be fully accounted for; "" when it can


class Unsafe(Exception):
    """Raised inside the parse with the reason the command asks."""


# -- the parser ------------------------------------------------------------------------

_parser_lock = threading.Lock()
_parser = None


def _parse_tree(source: bytes):
    global _parser
    with _parser_lock:  # a tree-sitter Parser is not thread-safe
        if _parser is None:
            from tree_sitter_language_pack import get_parser

            _parser = get_parser("bash")
        return _parser.parse(source)


# Node types that only ever mean one thing to us; the reason a command using them asks.
_NODE_REASONS = {
    "command_substitution": "it uses $(…) substitution",
    "process_substitution": "it uses process substitution",
    "subshell": "it uses a subshell",
    "compound_statement": "it uses a { …; } group",
    "heredoc_redirect": "it uses a here-document",
    "herestring_redirect": "it uses a here-string (<<<)",
    "simple_expansion": "it expands a variable ($…)",
    "expansion": "it expands a variable (${…})",
    "arithmetic_expansion": "it uses arithmetic expansion $((…))",
    "ansi_c_string": "it uses ANSI-C quoting $'…'",
    "translated_string": 'it uses $"…" quoting',
    "variable_assignment": "it sets a variable (NAME=…)",
    "variable_assignments": "it sets a variable (NAME=…)",
    "function_definition": "it defines a function",
    "negated_command": "it negates a command (!)",
    "test_command": "it uses a [[ … ]] test",
    "brace_expression": "it uses brace expansion {…}",
    "declaration_command": "it declares variables",
    "unset_command": "it unsets variables",
    "comment": "it has a comment inside a command",
    "ERROR": "it cannot be parsed",
}
_CONTROL_FLOW = {
    "if_statement",
    "while_statement",
    "for_statement",
    "c_style_for_statement",
    "case_statement",
    "until_statement",
    "select_statement",
}
_WORD_TYPES = {"word", "string", "raw_string", "concatenation", "number"}
_STATEMENT_TYPES = {"command", "list", "pipeline", "redirected_statement"}
_SEPARATORS = {";", "&", "&&", "||", "|", "|&", "\n"}


def _node_reason(node) -> str:
    if node.type in _CONTROL_FLOW:
        return f"it uses control flow ({node.type.split('_')[0]})"
    if node.type == "command_substitution" and node.text.startswith(b"`"):
        return "it uses backticks (command substitution)"
    return _NODE_REASONS.get(node.type, f"it uses shell syntax cairn does not check ({node.type})")


# -- raw text and words -------------------------------------------------------------------

_UNQUOTED_PLAIN = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:,=+@%^!")
_GLOB = set("*?[]")
_BRACES = set("{}")
_METACHARS = set(" \t\n|&;()<>")


def _raw_problem(command: str) -> str:
    if "\\\n" in command:
        return "it continues a line with a backslash-newline"
    if not command.isascii() and not _locale_reads_utf8():
        return "it has non-ASCII text and bash's locale may read its bytes differently"
    for ch in command:
        if ch in "\n\t":
            continue
        cat = unicodedata.category(ch)
        if cat[0] == "C" or (cat[0] == "Z" and ch != " "):
            return f"it contains the invisible character U+{ord(ch):04X}"
    return ""


def _locale_reads_utf8() -> bool:
    """Whether bash (which gets our environment) reads the UTF-8 bytes of a command as we do.
    In a legacy multibyte locale (GBK, Big5, Shift-JIS…) the second byte of a character may
    be `\\`, `|` or a brace: the words would split differently. C and single-byte locales
    read a UTF-8 byte >= 0x80 as one character, never as an operator."""
    value = (os.environ.get("LC_ALL") or os.environ.get("LC_CTYPE") or os.environ.get("LANG") or "C").casefold()
    charset = value.split(".", 1)[1].split("@", 1)[0] if "." in value else ""
    if charset in ("utf-8", "utf8") or value in ("c", "posix"):
        return True
    return charset.startswith(("iso8859", "iso-8859", "latin", "koi8", "cp125")) or (
        not charset and value.startswith(("en_", "de_", "fr_", "es_", "it_", "pt_", "nl_"))
    )


def _dollar_reason(text: str, i: int) -> str:
    after = text[i + 1 : i + 3]
    if after.startswith("(("):
        return "it uses arithmetic expansion $((…))"
    if after.startswith("("):
        return "it uses $(…) substitution"
    if after.startswith("{"):
        return "it expands a variable (${…})"
    if after.startswith("'"):
        return "it uses ANSI-C quoting $'…'"
    if after.startswith('"'):
        return 'it uses $"…" quoting'
    return "it expands a variable ($…)"


def word_value(text: str) -> str:
    """What bash makes of one word, for the subset whose meaning is exact; else `Unsafe`."""
    if not text:
        raise Unsafe("it cannot be parsed (an empty word)")
    if text[0] == "#":
        raise Unsafe("it cannot be parsed (# starts a word)")
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise Unsafe("it has an unterminated quote")
            out.append(text[i + 1 : end])
            i = end + 1
        elif ch == '"':
            i += 1
            while True:
                if i >= n:
                    raise Unsafe("it has an unterminated quote")
                c = text[i]
                if c == '"':
                    i += 1
                    break
                if c == "$":
                    raise Unsafe(_dollar_reason(text, i))
                if c == "`":
                    raise Unsafe("it uses backticks (command substitution)")
                if c == "\\" and i + 1 < n and text[i + 1] in '$`"\\':
                    out.append(text[i + 1])
                    i += 2
                    continue
                out.append(c)
                i += 1
        elif ch == "\\":
            if i + 1 >= n:
                raise Unsafe("it ends a word with a backslash")
            out.append(text[i + 1])
            i += 2
        elif ch == "$":
            raise Unsafe(_dollar_reason(text, i))
        elif ch == "`":
            raise Unsafe("it uses backticks (command substitution)")
        elif ch in _GLOB:
            raise Unsafe(f"it uses a glob pattern ({ch})")
        elif ch in _BRACES:
            raise Unsafe("it uses brace expansion {…}")
        elif ch == "~":
            if i == 0 or text[i - 1] in "=:":
                raise Unsafe("it uses ~ (tilde expansion)")
            out.append(ch)
            i += 1
        elif ch == "#":
            out.append(ch)  # not at the start of a word: a plain character to bash
            i += 1
        elif ch in _UNQUOTED_PLAIN or (ord(ch) > 127 and unicodedata.category(ch)[0] not in "CZ"):
            out.append(ch)
            i += 1
        elif ch in _METACHARS:
            raise Unsafe("it cannot be parsed (the parser and bash could split it differently)")
        else:
            raise Unsafe(f"it uses {ch!r} unquoted")
    return "".join(out)


# -- the walk -------------------------------------------------------------------------------


class _Walk:
    def __init__(self, source: bytes) -> None:
        self.src = source
        self.commands: list[SimpleCommand] = []

    def text(self, a: int, b: int) -> str:
        return self.src[a:b].decode("utf-8")

    def gap(self, a: int, b: int, allowed: str, *, need: bool = False) -> None:
        gap = self.text(a, b)
        if any(c not in allowed for c in gap) or (need and not gap):
            raise Unsafe("it cannot be parsed (unexpected text between words)")

    def run(self, root) -> None:
        # Iterative: `a && a && …` nests as deep as it is long.
        stack: list = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, tuple):  # redirections of a list, for its last command
                last = self.commands[-1]
                self.commands[-1] = SimpleCommand(last.words, last.redirects + node)
            elif node.type in ("program", "list", "pipeline"):
                stack.extend(reversed(self.container(node)))
            elif node.type == "redirected_statement":
                body = node.child_by_field_name("body")
                if body is not None and body.type in ("list", "pipeline"):
                    stack.append(self.trailing_redirects(node, body))
                    stack.append(body)
                else:
                    self.simple(node)
            elif node.type == "command":
                self.simple(node)
            else:
                raise Unsafe(_node_reason(node))

    def container(self, node) -> list:
        """Statements of a program/list/pipeline, their operators and comments checked."""
        statements = []
        pos = node.start_byte
        for child in node.children:
            self.gap(pos, child.start_byte, " \t\n")
            if not child.is_named:
                if child.type not in _SEPARATORS:
                    raise Unsafe(f"it uses {child.type!r}, which cairn does not check")
            elif child.type == "comment":
                before = self.src[child.start_byte - 1 : child.start_byte]
                after = self.src[child.end_byte : child.end_byte + 1]
                if (child.start_byte and before not in (b" ", b"\t", b"\n")) or after not in (b"", b"\n"):
                    raise Unsafe("it has a # the parser and bash could read differently")
            elif child.type in _STATEMENT_TYPES:
                statements.append(child)
            else:
                raise Unsafe(_node_reason(child))
            pos = child.end_byte
        self.gap(pos, node.end_byte, " \t\n")
        return statements

    def trailing_redirects(self, node, body) -> tuple[Redirect, ...]:
        """tree-sitter hangs `a && b 2>/dev/null`'s redirection on the whole list; bash on `b`.
        Only redirections harmless wherever they apply get this far, and words after them
        (bash's arguments of `b`) ask."""
        redirects = []
        pos = body.end_byte
        for child in node.children[1:]:
            self.gap(pos, child.start_byte, " \t")
            if child.type != "file_redirect":
                raise Unsafe(_node_reason(child))
            self.digits_before(child)
            redirect, extra = self.redirect(child)
            if extra:
                raise Unsafe("it cannot be parsed (words after a redirection of a list)")
            redirects.append(redirect)
            pos = child.end_byte
        self.gap(pos, node.end_byte, " \t")
        return tuple(redirects)

    def digits_before(self, redirect) -> None:
        """bash reads `<2>&1` as `<` then `2>&1`: digits right before an operator are its fd."""
        if self.src[redirect.start_byte - 1 : redirect.start_byte].isdigit():
            raise Unsafe("it cannot be parsed (digits right before a redirection)")

    def simple(self, node) -> None:
        """A command, or a redirected_statement around one: words in order, redirects apart."""
        words: list[str] = []
        redirects: list[Redirect] = []
        first_raw = ""
        parts = [node]
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            if body is None or body.type != "command":
                raise Unsafe(_node_reason(body) if body is not None else "it redirects nothing")
            parts = list(node.children)
        pos = node.start_byte
        prev_word = False
        for part in parts:
            for child in part.children if part.type == "command" else [part]:
                is_redirect = child.type == "file_redirect"
                starts_digit = self.src[child.start_byte : child.start_byte + 1].isdigit()
                self.gap(pos, child.start_byte, " \t", need=prev_word and (not is_redirect or starts_digit))
                if is_redirect and prev_word:
                    self.digits_before(child)
                if child.type == "command_name":
                    if words:
                        raise Unsafe("it cannot be parsed (a word before the command name)")
                    first_raw = self.text(child.start_byte, child.end_byte)
                    words.append(self.word(child))
                elif child.type in _WORD_TYPES:
                    if not words:
                        first_raw = self.text(child.start_byte, child.end_byte)
                    words.append(self.word(child))
                elif is_redirect:
                    redirect, extra = self.redirect(child)
                    redirects.append(redirect)
                    if extra and not words:
                        first_raw = extra[0][1]
                    words.extend(value for value, _ in extra)
                else:
                    raise Unsafe(_node_reason(child))
                prev_word = True
                pos = child.end_byte
        self.gap(pos, node.end_byte, " \t")
        if not words:
            raise Unsafe("it has a redirection without a command")
        if re.match(r"[A-Za-z_][A-Za-z0-9_]*\+?=", first_raw):
            raise Unsafe("it sets a variable (NAME=…)")
        self.commands.append(SimpleCommand(tuple(words), tuple(redirects)))

    def word(self, node) -> str:
        if node.type == "command_name":
            if node.named_child_count != 1:
                raise Unsafe("it cannot be parsed (an unusual command name)")
            node = node.named_children[0]
        if node.type not in _WORD_TYPES:
            raise Unsafe(_node_reason(node))
        return word_value(self.text(node.start_byte, node.end_byte))

    def redirect(self, node) -> tuple[Redirect, list[tuple[str, str]]]:
        fd, op = "", ""
        dests: list[tuple[str, str]] = []
        pos = node.start_byte
        for child in node.children:
            if child.type == "file_descriptor":
                fd = self.text(child.start_byte, child.end_byte)
                if not fd.isdigit() or len(fd) > 3:
                    raise Unsafe("it redirects an unusual file descriptor")
            elif not child.is_named:
                if op or child.start_byte != pos:
                    raise Unsafe("it cannot be parsed (an unusual redirection)")
                op = child.type
            elif child.type in _WORD_TYPES:
                if not op:
                    raise Unsafe("it cannot be parsed (an unusual redirection)")
                self.gap(pos, child.start_byte, " \t", need=bool(dests))
                raw = self.text(child.start_byte, child.end_byte)
                dests.append((word_value(raw), raw))
            else:
                raise Unsafe(_node_reason(child))
            pos = child.end_byte
        if op in (">&-", "<&-"):
            target, extra = "", dests
        elif not dests:
            raise Unsafe("it cannot be parsed (a redirection without a target)")
        else:
            target, extra = dests[0][0], dests[1:]
        redirect = Redirect(fd, op, target)
        self.check_redirect(redirect)
        return redirect, extra

    @staticmethod
    def check_redirect(r: Redirect) -> None:
        if r.op in (">&-", "<&-"):
            return
        if r.op in (">&", "<&") and (r.target.isdigit() and len(r.target) <= 3 or r.target == "-"):
            return  # a copy of a file descriptor (`2>&1`)
        if r.op in (">", ">>", "&>", "&>>", ">|", ">&") and r.target == "/dev/null":
            return
        if r.op == "<":
            return  # reads a file: the caller checks the path like any other it reads
        if r.op in (">", ">>", "&>", "&>>", ">|", ">&"):
            raise Unsafe(f"it redirects output into {r.target or 'a file'}")
        raise Unsafe(f"it uses the redirection {r.op!r}, which cairn does not check")


# -- commands that run other code or change the shell --------------------------------------

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


def _runs_other_code(words: tuple[str, ...]) -> str:
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


def parse_command(command: str) -> ParsedCommand:
    """The simple commands of `command`, or why it cannot be fully accounted for."""
    try:
        source = command.encode("utf-8")
    except UnicodeEncodeError:
        return ParsedCommand(unsafe="it contains characters that are not valid Unicode")
    if len(source) > MAX_COMMAND_BYTES:
        return ParsedCommand(unsafe="the command is too long to check")
    if not command.strip():
        return ParsedCommand(unsafe="it is empty")
    problem = _raw_problem(command)
    if problem:
        return ParsedCommand(unsafe=problem)
    try:
        tree = _parse_tree(source)
    except Exception as exc:  # noqa: BLE001 - no parser (or a broken one): nothing can be checked
        return ParsedCommand(unsafe=f"it cannot be parsed (the shell parser failed: {type(exc).__name__})")
    walk = _Walk(source)
    try:
        if tree.root_node.has_error:
            raise Unsafe("it cannot be parsed")
        walk.run(tree.root_node)
        if not walk.commands:
            raise Unsafe("it is empty")
        for cmd in walk.commands:
            reason = _runs_other_code(cmd.words)
            if reason:
                raise Unsafe(reason)
    except Unsafe as exc:
        return ParsedCommand(tuple(walk.commands), unsafe=str(exc))
    except Exception as exc:  # noqa: BLE001 - a tree this walk does not expect: ask, never crash
        return ParsedCommand(unsafe=f"it cannot be parsed ({type(exc).__name__})")
    return ParsedCommand(tuple(walk.commands))
