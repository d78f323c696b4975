"""Condense (seed 001 §3.4, SPEC §5): replace the conversation since the last summary with an LLM summary.

The result is one `kind=summary` user message (the seed's "Fresh Start": pass 1 of the
pipeline starts every later request at it), made of the model's summary plus what a summary
must not lose to paraphrase: the newest user messages verbatim, the active `<command>`
workflows, the current todo list, the folded outline of the files read, and — when triggered
automatically — the environment. Nothing is deleted: the originals stay in the store, the replaced range is
rendered as Markdown (`history_text`) for the history context file whose ref the summary
names. This module does not store anything or decide when to condense; the loop does.

Steps follow seed §3.4.5: 1 messages since the last summary, 2 refuse when too few,
3 tool blocks as text (condense_prompt.py), 4 the LLM call, 5 command blocks, 6 folded
files, 7 the summary content, 8 the summary message with its range, 9 its tokens.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agent.context import condense_prompt as prompt
from agent.context.budget import DEFAULT_RESERVED_TOKENS, allowed_tokens
from agent.context.files.refs import history_ref_id
from agent.context.truncation.file_folder import extract_file_paths
from agent.context.truncation.tool_filter import is_file_view
from agent.images import META_KEY as IMAGES
from agent.session.models import Message
from agent.tools.git_guard import WorkspaceGit
from agent.tools.todos import META_KEY as TODOS
from agent.tools.todos import current_todos

# Step 2: "如果消息数量 <= 1，返回错误（消息不足）/ 如果最近有摘要且消息数量 <= 2，返回错误（刚压缩过）";
# like the seed, the count includes the previous summary.
MIN_MESSAGES = 1
MIN_MESSAGES_AFTER_SUMMARY = 2
# The seed gives no number for the verbatim user messages; Codex's compaction keeps 20k tokens.
KEEP_RECENT_USER_TOKENS = 20_000
# The summary request must fit the summary model: by default the allowed tokens (seed §3.3.5
# step 2) of the default 128k window.
DEFAULT_MAX_REQUEST_TOKENS = allowed_tokens(128_000, DEFAULT_RESERVED_TOKENS)
CHARS_PER_TOKEN = 3  # a conservative guess, only for clipping one entry that alone is too long
GIT_STATUS_LINES = 20
GIT_TIMEOUT_SECONDS = 3.0
_COMMAND_BLOCK = re.compile(r"<command\b[^>]*>.*?</command>", re.S)
Count = Callable[[Message], int]


class CondenseError(Exception):
    """Why there is no summary, in words fit for the UI."""


class CondenseResult(BaseModel):
    summary: Message
    replaced_first_id: str
    replaced_last_id: str
    tokens_before: int
    tokens_after: int
    history_text: str
    # The newest user message(s), to be stored again right after the summary (see `restated`).
    restate: list[Message] = []


def default_count(message: Message) -> int:
    from agent.context.tokens import counter_for

    return counter_for("o200k_base").count_stored(message)


def split_at_last_summary(history: list[Message]) -> tuple[Message | None, list[Message]]:
    """Step 1: (the newest summary or None, the messages after it). Earlier ones are in it."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].kind == "summary":
            return history[index], history[index + 1 :]
    return None, list(history)


def trailing_prompt(messages: list[Message]) -> int:
    """Where the user messages the model has not answered yet begin at the end of `messages`
    (notes skipped); `len(messages)` when the newest message is not one."""
    start = len(messages)
    for index in range(len(messages) - 1, -1, -1):
        m = messages[index]
        if m.kind == "note":
            continue
        if m.role != "user" or m.kind != "message":
            break
        start = index
    return start


def _turn_in_progress(messages: list[Message]) -> bool:
    """The newest message (notes skipped) is a tool result or call: the model acts next."""
    last = next((m for m in reversed(messages) if m.kind != "note"), None)
    return last is not None and (last.role == "tool" or bool(last.tool_calls))


def restated(messages: list[Message]) -> list[Message]:
    """Copies of `messages` to store after the summary: the request starts at the summary
    (pass 1), so the newest user message must follow it to be the request's last user turn,
    verbatim — inside the summary's "Recent user messages" the model has nothing to answer.
    Its attached images come along (the same blobs): the question may be about them."""
    return [
        Message(
            role="user",
            content=m.content,
            kind="message",
            meta={"restated_from": m.id, **{k: v for k, v in m.meta.items() if k == IMAGES}},
        )
        for m in messages
    ]


def check_enough(previous: Message | None, messages: list[Message]) -> None:
    """Step 2: nothing worth summarising, or a summary with barely anything after it."""
    count = sum(m.kind != "note" for m in messages) + (previous is not None)
    if previous is not None and count <= MIN_MESSAGES_AFTER_SUMMARY:
        raise CondenseError("The conversation was just condensed; there is too little new to condense.")
    if count <= MIN_MESSAGES:
        raise CondenseError("Too few messages to condense.")


def read_paths(messages: list[Message]) -> list[str]:
    """Files the range read with `filesystem-read`: the headers of its results, else the call's arguments."""
    calls = {tc.id: tc for m in messages for tc in m.tool_calls if is_file_view(tc.name)}
    answered: dict[str, list[str]] = {}
    for m in messages:
        if m.role == "tool" and m.tool_call_id in calls and m.status == "ok":
            answered[m.tool_call_id] = extract_file_paths(m.content, calls[m.tool_call_id])
    paths = [p for cid, call in calls.items() for p in answered.get(cid, extract_file_paths(None, call))]
    return list(dict.fromkeys(paths))


def command_blocks(messages: list[Message]) -> list[str]:
    """Step 5: `<command>` blocks of user messages (project slash commands expand into them);
    the previous summary carries earlier ones forward. Each distinct block once."""
    found = (b for m in messages if m.role == "user" for b in _COMMAND_BLOCK.findall(m.content or ""))
    return list(dict.fromkeys(found))


def keep_recent_user(messages: list[Message], budget: int, count: Count) -> list[Message]:
    """The newest user messages (not summaries) while they fit `budget`, oldest first. A newest
    message that alone is over the budget is kept clipped; the archive has it whole."""
    kept: list[Message] = []
    left = budget
    for m in reversed(messages):
        if m.role != "user" or m.kind != "message" or not (m.content or "").strip():
            continue
        tokens = count(m)
        if tokens > left:
            if not kept and left > 0:
                clipped = prompt.clip(m.content or "", left * CHARS_PER_TOKEN)
                kept.append(m.model_copy(update={"content": clipped}))
            break
        kept.append(m)
        left -= tokens
    return kept[::-1]


def _request_tokens(request: list[dict], count: Count) -> int:
    return sum(count(Message(role=d["role"], content=d["content"])) for d in request)


def prepare_condense_request(
    history: list[Message],
    *,
    instructions: str | None,
    workspace: Path,
    automatic: bool,
    folded_context: str,
    keep_recent_user_tokens: int = KEEP_RECENT_USER_TOKENS,
    count: Count = default_count,
    max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS,
) -> tuple[list[dict], list[Message], list[Message]]:
    """(request for the summary model, the range replaced, the user messages kept verbatim).

    The range is every message since the last summary. Kept user messages stay in it (the
    summary holds them) but the transcript shows only a pointer to them. When the request is
    over `max_request_tokens`, the oldest transcript entries go first, with a note saying so.
    `workspace` and `automatic` shape nothing here yet; environment details go into the
    summary, not the request.
    """
    previous, messages = split_at_last_summary(history)
    check_enough(previous, messages)
    kept = keep_recent_user(messages, keep_recent_user_tokens, count)
    kept_ids = {m.id for m in kept}
    answered = {m.tool_call_id for m in messages if m.role == "tool" and m.tool_call_id}
    names = {tc.id: tc.name for m in messages for tc in m.tool_calls}
    entries = [
        prompt.render_kept(m) if m.id in kept_ids else prompt.render_message(m, answered, names)
        for m in messages
        if m.kind != "note"
    ]
    blocks = command_blocks(([previous] if previous else []) + messages)
    files = re.findall(r"^## File Context: (.+)$", folded_context, re.M)
    attached = [f"{len(kept)} recent user messages"] if kept else []
    attached += [f"{len(blocks)} active <command> workflows"] if blocks else []
    attached += [f"outlines of {', '.join(files)}"] if files else []
    attached += ["the current todo list"] if current_todos(history) else []

    def build(body: list[str], dropped: int) -> list[dict]:
        return prompt.request_messages(
            body,
            previous=previous.content if previous else None,
            attached=attached,
            instructions=instructions,
            dropped=dropped,
        )

    request, dropped = build(entries, 0), 0
    total = _request_tokens(request, count)
    sizes = [count(Message(role="user", content=e)) for e in entries] if total > max_request_tokens else []
    while total > max_request_tokens and len(entries) > 1:
        # Estimate how many of the oldest entries cover the excess, then check the real count.
        n, freed = 0, 0
        while n < len(entries) - 1 and freed < total - max_request_tokens:
            freed, n = freed + sizes[n], n + 1
        entries, sizes, dropped = entries[n:], sizes[n:], dropped + n
        request = build(entries, dropped)
        total = _request_tokens(request, count)
    if total > max_request_tokens and entries:  # one entry alone too long: keep its ends
        room = max_request_tokens - (total - sizes[0])
        entries = [prompt.clip(entries[0], max(room, 0) * CHARS_PER_TOKEN)]
        request = build(entries, dropped)
        total = _request_tokens(request, count)
    if total > max_request_tokens:
        raise CondenseError(
            f"The summary request does not fit the summary model ({total} > "
            f"{max_request_tokens} tokens) even after trimming the oldest messages."
        )
    return request, messages, kept


async def _git_facts(workspace: Path) -> tuple[str, str] | None:
    """(branch, `git status --short`) of the workspace's repository, asked through git_guard
    (the repository's fsmonitor, hooks and filters off, checked to lie inside the workspace:
    this git runs unconfined, in any permission mode); None when there is none to ask."""
    git = await WorkspaceGit.open(workspace, timeout=GIT_TIMEOUT_SECONDS)
    if git is None:
        return None
    status = await git.run("status", "--short")
    if status is None:
        return None
    branch = await git.run("symbolic-ref", "--short", "-q", "HEAD")  # works before the first commit
    if branch is None:
        head = await git.run("rev-parse", "--short", "HEAD")
        branch = f"(detached at {head.strip()})" if head else "(unknown)"
    return branch, status


async def environment_details(workspace: Path, now_ms: int) -> str:
    """Step 7 "环境详情（仅自动触发时）": where the work happens and in what state, since an
    automatic condense can land mid-task when the summary alone may not say so."""
    lines = ["## Environment", f"Folder: {workspace}"]
    facts = await _git_facts(workspace)
    if facts is not None:  # a git work tree
        branch, status = facts
        lines.append(f"Git branch: {branch.strip()}")
        changed = status.splitlines()
        shown = changed[:GIT_STATUS_LINES] + (
            [f"… {len(changed) - GIT_STATUS_LINES} more"] if len(changed) > GIT_STATUS_LINES else []
        )
        lines.append("Git status:" + ("".join(f"\n{c}" for c in shown) if shown else " clean"))
    lines.append("Date: " + datetime.fromtimestamp(now_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M UTC"))
    return prompt.reminder("\n".join(lines))


def _default_fold(workspace: Path) -> Callable[[list[str]], str]:
    def fold(paths: list[str]) -> str:
        from agent.context.folding import fold_files

        return fold_files(paths, workspace=workspace).text if paths else ""

    return fold


async def condense(
    history: list[Message],
    *,
    model: str,
    api_base: str | None = None,
    api_key: str | None = None,
    instructions: str | None = None,
    workspace: Path,
    automatic: bool,
    fold: Callable[[list[str]], str] | None = None,
    keep_recent_user_tokens: int = KEEP_RECENT_USER_TOKENS,
    count: Count = default_count,
    max_request_tokens: int = DEFAULT_MAX_REQUEST_TOKENS,
    now_ms: int | None = None,
    send: Callable[[str, list[dict]], Awaitable[Any]] | None = None,
) -> CondenseResult:
    """Summarise the messages since the last summary of `history` (the active path) with `model`.

    Raises CondenseError with a readable reason: too few messages, a request that cannot be
    made to fit, or the provider's error. The caller stores the summary (parent: the newest
    message) and `history_text` via `ContextFiles.add_history(first, last, ...)`. `send(model,
    messages)` makes the model call (the loop's: its timeout, retries and settings); without
    it, one plain attempt.
    """
    from agent.llm.client import ChatRequest, stream_chat
    from agent.llm.errors import LLMError
    from agent.session.models import now_ms as clock

    now = clock() if now_ms is None else now_ms
    workspace = Path(workspace)
    head = history[-1] if history else None
    previous, messages = split_at_last_summary(history)
    # The prompt the model has not answered yet is not summarised: it is stored again after
    # the summary, so the request ends with it (mid-turn, the newest user message is both
    # summarised and restated).
    start = trailing_prompt(messages)
    if start < len(messages):
        prompt_messages = [m for m in messages[start:] if m.role == "user"]
        history = history[: len(history) - (len(messages) - start)]
        previous, messages = split_at_last_summary(history)
    elif _turn_in_progress(messages):
        prompt_messages = [m for m in messages if m.role == "user" and m.kind == "message"][-1:]
    else:  # the newest prompt was answered: nothing to restate
        prompt_messages = []
    check_enough(previous, messages)
    earlier = (previous.meta.get("condensed") or {}).get("folded_files") or [] if previous else []
    paths = list(dict.fromkeys([*earlier, *read_paths(messages)]))  # step 6: files of the whole session
    folded = await asyncio.to_thread(fold or _default_fold(workspace), paths) if paths else ""
    request, replaced, kept = prepare_condense_request(
        history,
        instructions=instructions,
        workspace=workspace,
        automatic=automatic,
        folded_context=folded,
        keep_recent_user_tokens=keep_recent_user_tokens,
        count=count,
        max_request_tokens=max_request_tokens,
    )
    try:
        if send is not None:
            result = await send(model, request)
        else:
            result = await stream_chat(
                ChatRequest(model=model, messages=request, tools=[], api_base=api_base, api_key=api_key)
            )
    except LLMError as exc:
        raise CondenseError(f"Condensing failed: {exc}") from exc
    first, last = replaced[0], replaced[-1]
    environment = await environment_details(workspace, now) if automatic else ""
    blocks = command_blocks(([previous] if previous else []) + replaced)
    # The newest todo list goes in as written, not as the summariser retells it: the model
    # keeps working through it after the summary, and the TUI keeps showing it.
    todos = current_todos(history)
    content = prompt.summary_content(
        result.content,
        ref=history_ref_id(first.id, last.id),
        kept=kept,
        blocks=blocks,
        folded=folded,
        environment=environment,
        todos=todos,
    )
    tokens_before = sum(count(m) for m in ([previous] if previous else []) + replaced)
    summary = Message(
        session_id=last.session_id,
        parent_id=(head or last).id,
        role="user",
        content=content,
        kind="summary",
        created_at=now,
    )
    tokens_after = count(summary)
    summary.meta = {
        "condensed": {
            "first_id": first.id,
            "last_id": last.id,
            "count": len(replaced),
            "tokens_before": tokens_before,
            "tokens_after": tokens_after,
            "automatic": automatic,
            "instructions": instructions or None,
            "model": model,
            "folded_files": paths,
            "cost": result.cost,
        }
    }
    if todos:
        summary.meta[TODOS] = todos
    return CondenseResult(
        summary=summary,
        replaced_first_id=first.id,
        replaced_last_id=last.id,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        history_text=prompt.history_markdown(replaced, workspace=workspace, now_ms=now),
        restate=restated(prompt_messages),
    )
