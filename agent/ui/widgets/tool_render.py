"""Short, readable renderings of tool calls and results (pure functions, no widgets).

A tool block shows one line for the call (`terminal-execute $ pytest -q`) and a
one-line summary of the result (`exit 0 · 12 lines`, `Error: …`, `+3 −1`); the
full output sits in a collapsed section below.

Everything here ends up on the user's terminal, and most of it comes from outside (command
output, file contents, the model's arguments): control characters are made inert text
(`inert`, agent/fs/terminal_text.py: the rule every front end shares), so an ESC sequence
in a command's output shows as `␛[2J` instead of clearing the screen or moving the cursor.

A line cut to its row ends in `…` (`fit_line`): cut by the terminal or a widget's edge it
stops mid-word with no sign that anything is missing.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any, Protocol

from agent.fs.terminal_text import inert


class CallView(Protocol):
    """What rendering a call reads: a `session.models.ToolCall`, or the first screen's stand-in
    built from a stored row (agent/ui/early_history.py, which runs before pydantic loads)."""

    @property
    def name(self) -> str: ...
    @property
    def arguments(self) -> str: ...


class ResultView(Protocol):
    """What rendering a tool result reads: a `session.models.Message`, or the first screen's
    stand-in built from a stored row."""

    @property
    def content(self) -> str | None: ...
    @property
    def status(self) -> str: ...
    @property
    def tool_name(self) -> str | None: ...
    @property
    def meta(self) -> dict[str, Any] | None: ...


MAX_ARGS_CHARS = 100
TODO_WRITE = "todo-write"
EXIT_PLAN_MODE = "exit-plan-mode"
REVIEWS = {"approved": "approved", "keep_planning": "keep planning", "recorded": "plan recorded"}
MAX_BODY_LINES = 200
MAX_BODY_LINE_CHARS = 1000  # a minified file or a one-line 50 KB log must not be wrapped whole


ELLIPSIS = "…"
# A cut moves back to the last space when that loses at most this many cells; further than
# that the row would look half empty, so the word is cut hard instead.
WORD_CUT_WINDOW = 15


def cells(text: str) -> int:
    """Terminal cells `text` takes (wide East Asian characters and most emoji take two)."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def fit_line(text: str, width: int, *, window: int = WORD_CUT_WINDOW) -> str:
    """`text` (one line) within `width` cells: as it is when it fits, else cut and ended with
    `…`, at the last space if that is within `window` cells of the cut."""
    if cells(text) <= width:
        return text
    if width <= 0:
        return ""
    room = width - cells(ELLIPSIS)
    cut, used = [], 0
    for char in text:
        size = cells(char)
        if used + size > room:
            break
        cut.append(char)
        used += size
    head = "".join(cut)
    space = head.rfind(" ")
    if space > 0 and cells(head[space:]) <= window and head[:space].strip():
        head = head[:space]
    return head.rstrip() + ELLIPSIS


def _clip(text: str, limit: int = MAX_ARGS_CHARS) -> str:
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _paths(value: Any) -> str:
    """filesystem-read's filePath: a string, a list of strings or of {path, startLine, endLine}."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for item in value:
            if isinstance(item, dict):
                path = str(item.get("path", "?"))
                if item.get("startLine") or item.get("endLine"):
                    path += f":{item.get('startLine', 1)}-{item.get('endLine', '')}"
                parts.append(path)
            else:
                parts.append(str(item))
        return ", ".join(parts)
    return str(value)


def format_args(call: CallView) -> str:
    """The arguments worth seeing, e.g. `a.py:10-20` or `$ pytest -q` (inert text)."""
    return inert(_format_args(call))


def _format_args(call: CallView) -> str:
    try:
        args = json.loads(call.arguments or "{}")
    except (json.JSONDecodeError, TypeError):
        return _clip(call.arguments or "")
    if not isinstance(args, dict):
        return _clip(str(args))
    name = call.name
    if name == "terminal-execute":
        background = " (background)" if args.get("background") is True else ""
        return _clip("$ " + str(args.get("command", "")) + background)
    if name in ("task-output", "task-stop"):  # a background task (agent/tools/background_tasks.py)
        return _clip(f"task {args.get('taskId', '')}")
    if name == "filesystem-read":
        text = _paths(args.get("filePath", ""))
        if args.get("startLine") or args.get("endLine"):
            text += f":{args.get('startLine', 1)}-{args.get('endLine', '')}"
        return _clip(text)
    if name in ("filesystem-edit", "filesystem-create"):
        return _clip(str(args.get("filePath", "")))
    if name == TODO_WRITE:  # the list is in the panel above the prompt; its result line says how far
        return ""
    if name == EXIT_PLAN_MODE:  # the plan's first line; the expanded result is the whole plan
        first = next((plain_title(line) for line in str(args.get("plan", "")).splitlines() if line.strip()), "")
        return _clip(first)
    if name == "filesystem-search":
        where = args.get("path") or args.get("glob")
        return _clip(repr(str(args.get("pattern", ""))) + (f" in {where}" if where else ""))
    if name == "subagent":  # `explore: find where the config is loaded`
        return _clip(f"{args.get('agent') or 'general'}: {' '.join(str(args.get('task', '')).split())}")
    if name.startswith("context-"):
        extra = args.get("pattern") or args.get("kind") or ""
        return _clip(" ".join(str(x) for x in (args.get("id", ""), extra) if x))
    return _clip(", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items()))


class _Call:
    """A call as a subagent's progress line names it (CallView's shape)."""

    def __init__(self, name: str, arguments: str) -> None:
        self.name = name
        self.arguments = arguments


_PROGRESS_CALL = re.compile(r"([A-Za-z0-9_.:-]+) (\{.*)")
CHILD_FAILED_MARK = "✗"  # agent/turn/children.py's line after a call that was refused or failed


def _whole_json(text: str) -> str:
    """Arguments the progress line cut to its length (ending in `…`), closed again so the
    call's own rendering can read what is there (else the text as it came)."""
    if not text.endswith("…"):
        return text
    head = text[:-1]
    for tail in ('"}', "}", '"]}', "]}"):
        try:
            json.loads(head + tail)
        except json.JSONDecodeError:
            continue
        return head + "…" + tail if tail.startswith('"') else head + tail
    return text


def child_call(line: str) -> str | None:
    """A subagent's progress line `name {json}` as the parent's own calls read
    (`terminal-execute $ grep -rn want_bytes src`); None for any other line."""
    match = _PROGRESS_CALL.fullmatch(line.strip())
    if match is None:
        return None
    name, arguments = match.groups()
    args = format_args(_Call(name, _whole_json(arguments)))
    return inert(name) + (" " + args if args else "")


def child_failure(line: str) -> str | None:
    """`refused: …` / `failed: …` from a subagent's line after a call that did not run well."""
    text = line.strip()
    return inert(text[len(CHILD_FAILED_MARK) :].strip()) if text.startswith(CHILD_FAILED_MARK + " ") else None


def plain_title(line: str) -> str:
    """A Markdown line as a one-line title: "Plan: add a `sha256` default" → "Plan: add a
    sha256 default" (heading marks, emphasis, code ticks and link targets off)."""
    text = line.strip().lstrip("#").strip()
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](url) → text
    text = re.sub(r"`+([^`]*)`+", r"\1", text)
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])([*_])(?!\s)(.+?)(?<!\s)\1(?![\w*])", r"\2", text)
    return text


def where_it_ran(message: ResultView) -> str:
    """ "sandboxed" or "outside sandbox" for a command's result (agent/tools/terminal.py's
    meta), "" for any other result or one stored before that was recorded."""
    meta = message.meta or {}
    if meta.get("sandbox"):
        return "sandboxed"
    return "outside sandbox" if meta.get("outsideSandbox") else ""


def _count_lines(text: str) -> int:
    return len(text.splitlines())


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def diff_stats(diff: str) -> tuple[int, int]:
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def result_diff(message: ResultView) -> str | None:
    """The unified diff a file tool produced (inert text), or None."""
    diff = message.meta.get("diff") if message.meta else None
    if isinstance(diff, str) and diff.strip():
        return inert(diff)
    if message.tool_name == "filesystem-edit" and message.status == "ok":
        content = message.content or ""
        if content.lstrip().startswith(("---", "@@", "diff ")):
            return inert(content)
    return None


def terminal_output(content: str) -> dict[str, Any] | None:
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None
    return data if isinstance(data, dict) and "exitCode" in data else None


def task_output(content: str) -> dict[str, Any] | None:
    """A background task's read (terminal-execute's start, task-output, task-stop), or None."""
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, TypeError):
        return None
    return data if isinstance(data, dict) and "taskId" in data and "output" in data else None


def is_error(message: ResultView) -> bool:
    """A failed tool result: the tool boundary marks failures both ways."""
    return message.status == "error" or (message.content or "").startswith("Error:")


def summarize_result(message: ResultView) -> str:
    """One line for the collapsed result's title (inert text)."""
    return inert(_summarize_result(message))


def _summarize_result(message: ResultView) -> str:
    content = message.content or ""
    if message.status == "interrupted":
        return "interrupted"
    task = task_output(content)
    if task is not None:  # `task 1 · running · 2 lines`, `task 1 · exit 3 · 0 lines`
        state = task.get("status") if task.get("exitCode") is None else f"exit {task.get('exitCode')}"
        return f"task {task.get('taskId')} · {state} · {_plural(_count_lines(str(task.get('output') or '')), 'line')}"
    # A command's result reads the same failed or not: its exit code and size, never its JSON.
    data = terminal_output(content)
    if data is not None:
        out = "\n".join(s.rstrip("\n") for s in (str(data.get("stdout") or ""), str(data.get("stderr") or "")) if s)
        timed_out = " · timed out" if (message.meta or {}).get("timedOut") else ""
        return f"exit {data.get('exitCode')}{timed_out} · {_plural(_count_lines(out), 'line')}"
    if is_error(message):
        if one_line(message):  # the header shows it: whole, wrapped under the tool's name
            return content.strip()
        first = content.strip().splitlines()[0] if content.strip() else "Error"
        return _clip(first, ERROR_SUMMARY_CHARS)
    done = todo_progress(message)
    if done is not None:
        return f"Updated todos {done}"
    diff = result_diff(message)
    if diff is not None:
        added, removed = diff_stats(diff)
        return f"+{added} −{removed}"
    if message.tool_name == "filesystem-read":
        body = content.splitlines()[1:] if content.startswith("📄") else content.splitlines()
        return _plural(len(body), "line")
    review = (message.meta or {}).get("review")
    if message.tool_name == EXIT_PLAN_MODE and review in REVIEWS:
        mode = (message.meta or {}).get("mode")
        return REVIEWS[review] + (f" · {mode} mode" if mode else "")
    run = (message.meta or {}).get("subagent")
    if isinstance(run, dict):  # what the child cost, in the parent's bill: `12 tool calls · $0.0123`
        cost = float((message.meta or {}).get("cost") or 0.0)
        calls = int(run.get("tool_calls") or 0)
        return f"{_plural(calls, 'tool call')} · {_plural(_count_lines(content), 'line')} · ${cost:.4f}"
    return _plural(_count_lines(content), "line") if content else "done"


def todo_progress(message: ResultView) -> str | None:
    """`3/7` for a todo-write result that set the list, else None. Counted here rather than
    with agent/tools/todos.py: this module stays free of cairn's other packages (the first
    screen imports it)."""
    todos = (message.meta or {}).get("todos")
    if message.tool_name != TODO_WRITE or message.status != "ok" or not isinstance(todos, list):
        return None
    done = sum(isinstance(t, dict) and t.get("status") == "completed" for t in todos)
    return f"{done}/{len(todos)}"


ERROR_SUMMARY_CHARS = 90  # an error's first line, as the collapsed title shows it


def one_line(message: ResultView) -> bool:
    """A result whose summary is all there is to see: the tool block is its header alone,
    nothing to expand. The todo list (it lives in its panel), and an error of one line no
    longer than an output shown open (below its own cut summary it was printed twice; the
    header wraps it whole under the tool's name)."""
    if todo_progress(message) is not None:
        return True
    content = (message.content or "").strip()
    return (
        is_error(message)
        and terminal_output(content) is None
        and "\n" not in content
        and len(content) <= SHOWN_OPEN_MAX_CHARS
    )


SHOWN_OPEN_MAX_CHARS = 200  # a one-line output up to this long is shown, not folded away


def shown_open(message: ResultView) -> bool:
    """A result of one short line (`3 passed`, `On branch main`) is shown as it is: folding
    it behind "1 line" would hide what the user wants at a glance."""
    if message.status == "interrupted" or message.tool_name == "filesystem-read":
        return False
    body = result_body(message)
    return "\n" not in body and 0 < len(body) <= SHOWN_OPEN_MAX_CHARS and body != "(no output)"


def stderr_from(message: ResultView) -> int | None:
    """The index of `result_body`'s first line a command wrote to stderr (None: it wrote none
    there, or this is not a command's result). The terminal tool keeps the two streams apart
    (its stdout and stderr fields); the expanded output marks the second one."""
    data = terminal_output(message.content or "")
    if data is None or not str(data.get("stderr") or "").rstrip("\n"):
        return None
    stdout = str(data.get("stdout") or "").rstrip("\n")
    return len(stdout.splitlines()) if stdout else 0


def result_body(message: ResultView) -> str:
    """The result's text for the expanded view (inert), bounded to MAX_BODY_LINES lines."""
    content = message.content or ""
    plan = (message.meta or {}).get("plan")
    if message.tool_name == EXIT_PLAN_MODE and isinstance(plan, str):
        content = plan  # what the user reviewed, not what the model was told about it
    task = task_output(content)
    data = terminal_output(content) if task is None else None
    if task is not None:
        content = str(task.get("output") or "").rstrip("\n") or "(no output)"
    if data is not None:
        parts = [str(data.get("stdout") or "").rstrip("\n")]
        if data.get("stderr"):
            parts.append(str(data["stderr"]).rstrip("\n"))
        content = "\n".join(p for p in parts if p) or "(no output)"
    all_lines = content.splitlines()
    lines = [
        inert(line if len(line) <= MAX_BODY_LINE_CHARS else line[:MAX_BODY_LINE_CHARS] + " …")
        for line in all_lines[:MAX_BODY_LINES]
    ]
    if len(all_lines) > MAX_BODY_LINES:
        more = len(all_lines) - MAX_BODY_LINES
        lines = lines[:MAX_BODY_LINES] + [f"… {_plural(more, 'more line')}"]
    return "\n".join(lines)
