"""A scripted fake of the Anthropic Messages API that streams real SSE (stdlib only).

Why: prompt caching is only visible on Anthropic's own wire format (``cache_control`` on
system, tool and message blocks; ``cache_read_input_tokens`` / ``cache_creation_input_tokens``
in usage), which the OpenAI-compatible ``tests/fakes/llm_server.py`` cannot show. Tests reach
this server through real litellm::

    from tests.fakes.anthropic_server import FakeAnthropicServer, text, tool_use, error, breakpoints

    with FakeAnthropicServer([text("hi", cache_read_input_tokens=900, cache_creation_input_tokens=40)]) as srv:
        await litellm.acompletion(model="anthropic/claude-sonnet-4-5", api_base=srv.base_url,
                                  api_key="sk-ant-test", messages=[...], stream=True,
                                  stream_options={"include_usage": True})
        srv.requests            # JSON bodies litellm posted (Anthropic format), oldest first
        srv.request_headers     # their headers, names lower-cased (x-api-key, anthropic-version, …)
        breakpoints(srv.requests[-1])   # where the body carries cache_control, e.g. ["system[0]", …]

``FakeAnthropicServer`` is a ``FakeLLMServer`` with another request handler, so the script
queue, ``add``, ``pending``, ``requests``, ``request_headers``, ``wait_for_requests``,
``wait_idle``, ``repeat``, callable steps and the ``with`` / ``async with`` lifecycle are
the same. Like there, an empty queue answers ``(no more scripted responses)`` so the test
fails visibly, and ``pending`` counts steps not used up (the ``anthropic_server`` fixture
in tests/conftest.py fails a test that leaves one).

``base_url`` is ``http://127.0.0.1:PORT`` (no ``/v1``): litellm appends ``/v1/messages`` to
an Anthropic ``api_base`` (litellm/main.py), and this server answers only
``POST /v1/messages``. It checks what Anthropic checks and litellm must get right
(``strict=True``, the default), answering Anthropic's error JSON with the real status:

* an ``x-api-key`` (or ``authorization``) header and an ``anthropic-version`` header;
* ``model``, ``max_tokens`` and ``messages`` in the body;
* at most 4 blocks with ``cache_control`` (tools, system, message blocks and blocks nested
  in a ``tool_result``), each ``{"type": "ephemeral"}`` (an optional ``ttl`` of ``5m``/``1h``);
* no empty text block (with or without ``cache_control``);
* with ``thinking`` enabled: a budget of at least 1,024 under ``max_tokens``, and the
  assistant turn a request answers with tool results starting with its signed thinking block;
* at most 100 images, and with more than 20 no PNG with a side over 2,000 pixels (the
  "many-image" rule).

A rejected request is still recorded in ``requests`` (its reason in ``rejections``) but
uses up no step.

Stream (``stream: true``), in Anthropic's order, each event ``event: NAME\\ndata: JSON\\n\\n``:
``message_start`` (``message.usage``: ``input_tokens``, ``cache_creation_input_tokens``,
``cache_read_input_tokens``, ``output_tokens: 1``), ``ping``, per text block
``content_block_start`` / ``content_block_delta`` (``text_delta``) / ``content_block_stop``,
per tool call the same with a ``tool_use`` block and ``input_json_delta`` fragments (the
first one empty, as Anthropic sends it), ``message_delta`` (``stop_reason``,
``usage.output_tokens``; with ``full_delta_usage=True`` the cumulative input and cache
counts as well, as newer API versions send), ``message_stop``. Without ``stream`` the
reply is one ``message`` JSON. As on the real API, ``input_tokens`` counts only the input
that was neither read from nor written to the cache.

Steps:

* ``text(text, chunk_size=5, *, input_tokens=None, output_tokens=None,
  cache_read_input_tokens=0, cache_creation_input_tokens=0, stop_reason="end_turn",
  full_delta_usage=False, delay=0.0, initial_delay=0.0)`` — ``None`` token counts are
  estimated (~4 characters a token) from the request / the reply.
* ``tool_use(calls, text=None, *, args_chunk_size=8, stop_reason="tool_use", …same usage
  keywords)`` — ``calls``: ``(id, name, input)`` tuples, ``ToolUse``s or dicts; ``input`` a
  dict or a JSON string.
* ``error(status, message=None, *, type=None, headers=None)`` — Anthropic's error JSON
  (``{"type": "error", "error": {"type": …, "message": …}}``) with the status's type.

``text`` and ``tool_use`` take ``searches=[Search(id, query, results)]``: Anthropic's server-side
web search, streamed after the thinking as a ``server_tool_use`` block (its input as
``input_json_delta`` fragments) and a ``web_search_tool_result`` block (whole in its start
event), and counted in ``usage.server_tool_use.web_search_requests``. Strict requests must keep
each ``server_tool_use`` paired with its result in the same assistant turn.
"""

from __future__ import annotations

import base64
import json
import math
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.llm_script import Text as _NoMoreText
from tests.fakes.llm_server import FakeLLMServer, _Abort, _Handler

__all__ = [
    "FakeAnthropicServer",
    "Reply",
    "ToolUse",
    "ApiError",
    "AnthropicStep",
    "text",
    "tool_use",
    "error",
    "Search",
    "search_result",
    "breakpoints",
    "check_request",
    "DEFAULT_MODEL",
    "MAX_CACHE_CONTROL_BLOCKS",
]

DEFAULT_MODEL = "claude-sonnet-4-5"
MAX_CACHE_CONTROL_BLOCKS = 4
_TTLS = ("5m", "1h")
MAX_IMAGES = 100
MANY_IMAGES, MANY_IMAGES_MAX_SIDE = 20, 2000


# --------------------------------------------------------------------------- steps


@dataclass
class ToolUse:
    id: str
    name: str
    input: str = "{}"  # JSON text, streamed as input_json_delta fragments


@dataclass
class Thinking:
    """A thinking block: its text streamed as thinking_delta, then its signature as one
    signature_delta; `redacted` instead: a redacted_thinking block carrying `data`."""

    text: str = ""
    signature: str = ""
    redacted: str | None = None


def search_result(title: str, url: str, encrypted: str = "EqgfCioIARgBIiQ3YTAw") -> dict[str, Any]:
    return {"type": "web_search_result", "title": title, "url": url, "encrypted_content": encrypted, "page_age": None}


@dataclass
class Search:
    """One server-side search: its `server_tool_use` (id, query) and `web_search_tool_result`
    (`results`, or `error_code` for an error result)."""

    id: str
    query: str
    results: list[dict[str, Any]] = field(default_factory=list)
    error_code: str | None = None

    def use_block(self) -> dict[str, Any]:
        return {"type": "server_tool_use", "id": self.id, "name": "web_search", "input": {"query": self.query}}

    def result_block(self) -> dict[str, Any]:
        content: Any = (
            {"type": "web_search_tool_result_error", "error_code": self.error_code} if self.error_code else self.results
        )
        return {"type": "web_search_tool_result", "tool_use_id": self.id, "content": content}


@dataclass
class Reply:
    """One message: optional thinking blocks, optional text, then tool_use blocks; usage as
    Anthropic reports it."""

    text: str | None = None
    calls: list[ToolUse] = field(default_factory=list)
    thinking: list[Thinking] = field(default_factory=list)
    searches: list[Search] = field(default_factory=list)
    stop_reason: str = "end_turn"
    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    full_delta_usage: bool = False
    chunk_size: int = 5
    args_chunk_size: int = 8
    delay: float = 0.0
    initial_delay: float = 0.0
    # Stop after this many events: "drop" the connection mid-body, or end the body cleanly
    # ("eof") without the rest (message_delta, message_stop): a proxy giving up mid-answer.
    cut_after: int | None = None
    cut_mode: str = "drop"


@dataclass
class ApiError:
    status: int
    type: str
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    initial_delay: float = 0.0


AnthropicStep = Reply | ApiError


def text(
    text: str,
    chunk_size: int = 5,
    *,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    stop_reason: str = "end_turn",
    full_delta_usage: bool = False,
    delay: float = 0.0,
    initial_delay: float = 0.0,
    thinking: Iterable[Thinking] = (),
    searches: Iterable[Search] = (),
) -> Reply:
    return Reply(
        text=text,
        thinking=list(thinking),
        searches=list(searches),
        stop_reason=stop_reason,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read_input_tokens,
        cache_creation_input_tokens=cache_creation_input_tokens,
        full_delta_usage=full_delta_usage,
        chunk_size=chunk_size,
        delay=delay,
        initial_delay=initial_delay,
    )


def _to_tool_use(call: Any) -> ToolUse:
    if isinstance(call, ToolUse):
        return call
    if isinstance(call, dict):
        cid, name, args = call["id"], call["name"], call.get("input", "{}")
    else:
        cid, name, args = call
    return ToolUse(id=cid, name=name, input=args if isinstance(args, str) else json.dumps(args))


def tool_use(
    calls: Iterable[Any],
    text: str | None = None,
    *,
    chunk_size: int = 5,
    args_chunk_size: int = 8,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read_input_tokens: int = 0,
    cache_creation_input_tokens: int = 0,
    stop_reason: str = "tool_use",
    full_delta_usage: bool = False,
    delay: float = 0.0,
    initial_delay: float = 0.0,
    thinking: Iterable[Thinking] = (),
    searches: Iterable[Search] = (),
) -> Reply:
    return Reply(
        text=text,
        thinking=list(thinking),
        searches=list(searches),
        calls=[_to_tool_use(c) for c in calls],
        stop_reason=stop_reason,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_input_tokens=cache_read_input_tokens,
        cache_creation_input_tokens=cache_creation_input_tokens,
        full_delta_usage=full_delta_usage,
        chunk_size=chunk_size,
        args_chunk_size=args_chunk_size,
        delay=delay,
        initial_delay=initial_delay,
    )


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def error(
    status: int,
    message: str | None = None,
    *,
    type: str | None = None,
    headers: dict[str, str] | None = None,
    initial_delay: float = 0.0,
) -> ApiError:
    kind = type or _ERROR_TYPES.get(status, "api_error")
    return ApiError(
        status=status,
        type=kind,
        message=message or f"{kind} ({status})",
        headers=dict(headers or {}),
        initial_delay=initial_delay,
    )


# --------------------------------------------------------------------------- request checks


def _blocks(request: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Every block of the request that may carry cache_control, with its path."""
    for i, tool in enumerate(request.get("tools") or []):
        yield f"tools[{i}]", tool
    system = request.get("system")
    if isinstance(system, list):
        for i, block in enumerate(system):
            yield f"system[{i}]", block
    for m, message in enumerate(request.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            yield f"messages[{m}].content[{b}]", block
            inner = block.get("content") if isinstance(block, dict) else None
            if isinstance(inner, list):
                for n, nested in enumerate(inner):
                    yield f"messages[{m}].content[{b}].content[{n}]", nested


def breakpoints(request: dict[str, Any]) -> list[str]:
    """Paths of the blocks carrying ``cache_control``, in prompt order (tools, system, messages)."""
    return [path for path, block in _blocks(request) if isinstance(block, dict) and "cache_control" in block]


def check_request(request: dict[str, Any], headers: dict[str, str]) -> tuple[int, str, str] | None:
    """``(status, error type, message)`` for a request Anthropic would reject, else None."""
    if not (headers.get("x-api-key") or headers.get("authorization")):
        return 401, "authentication_error", "x-api-key header is required"
    if not headers.get("anthropic-version"):
        return 400, "invalid_request_error", "anthropic-version: header is required"
    for key in ("model", "max_tokens", "messages"):
        if key not in request:
            return 400, "invalid_request_error", f"{key}: Field required"
    problem = _check_thinking(request) or _check_server_blocks(request)
    if problem is not None:
        return problem
    found = 0
    for path, block in _blocks(request):
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and not block.get("text"):
            where = path.split("[", 1)[0]
            return 400, "invalid_request_error", f"{where}: text content blocks must be non-empty"
        control = block.get("cache_control")
        if control is None:
            continue
        if (
            not isinstance(control, dict)
            or control.get("type") != "ephemeral"
            or set(control) - {"type", "ttl"}
            or control.get("ttl", "5m") not in _TTLS
        ):
            return 400, "invalid_request_error", f"{path}.cache_control: invalid value {control!r}"
        found += 1
    if found > MAX_CACHE_CONTROL_BLOCKS:
        return (
            400,
            "invalid_request_error",
            f"A maximum of {MAX_CACHE_CONTROL_BLOCKS} blocks with cache_control may be provided. Found {found}.",
        )
    return _check_images(
        [block for _, block in _blocks(request) if isinstance(block, dict) and block.get("type") == "image"]
    )


def _check_server_blocks(request: dict[str, Any]) -> tuple[int, str, str] | None:
    """Each `server_tool_use` of an assistant turn followed by its `web_search_tool_result`."""
    for m, message in enumerate(request.get("messages") or []):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for b, block in enumerate(content):
            if not isinstance(block, dict) or block.get("type") != "server_tool_use":
                continue
            after = content[b + 1] if b + 1 < len(content) else {}
            if after.get("type") != "web_search_tool_result" or after.get("tool_use_id") != block.get("id"):
                return (
                    400,
                    "invalid_request_error",
                    f"messages.{m}.content.{b}: `server_tool_use` ids were found without corresponding "
                    "`web_search_tool_result` blocks",
                )
    return None


MIN_THINKING_BUDGET = 1024


def _check_thinking(request: dict[str, Any]) -> tuple[int, str, str] | None:
    """Extended thinking as Anthropic checks it: a budget of at least 1,024 tokens under
    `max_tokens`; with thinking on, an assistant turn that ends in tool use and is being
    answered (the last message holds its tool results) must start with a thinking block
    carrying a signature (the model's own, sent back unchanged)."""
    thinking = request.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") != "enabled":
        return None
    budget = thinking.get("budget_tokens")
    if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
        return 400, "invalid_request_error", f"thinking.enabled.budget_tokens: Input should be >= {MIN_THINKING_BUDGET}"
    if budget >= int(request.get("max_tokens") or 0):
        return 400, "invalid_request_error", "`max_tokens` must be greater than `thinking.budget_tokens`"
    messages = request.get("messages") or []
    if len(messages) >= 2 and messages[-1].get("role") == "user":
        answered = messages[-2]
        content = answered.get("content") if answered.get("role") == "assistant" else None
        if isinstance(content, list) and any(b.get("type") == "tool_use" for b in content if isinstance(b, dict)):
            first = content[0] if content else {}
            if first.get("type") not in ("thinking", "redacted_thinking"):
                return (
                    400,
                    "invalid_request_error",
                    "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
                    f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message must start "
                    "with a thinking block.",
                )
            if first.get("type") == "thinking" and not first.get("signature"):
                return 400, "invalid_request_error", "messages.1.content.0.signature: Field required"
    return None


def _png_side(block: dict[str, Any]) -> int:
    """The longer side of a base64 PNG image block (0 for anything else)."""
    source = block.get("source") or {}
    if source.get("type") != "base64" or source.get("media_type") != "image/png":
        return 0
    head = base64.b64decode(str(source.get("data", ""))[:44] + "==")[:24]
    return max(struct.unpack(">II", head[16:24])) if len(head) == 24 and head[12:16] == b"IHDR" else 0


def _check_images(images: list[dict[str, Any]]) -> tuple[int, str, str] | None:
    if len(images) > MAX_IMAGES:
        return 400, "invalid_request_error", f"Too many images: {len(images)} (at most {MAX_IMAGES})"
    if len(images) > MANY_IMAGES and any(_png_side(image) > MANY_IMAGES_MAX_SIDE for image in images):
        return (
            400,
            "invalid_request_error",
            "At least one of the image dimensions exceed max allowed size "
            f"for many-image requests: {MANY_IMAGES_MAX_SIDE} pixels",
        )
    return None


# --------------------------------------------------------------------------- payloads


def _split(s: str, n: int) -> list[str]:
    n = max(1, int(n))
    return [s[i : i + n] for i in range(0, len(s), n)]


def _estimate_tokens(s: str) -> int:
    return max(1, math.ceil(len(s) / 4)) if s else 0


class _Plan:
    """The events (or the message) one Reply becomes for one request."""

    def __init__(self, step: Reply, request: dict[str, Any], seq: int) -> None:
        self.step = step
        self.id = f"msg_fake{seq:06d}"
        self.model = str(request.get("model") or DEFAULT_MODEL)
        prompt = json.dumps([request.get("tools"), request.get("system"), request.get("messages")])
        self.input_tokens = step.input_tokens if step.input_tokens is not None else max(1, len(prompt) // 4)
        reply = (step.text or "") + "".join(c.input for c in step.calls)
        self.output_tokens = step.output_tokens if step.output_tokens is not None else _estimate_tokens(reply)

    def usage(self, output_tokens: int) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.step.cache_creation_input_tokens,
            "cache_read_input_tokens": self.step.cache_read_input_tokens,
            "output_tokens": output_tokens,
        }

    def events(self) -> list[tuple[str, dict[str, Any]]]:
        step = self.step
        start = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self.usage(1),
        }
        out: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": start}),
            ("ping", {"type": "ping"}),
        ]
        index = 0
        for block in step.thinking:
            if block.redacted is not None:
                start_block: dict[str, Any] = {"type": "redacted_thinking", "data": block.redacted}
                out.append(
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": index, "content_block": start_block},
                    )
                )
            else:
                start_block = {"type": "thinking", "thinking": "", "signature": ""}
                out.append(
                    (
                        "content_block_start",
                        {"type": "content_block_start", "index": index, "content_block": start_block},
                    )
                )
                for piece in _split(block.text, step.chunk_size):
                    delta = {"type": "thinking_delta", "thinking": piece}
                    out.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
                delta = {"type": "signature_delta", "signature": block.signature}
                out.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        for search in step.searches:
            use = {**search.use_block(), "input": {}}
            out.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": use}))
            for frag in _split(json.dumps(search.use_block()["input"]), step.args_chunk_size):
                delta = {"type": "input_json_delta", "partial_json": frag}
                out.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
            start_result = {"type": "content_block_start", "index": index, "content_block": search.result_block()}
            out.append(("content_block_start", start_result))
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        if step.text:
            out.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
            )
            for piece in _split(step.text, step.chunk_size):
                out.append(
                    (
                        "content_block_delta",
                        {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}},
                    )
                )
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        for call in step.calls:
            out.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": "tool_use", "id": call.id, "name": call.name, "input": {}},
                    },
                )
            )
            for frag in ["", *_split(call.input, step.args_chunk_size)]:
                out.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": frag},
                        },
                    )
                )
            out.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
            index += 1
        delta_usage: dict[str, Any] = (
            self.usage(self.output_tokens) if step.full_delta_usage else {"output_tokens": self.output_tokens}
        )
        if step.searches:
            delta_usage["server_tool_use"] = {"web_search_requests": len(step.searches)}
        out.append(
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": step.stop_reason, "stop_sequence": None},
                    "usage": delta_usage,
                },
            )
        )
        out.append(("message_stop", {"type": "message_stop"}))
        return out

    def message(self) -> dict[str, Any]:
        content: list[dict[str, Any]] = [
            {"type": "redacted_thinking", "data": b.redacted}
            if b.redacted is not None
            else {"type": "thinking", "thinking": b.text, "signature": b.signature}
            for b in self.step.thinking
        ]
        for search in self.step.searches:
            content += [search.use_block(), search.result_block()]
        content += [{"type": "text", "text": self.step.text}] if self.step.text else []
        content += [
            {"type": "tool_use", "id": c.id, "name": c.name, "input": json.loads(c.input or "{}")}
            for c in self.step.calls
        ]
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": self.step.stop_reason,
            "stop_sequence": None,
            "usage": self.usage(self.output_tokens),
        }


# --------------------------------------------------------------------------- HTTP


class _AnthropicHandler(_Handler):
    server: Any

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send_error(self, status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> None:
        self._send_json(
            status,
            {"type": "error", "error": {"type": kind, "message": message}},
            {"request-id": f"req_fake{id(self):x}", **(headers or {})},
        )

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = self.path.split("?", 1)[0].rstrip("/")
        try:
            if path in ("", "/", "/health"):
                self._send_json(200, {"status": "ok"})
            else:
                self._send_error(404, "not_found_error", f"Unknown path {path}")
        except _Abort:
            self.close_connection = True

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        path = self.path.split("?", 1)[0].rstrip("/")
        raw_body = self._read_body()
        owner: FakeAnthropicServer = self.server.owner
        try:
            if path != "/v1/messages":
                self._send_error(404, "not_found_error", f"Unknown path {path}")
                return
            try:
                request = json.loads(raw_body or b"{}")
            except ValueError:
                self._send_error(400, "invalid_request_error", "Body is not JSON")
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            problem = check_request(request, headers) if owner.strict else None
            if problem is not None:
                owner._record_rejected(request, headers, problem[2])
                self._send_error(*problem)
                return
            step, seq = owner._record_and_pop(request, headers)
            owner._stream_started()
            try:
                self._serve_step(step, request, seq)
            finally:
                owner._stream_ended()
        except _Abort:
            self._abort()

    def _serve_step(self, step: Any, request: dict[str, Any], seq: int) -> None:
        if isinstance(step, _NoMoreText):  # the queue was empty: say so, visibly
            step = Reply(text=step.text, chunk_size=step.chunk_size)
        self._sleep(step.initial_delay)
        if isinstance(step, ApiError):
            self._send_error(step.status, step.type, step.message, step.headers)
            return
        if not isinstance(step, Reply):
            raise TypeError(f"not an Anthropic step: {step!r}")
        plan = _Plan(step, request, seq)
        if not request.get("stream"):
            self._send_json(200, plan.message(), {"request-id": f"req_fake{seq:06d}"})
            return
        self._start_stream()
        for i, (name, data) in enumerate(plan.events()):
            if step.cut_after is not None and i >= step.cut_after:
                if step.cut_mode == "eof":
                    break
                self._abort()
                return
            if i and step.delay > 0:
                self._sleep(step.delay)
            self._send_chunk(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self._end_stream()


class FakeAnthropicServer(FakeLLMServer):
    """Scripted Anthropic Messages API on 127.0.0.1 (see the module docstring).

    ``FakeAnthropicServer(script=(), *, port=0, host="127.0.0.1", model="claude-sonnet-4-5",
    repeat=False, verbose=False, strict=True)``; the server starts in the constructor.
    """

    handler_class = _AnthropicHandler

    def __init__(
        self,
        script: Iterable[AnthropicStep] = (),
        *,
        port: int = 0,
        host: str = "127.0.0.1",
        model: str = DEFAULT_MODEL,
        repeat: bool = False,
        verbose: bool = False,
        strict: bool = True,
    ) -> None:
        self.strict = strict
        self._rejections: list[str] = []
        super().__init__(
            script,
            port=port,
            host=host,
            model=model,
            repeat=repeat,  # type: ignore[arg-type]
            verbose=verbose,
        )

    @property
    def base_url(self) -> str:
        """The ``api_base`` for litellm, which appends ``/v1/messages`` itself."""
        return f"http://{self.host}:{self.port}"

    @property
    def rejections(self) -> list[str]:
        """Why each request the strict checks turned away was rejected, in order."""
        with self._lock:
            return list(self._rejections)

    def _record_rejected(self, request: dict[str, Any], headers: dict[str, str], reason: str) -> None:
        with self._cond:
            self._requests.append(request)
            self._headers.append(headers)
            self._rejections.append(reason)
            self._cond.notify_all()

    def __repr__(self) -> str:
        return f"FakeAnthropicServer(base_url={self.base_url!r}, pending={self.pending})"
