"""How much of a provider's answer cairn reads before it gives up: caps on the wire.

Why: what a server sends is read into memory, and a broken or hostile one can send without
end. One SSE line that never ends (no newline, ever) grew memory until the machine gave out:
a line reader keeps everything up to the next newline, and so does an event reader up to the
next blank line. Every cap here is far above anything a real answer needs (a model's longest
output is a few MB of SSE), and reaching one is a typed error the user reads as a sentence.

The byte caps are applied where the bytes arrive, before anything is split into lines:
agent/llm/metered_body.py meters every answer read by cairn's client (agent/llm/http.py) and
by the one it hands litellm (agent/llm/litellm_http.py). The text caps are applied where an
answer is put together (agent/llm/client.py), whichever client read it. Standard library only.
"""

from __future__ import annotations

MIB = 1024 * 1024
# The longest line read (any body: see Meter): a streamed chunk is a few hundred bytes.
MAX_SSE_LINE_BYTES = 8 * MIB
# The longest SSE event (its lines up to the blank line that ends it).
MAX_SSE_EVENT_BYTES = 8 * MIB
# The largest body of an answer other than an SSE stream (one JSON completion, an error page,
# an NDJSON or binary event stream): a whole answer is well under a few MB.
MAX_RESPONSE_BODY_BYTES = 64 * MIB
# The most a model's tool call may carry as arguments (a whole file written at once included).
MAX_TOOL_ARGUMENTS_CHARS = 4 * MIB
# The most text one answer may stream in all (its text, reasoning and tool calls together).
MAX_ANSWER_CHARS = 16 * MIB

# An SSE stream: a long answer is many short events, so the whole has no cap.
EVENT_STREAM_MEDIA_TYPE = "text/event-stream"
# Newline-delimited JSON (Ollama's stream): no blank lines at all, so no event cap, and the
# whole is held to the body cap instead (far above a real answer; what an SSE reader handed
# such a body would gather).
NDJSON_MEDIA_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-seq")
# Length-prefixed binary frames (Bedrock's event stream): no lines at all, the body cap only.
BINARY_MEDIA_TYPES = ("application/vnd.amazon.eventstream", "application/octet-stream")
# Where a blank line can end an SSE event (the tail of the previous piece is searched too).
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r\n")


class ResponseTooLarge(Exception):
    """The answer passed one of the caps; `str()` says which, in the user's words."""


def too_large(what: str, cap: int) -> ResponseTooLarge:
    return ResponseTooLarge(
        f"{what} passed {cap // MIB} MiB without an end, so cairn stopped reading it "
        "(a broken or hostile server, or a proxy that mangled the stream)"
    )


class Meter:
    """Counts an answer's bytes as they arrive and raises ResponseTooLarge at a cap.

    Whatever its media type says, a body is held to the line cap and, unless it is NDJSON or
    binary, to the event cap: a streamed answer's readers (the openai SDK's, litellm's, httpx's)
    read it as lines or SSE however it is labelled, and gather a line or an event whole (the
    SDK's decoder in quadratic time). Every body but an SSE stream is also held to the body cap."""

    def __init__(self, content_type: str) -> None:
        media = content_type.split(";", 1)[0].strip().lower()
        self.binary = media in BINARY_MEDIA_TYPES
        self.events = not self.binary and media not in NDJSON_MEDIA_TYPES
        self.whole = media != EVENT_STREAM_MEDIA_TYPE
        self.total = 0
        self.line = 0  # bytes since the last line end
        self.event = 0  # bytes since the last blank line
        self._tail = b""  # the last bytes seen, for an event end split across two pieces

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        if self.whole and self.total > MAX_RESPONSE_BODY_BYTES:
            raise too_large("the response body", MAX_RESPONSE_BODY_BYTES)
        if self.binary:
            return
        last_end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        self.line = len(data) - last_end - 1 if last_end >= 0 else self.line + len(data)
        if self.line > MAX_SSE_LINE_BYTES:
            raise too_large("one line of the response", MAX_SSE_LINE_BYTES)
        if not self.events:
            return
        window = self._tail + data
        event_end = max((window.rfind(end) + len(end) for end in _EVENT_ENDS if end in window), default=-1)
        self.event = len(window) - event_end if event_end >= 0 else self.event + len(data)
        self._tail = window[-2:]
        if self.event > MAX_SSE_EVENT_BYTES:
            raise too_large("one event of the response (lines without a blank line between)", MAX_SSE_EVENT_BYTES)
