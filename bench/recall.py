"""What a request still shows of the tool output the model went on to use (SPEC §12.13).

A cheaper request that hides what the model needs is not cheaper: a real model pages it
back, an extra round trip that re-reads the whole prompt. So each recorded assistant message
is checked against the request that produced it: the distinctive tokens it uses (in its text
and its tool-call arguments) that appeared earlier only inside tool results are facts it took
from tool output, and a fact is *recalled* when that request contains it.

Distinctive: at least 6 characters, and an identifier, path or number: it contains one of
`_ . / : -`, a lower-to-upper case change or a digit next to a letter, or 4+ digits in a row.
Prose words ("because", "function") are not facts; `parse_any`, `src/app.py`, `0x1f3a`,
`parseAny`, `2025-01-07` and `123456` are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from agent.session.models import Message

MIN_FACT_CHARS = 6
# Runs of identifier and path characters; edges trimmed of what ends a sentence or a quote.
_RUN = re.compile(r"[A-Za-z0-9_./:\-]+")
_EDGE = "./:-"
# JSON escapes inside a result's text (a terminal result is JSON): `\\nfoo` is `foo`.
_ESCAPE = re.compile(r"\\[nrtbf\"\\/]|\\u[0-9a-fA-F]{4}")
_MARKS = re.compile(r"[_./:\-]|[a-z][A-Z]|[0-9][A-Za-z]|[A-Za-z][0-9]|[0-9]{4}")


def distinctive_tokens(text: str) -> set[str]:
    """The tokens of `text` that can carry a fact (see the module docstring)."""
    out: set[str] = set()
    for run in _RUN.findall(_ESCAPE.sub(" ", text)):
        token = run.strip(_EDGE) if run[0] != "/" else "/" + run[1:].strip(_EDGE)
        if len(token) >= MIN_FACT_CHARS and _MARKS.search(token):
            out.add(token)
    return out


def _strings(value: object) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def argument_tokens(arguments: str) -> set[str]:
    """The facts a tool call's JSON arguments carry: the values, decoded (argument names are
    the schema's words; escapes like `\\n` would glue letters onto a token)."""
    try:
        args = json.loads(arguments or "{}")
    except ValueError:
        return distinctive_tokens(arguments)
    out: set[str] = set()
    for text in _strings(args):
        out |= distinctive_tokens(text)
    return out


def used_tokens(message: Message) -> set[str]:
    """What an assistant message uses: its text and its tool-call arguments."""
    out = distinctive_tokens(message.content or "")
    for call in message.tool_calls:
        out |= argument_tokens(call.arguments)
    return out


def facts_taken_from_tools(history: list[Message], system_prompt: str = "") -> dict[int, frozenset[str]]:
    """For each assistant message (by index in `history`), the facts it took from tool
    output: tokens it uses that earlier messages showed only inside tool results."""
    from_tools: set[str] = set()
    from_others: set[str] = distinctive_tokens(system_prompt)
    facts: dict[int, frozenset[str]] = {}
    for index, message in enumerate(history):
        if message.role == "assistant":
            used = used_tokens(message)
            facts[index] = frozenset((used & from_tools) - from_others)
            from_others |= used
        elif message.role == "tool":
            from_tools |= distinctive_tokens(message.content or "")
        else:
            from_others |= distinctive_tokens(message.content or "")
    return facts


def sent_tokens(sent: dict) -> set[str]:
    """The distinctive tokens of one message as a request sends it (text or content parts,
    tool-call arguments)."""
    out: set[str] = set()
    content = sent.get("content")
    if isinstance(content, str):
        out |= distinctive_tokens(content)
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out |= distinctive_tokens(part["text"])
    for call in sent.get("tool_calls") or ():
        out |= argument_tokens((call.get("function") or {}).get("arguments") or "")
    return out
