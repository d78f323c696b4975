"""The tree-sitter-bash tree of a command walked into the simple commands bash will run.

Only the node types listed here are understood (lists, pipelines, simple commands, file
redirections, plain words); any other node, any text between nodes the parser skipped over and
any place where the parser's word boundaries might differ from bash's raises `Unsafe` with why.
Each word's value comes from agent/tools/shell_words.py; a redirection passes only when it is
harmless wherever it applies (`2>&1`, `>/dev/null`, `<file`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.tools.shell_words import Unsafe, word_value


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


class CommandWalk:
    """One walk over one command's tree; `commands` holds the simple commands found so far
    (what was found before an `Unsafe` is still shown with its reason)."""

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
