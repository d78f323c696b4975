"""A message's API form and token count, and fast copies of a request made of them.

The loop rebuilds the request from the same message objects on every step; turning 5,000
of them into dicts and looking their counts up again dominated a warm build. The
pipeline's per-message records (agent/context/facts.py `Facts`) are `Rendered` entries
that know more; the request builder owning them keeps them between builds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Awaitable, Callable, Sequence
from itertools import compress, count, repeat
from operator import attrgetter, eq
from typing import TYPE_CHECKING, Any

from agent.context.image_window import Cut, Record, sent
from agent.hooks.names import HOOK_CONTEXT_META
from agent.tools.modes import REMINDER_META

if TYPE_CHECKING:
    from agent.images import ImageRef
    from agent.session.models import Message


def api_form(message: Message) -> dict[str, Any]:
    """The message as the API takes it: `to_api()`, and a user message's mode reminder
    (agent/tools/modes.py) and its hooks' context (agent/hooks/) after its text. Both are in the
    message's meta from the moment it was sent, so every build renders them the same (the
    provider's cache holds)."""
    api = message.to_api()
    if api["role"] == "user" and message.meta:
        for key in (REMINDER_META, HOOK_CONTEXT_META):
            extra = message.meta.get(key)
            if isinstance(extra, str) and extra:
                api["content"] = f"{api['content']}\n\n{extra}" if api["content"] else extra
    return api


class Rendered:
    __slots__ = ("message", "content", "tool_calls", "api", "encoding", "tokens")

    def __init__(self, message: Message) -> None:
        self.message = message
        self.content = message.content
        self.tool_calls = message.tool_calls
        self.api = api_form(message)
        self.encoding: str | None = None
        self.tokens = 0


_ROLE = attrgetter("role")
# The messages that attach images: a prompt, an MCP tool's result.
IMAGE_ROLES = ("user", "tool")
# Opens the user message that carries tool results' images (tool messages take text only).
TOOL_IMAGES_INTRO = "[The images the tool results above returned, each after its label.]"
CallRow = tuple[int, str, str, str, tuple[tuple[str, str, str], ...]]


def call_rows(calls_at: list[int], calls: list[tuple[tuple[str, str, str], ...]]) -> list[CallRow]:
    """For `copy_request`: one flat row per message with tool calls, `(index, id, name,
    arguments, further calls)`, from their positions and `(id, name, arguments)` tuples."""
    return [(index, *those[0], those[1:]) for index, those in zip(calls_at, calls, strict=False)]


def copy_request(
    apis: list[dict[str, Any]],
    calls_at: list[int],
    rows: list[CallRow],
    out: list[dict[str, Any]],
    start: int = 0,
    stop: int | None = None,
) -> None:
    """Append a fresh copy of each of `apis[start:stop]` to `out`; `calls_at` (ascending)
    says which of `apis` have tool calls, `rows` (see `call_rows`) gives them.

    The flat dicts are copied in C; only the nested tool calls take Python code, built
    from flat rows rather than by walking the nested dicts again."""
    stop = len(apis) if stop is None else stop
    base = len(out) - start
    out.extend(map(dict.copy, apis[start:stop] if start or stop < len(apis) else apis))
    for index, call_id, name, arguments, more in rows[bisect_left(calls_at, start) : bisect_left(calls_at, stop)]:
        copied = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}]
        if more:
            copied += [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
                for call_id, name, arguments in more
            ]
        out[base + index]["tool_calls"] = copied


# -- attached images (agent/images.py) --------------------------------------------------------


class SessionImages:
    """The bytes of the images one session's messages attach, by hash: owned by the session's
    request builder, filled by the agent (a new prompt's images, and the store's blobs when
    the history is loaded), read by the build, which does no I/O. `version` changes when bytes
    are added, so a remembered request made without them is not reused."""

    __slots__ = ("_data", "_urls", "version", "pdf")

    def __init__(self) -> None:
        self._data: dict[str, bytes] = {}
        self._urls: dict[str, str] = {}
        self.version = 0
        # Whether the model takes PDF documents (agent/documents.py); without, a document is its label.
        self.pdf = False

    def set_pdf(self, pdf: bool) -> None:
        if pdf != self.pdf:
            self.pdf = pdf
            self.version += 1

    def add(self, digest: str, data: bytes) -> None:
        if digest not in self._data:
            self._data[digest] = data
            self.version += 1

    def get(self, digest: str) -> bytes | None:
        return self._data.get(digest)

    def size(self, digest: str) -> int | None:
        data = self._data.get(digest)
        return None if data is None else len(data)

    async def keep(self, blobs: list[bytes], put_blobs: Callable[[list[bytes]], Awaitable[list[str]]]) -> None:
        """A new message's images (a prompt's, a tool result's): stored first (`put_blobs`, the
        store's, which gives their hashes), so a stored message never names a missing blob; then held."""
        if blobs:
            for digest, data in zip(await put_blobs(blobs), blobs, strict=False):
                self.add(digest, data)

    async def load(self, messages: list[Message], get_blob: Callable[[str], Awaitable[bytes | None]]) -> None:
        """The bytes `messages` name and this does not hold yet, from the store (a loaded or
        resumed session); a missing blob stays missing (the image is then its label)."""
        for digest in self.missing(messages):
            data = await get_blob(digest)
            if data is not None:
                self.add(digest, data)

    def missing(self, messages: list[Message]) -> list[str]:
        """Hashes the user and tool messages of `messages` name that are not held yet."""
        from agent.images import refs_of

        wanted = (ref.hash for m in messages if m.role in IMAGE_ROLES and m.meta for ref in refs_of(m.meta))
        return list(dict.fromkeys(h for h in wanted if h not in self._data))

    def data_url(self, digest: str, mime: str) -> str | None:
        """The image as a `data:` URL (made once: base64 of 5 MB is not free)."""
        url = self._urls.get(digest)
        if url is None:
            data = self._data.get(digest)
            if data is None:
                return None
            import base64

            url = self._urls[digest] = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
        return url


def attach_images(
    records: Sequence[Record],
    apis: list[dict[str, Any]],
    images: SessionImages | None,
    cut: Cut | None = None,
    offset: int = 0,
) -> tuple[list[int], list[int]]:
    """Give the user messages among `records` that attach images their request form, in
    `apis` (their API forms, same positions): OpenAI content parts (the text, then each image
    as an `image_url` data URL, which litellm turns into each provider's image block), or,
    with `images` None (the model does not see images), the text with `[image: name, WxH]`
    lines. An image whose bytes are missing, or that is before `cut` (image_window.py;
    `records` start at `offset` in the request), is its label. Returns the positions whose
    content became a list of parts (each request gets its own copy of those, see
    `copy_parts`) and those where `cut` turned an image into its label."""
    from agent.images import refs_of, with_labels

    parts_at: list[int] = []
    cut_at: list[int] = []
    for index in compress(count(), map(eq, map(_ROLE, records), repeat("user"))):  # the few user messages, in C
        meta = records[index].message.meta
        refs = refs_of(meta) if meta else None
        if not refs:
            continue
        api = dict(apis[index])
        text = api.get("content") or ""
        carried = [sent(cut, offset + index, ordinal) for ordinal in range(len(refs))]
        shown = (
            [
                (ref, images.data_url(ref.hash, ref.mime) if carry and (images.pdf or not ref.document) else None)
                for ref, carry in zip(refs, carried, strict=False)
            ]
            if images is not None
            else []
        )
        if images is not None and not all(carried):
            cut_at.append(index)
        if not any(url for _, url in shown):
            api["content"] = with_labels(text, refs)
            apis[index] = api
            continue
        text = with_labels(text, [ref for ref, url in shown if url is None])
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
        parts += [attachment_part(ref, url) for ref, url in shown if url is not None]
        api["content"] = parts
        apis[index] = api
        parts_at.append(index)
    return parts_at, cut_at


def attachment_part(ref: ImageRef, url: str) -> dict[str, Any]:
    """An attachment as an OpenAI content part: an image as `image_url`, a PDF as a `file`
    with its data URL (litellm and agent/llm/anthropic_messages.py make each provider's
    document block of it)."""
    if ref.document:
        return {"type": "file", "file": {"filename": ref.name, "file_data": url}}
    return {"type": "image_url", "image_url": {"url": url}}


def _copied(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**part, "image_url": dict(part["image_url"])}
        if "image_url" in part
        else {**part, "file": dict(part["file"])}
        if "file" in part
        else dict(part)
        for part in parts
    ]


def copy_parts(api: list[dict[str, Any]], parts_at: list[int], offset: int) -> None:
    """Fresh content-part lists for the messages at `parts_at` (+ `offset`) of a copied
    request: a provider adapter may edit the blocks it is given."""
    for index in parts_at:
        message = api[offset + index]
        message["content"] = _copied(message["content"])


# (the position of the last tool result of the group, the user message, its tokens)
ToolImages = tuple[int, dict[str, Any], int]


def tool_images(
    records: Sequence[Record],
    start: int,
    images: SessionImages,
    count_message: Callable[[dict[str, Any]], int],
    cut: Cut | None = None,
) -> list[ToolImages]:
    """For a model that sees images: one user message per group of tool results (the answers
    to one assistant message) among `records[start:]` whose results attach images, to follow
    the group's last result. OpenAI's tool messages take text only, and a user message after
    the results is valid there and, through litellm, for Anthropic. The result's text keeps
    each image's `[image: name, WxH]` line; an image whose bytes are missing stays that line
    only, and so does one before `cut` (image_window.py). `count_message`: a message's text
    tokens; each image adds the documented estimate. A PDF document goes the same way for a
    model that takes PDFs, while the result's text still carries it (agent/images.py `carried`);
    its estimate is counted once, on the result (agent/context/tokens.py), so passes see it."""
    from agent.images import META_KEY, carried, refs_of

    out: list[ToolImages] = []
    end = -1
    last = len(records) - 1
    for index in compress(count(start), map(eq, map(_ROLE, records[start:]), repeat("tool"))):
        meta = records[index].message.meta
        if index <= end or not meta or META_KEY not in meta:
            continue
        end = index
        while end < last and records[end + 1].role == "tool":
            end += 1
        parts: list[dict[str, Any]] = [{"type": "text", "text": TOOL_IMAGES_INTRO}]
        image_cost = 0
        for at, record in enumerate(records[index : end + 1], index):
            for ordinal, ref in enumerate(refs_of(record.message.meta)):
                if ref.document and not (images.pdf and carried(ref, record.message.content)):
                    continue
                url = images.data_url(ref.hash, ref.mime) if sent(cut, at, ordinal) else None
                if url is not None:
                    parts.append({"type": "text", "text": f"{ref.label} (tool call {record.message.tool_call_id})"})
                    parts.append(attachment_part(ref, url))
                    image_cost += 0 if ref.document else ref.tokens  # a document counts once, on its result
        if len(parts) > 1:
            message = {"role": "user", "content": parts}
            out.append((end, message, count_message(message) + image_cost))
    return out


def group_start(records: Sequence[Record], index: int) -> int:
    """The first of the tool results that end at `index` (a group's start)."""
    while index > 0 and records[index - 1].role == "tool":
        index -= 1
    return index


def with_tool_images(api: list[dict[str, Any]], inserts: list[ToolImages], offset: int) -> list[dict[str, Any]]:
    """A copied request with a fresh copy of each of `inserts` after its group (positions +
    `offset`): `api` itself without any, else a new list made in one pass (inserting into a
    long request one by one moved all that follows each time)."""
    if not inserts:
        return api
    out: list[dict[str, Any]] = []
    done = 0
    for end, message, _ in inserts:
        at = offset + end + 1
        out += api[done:at]
        out.append({"role": "user", "content": _copied(message["content"])})
        done = at
    out += api[done:]
    return out
