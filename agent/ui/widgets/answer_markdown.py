"""The Markdown parser for a model's answers (agent/ui/widgets/chat.py): text stays text.

Its output is inert (agent/fs/terminal_text.py) as well as its input: the chat makes an answer
inert before parsing it, but an entity (`&#x202e;`, `&#13;`) becomes its character only in
parsing, so a last rule makes every parsed token's text inert again.
"""

from __future__ import annotations

from agent.fs.terminal_text import inert


def text_only_markdown():
    """The parser for answers: GitHub-flavoured Markdown with raw HTML off. A model's
    `List<String>`, `Vec<T>`, `<div>` or a traceback's `<module>` is text to show; parsed as
    HTML, Textual's Markdown (which renders no HTML) would drop it from the screen. A single
    newline is a line break (`breaks`), as in Claude Code and Codex: an answer of plain lines
    (a list of files, rows of output pasted back) keeps its lines instead of running together."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("gfm-like", {"html": False, "breaks": True})
    # markdown-it's `breaks` only changes its HTML output; Textual reads the tokens, so the
    # soft breaks themselves become hard ones (a core rule: markdown-it's supported hook).
    parser.core.ruler.push("cairn_hard_breaks", _hard_breaks)
    # The parsed text made inert again: entities are decoded in parsing.
    parser.core.ruler.push("cairn_inert", _inert_tokens)
    return parser


def _hard_breaks(state) -> None:
    for token in state.tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"


def _inert_tokens(state) -> None:
    for token in state.tokens:
        token.content = inert(token.content)
        for child in token.children or ():
            child.content = inert(child.content)
