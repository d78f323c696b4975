"""Pass 5: a tool output too large to send inline becomes a preview and a context-file ref.

A 2 MB build log in the request costs the whole context and still gets cut somewhere;
the model usually needs one error line from it. So an output longer than `limit`
characters reaches the model as its first and last lines (about `preview` characters in
all), its size, and the id of a context file holding all of it, with a one-line hint of
which context tool to call (seed 004). The stored message keeps the whole output; the id
is derived from the message, so the same history always gives the same request.

Terminal results keep their JSON shape (`command`, `exitCode`, `stdout`, `stderr`), with
each stream previewed, so they still read as a command's result. Results of the context
tools themselves are never externalised: they are bounded already, and a ref to a page of
a ref would send the model in circles. Nor are file reads (SPEC §12.13): the model asked for
that content, and a preview of it is a round trip later; nor a loaded skill's
instructions (SPEC §13.3: they stay loaded for the session).
"""

from __future__ import annotations

import json
from operator import attrgetter, is_

from agent.context.facts import Facts, facts_of
from agent.context.files.refs import artifact_ref_id
from agent.context.state import PassMemory
from agent.session.models import Message

NAME = "externalize"
CONTEXT_TOOL_PREFIX = "context-"
TERMINAL_TOOL = "terminal-execute"
# A file the model asked to read is content it asked for, not volume: never previewed
# (SPEC §12.13). The tool bounds itself (a line window), and seed 000 retires older reads.
READ_TOOL = "filesystem-read"
# A loaded skill's instructions stay loaded for the session (SPEC §13.3): a preview would
# leave the model following the first and last lines of them.
SKILL_TOOL = "skill-load"
PREVIEW_CACHE_LIMIT = 20_000  # previews kept per session (about a kilobyte each)
_LENGTH = attrgetter("length")


def _hint(ref: str) -> str:
    return (
        f'Full output in context file "{ref}": use context-grep to search it, context-tail for its '
        f"end, context-read to page through it."
    )


def preview_lines(text: str, budget: int) -> tuple[str, int]:
    """The first and last lines of `text` within about `budget` characters, and how many
    lines were left out between them. A line longer than the budget is cut."""
    lines = text.split("\n")
    half = max(budget // 2, 1)
    head: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > half:
            if not head:
                head.append(line[:half] + " …")
            break
        head.append(line)
        used += len(line) + 1
    tail: list[str] = []
    used = 0
    for line in reversed(lines[len(head) :]):
        if used + len(line) + 1 > half:
            if not tail:
                tail.append("… " + line[-half:])
            break
        tail.append(line)
        used += len(line) + 1
    tail.reverse()
    omitted = len(lines) - len(head) - len(tail)
    if omitted <= 0:
        return text if len(text) <= budget else "\n".join(head + tail), 0
    return "\n".join(head) + f"\n[… {omitted:,} lines omitted …]\n" + "\n".join(tail), omitted


def _terminal_preview(content: str, ref: str, budget: int) -> str | None:
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):
        return None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("stdout", ""), str)
        or not isinstance(data.get("stderr", ""), str)
    ):
        return None
    stdout, stderr = data.get("stdout") or "", data.get("stderr") or ""
    total = max(len(stdout) + len(stderr), 1)
    out = dict(data)
    # Each stream gets a share of the budget by its size, stderr at least a quarter if any.
    err_budget = 0 if not stderr else max(budget // 4, budget * len(stderr) // total)
    out["stdout"], _ = preview_lines(stdout, budget - err_budget)
    out["stderr"], _ = preview_lines(stderr, err_budget) if stderr else ("", 0)
    out["truncated"] = {
        "stdoutChars": len(stdout),
        "stderrChars": len(stderr),
        "stdoutLines": stdout.count("\n") + bool(stdout and not stdout.endswith("\n")),
        "contextRef": ref,
    }
    out["hint"] = _hint(ref)
    return json.dumps(out, ensure_ascii=False)


def externalized(message: Message, preview: int) -> str:
    """What the model sees of `message`'s output instead of all of it."""
    content = message.content or ""
    ref = artifact_ref_id(message.id)
    if message.tool_name == TERMINAL_TOOL or content.startswith('{"command"'):
        shown = _terminal_preview(content, ref, preview)
        if shown is not None:
            return shown
    body, _ = preview_lines(content, preview)
    lines = content.count("\n") + 1
    return (
        f"[Output of {len(content):,} characters in {lines:,} lines; only its first and last lines "
        f"are shown. {_hint(ref)}]\n{body}"
    )


def _cached_preview(message: Message, preview: int, memory: PassMemory) -> str:
    # Every build would otherwise parse and split every large output again.
    return memory.remembered(
        (message.id, message.tool_name, hash(message.content), preview),
        lambda: externalized(message, preview),
        PREVIEW_CACHE_LIMIT,
    )


def _previewable(tool_name: str | None) -> bool:
    name = tool_name or ""
    return name not in (READ_TOOL, SKILL_TOOL) and not name.startswith(CONTEXT_TOOL_PREFIX)


def apply(messages: list[Message], *, limit: int, preview: int) -> tuple[list[Message], int]:
    out, changed = run(facts_of(messages), memory=PassMemory(), limit=limit, preview=preview)
    return [f.message for f in out], changed


def run(facts: list[Facts], *, memory: PassMemory, limit: int, preview: int) -> tuple[list[Facts], int]:
    """The pass on records (see `apply`); nothing externalised gives back the same list.

    `memory.last`: the last list run on and its longest content: the loop's next request
    is that list plus a few records, and only those need measuring; the previews made are
    remembered there too."""
    limit = max(limit, 0)  # an empty output is never externalised
    source, longest = memory.last or ([], 0)
    if source and len(facts) >= len(source) and all(map(is_, source, facts)):
        longest = max(longest, max(map(_LENGTH, facts[len(source) :]), default=0))
    else:
        longest = max(map(_LENGTH, facts), default=0)
    memory.last = (facts, longest)
    if longest <= limit:
        return facts, 0  # the usual case, decided in C
    changed = 0
    out = list(facts)
    key = (NAME, preview)
    for index, f in enumerate(facts):
        if f.role == "tool" and f.length > limit and _previewable(f.tool_name):
            out[index] = f.copy(key, "content", lambda f=f: _cached_preview(f.message, preview, memory))
            changed += 1
    return (out if changed else facts), changed
