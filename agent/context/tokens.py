"""tiktoken counts for everything sent: system prompt, tool definitions, messages.

One encoding for every model (SPEC §12.10). Counts are cached by content hash so a warm
rebuild of a long session encodes only what is new.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent.context.rendered import api_form

if TYPE_CHECKING:
    from agent.session.models import Message

# OpenAI's accounting: every message costs a few tokens of framing, every reply 3 more.
MESSAGE_OVERHEAD = 3
REPLY_PRIMING = 3
# Text beyond this is counted on a prefix and scaled: encoding 50 MB would stall a turn.
EXACT_COUNT_LIMIT = 1_000_000
SAMPLE_CHARS = 200_000
CACHE_LIMIT = 200_000
TOKENS_META_KEY = "tokens"


class TokenCounter:
    def __init__(self, encoding: str = "o200k_base") -> None:
        self.encoding_name = encoding
        self._encoding = None
        self._cache: dict[bytes, int] = {}
        self._by_message: dict[tuple, int] = {}

    @property
    def encoding(self):
        if self._encoding is None:
            self._encoding = load_encoding(self.encoding_name)
        return self._encoding

    def _encode_len(self, text: str) -> int:
        return len(self.encoding.encode(text, disallowed_special=()))

    def count_text(self, text: str | None) -> int:
        if not text:
            return 0
        key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        if len(text) > EXACT_COUNT_LIMIT:
            sample = text[:SAMPLE_CHARS]
            count = int(self._encode_len(sample) * len(text) / len(sample))
        else:
            count = self._encode_len(text)
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[key] = count
        return count

    def count_message(self, message: dict[str, Any]) -> int:
        total = MESSAGE_OVERHEAD + self.count_text(message.get("role"))
        content = message.get("content")
        if isinstance(content, str):
            total += self.count_text(content)
        elif isinstance(content, list):
            total += sum(self.count_text(part.get("text")) for part in content if isinstance(part, dict))
        for call in message.get("tool_calls") or []:
            fn = call.get("function", {})
            total += MESSAGE_OVERHEAD + self.count_text(fn.get("name")) + self.count_text(fn.get("arguments"))
        if message.get("tool_call_id"):
            total += self.count_text(message["tool_call_id"])
        for block in message.get("thinking_blocks") or ():  # Claude's thinking, sent back in a tool loop
            total += self.count_text(block.get("thinking") or block.get("data"))
        for block in message.get("server_blocks") or ():  # Claude's searches and their results, sent back
            total += self.count_text(json.dumps(block, ensure_ascii=False))
        return total

    def count_stored(self, message: Message) -> int:
        """Tokens of one stored message as sent.

        Remembered by id and content, so a new object with the same content (a reload, a
        copy) finds its count; Python caches a string's hash on the string, so that lookup
        does not rehash the content. (A build keeps each count on its record as well.)"""
        calls = tuple((tc.id, tc.name, tc.arguments) for tc in message.tool_calls) if message.tool_calls else ()
        key = (message.id, message.role, hash(message.content), hash(calls), message.tool_call_id)
        cached = self._by_message.get(key)
        if cached is None:
            if len(self._by_message) >= CACHE_LIMIT:
                self._by_message.clear()
            cached = self._stored_count(message)
            if cached is None:
                cached = self.count_message(api_form(message))
                if message.role in ("user", "tool") and message.meta:  # images: prompts' and tool results'
                    cached += _image_tokens(message.meta, message.content if message.role == "tool" else None)
            self._by_message[key] = cached
        return cached

    def _stored_count(self, message: Message) -> int | None:
        """The count written with the message (see `remember_count`), if it still applies:
        same encoding and same content length (a pass's shortened copy shares the meta)."""
        stored = message.meta.get(TOKENS_META_KEY) if message.meta else None
        if (
            isinstance(stored, dict)
            and stored.get("encoding") == self.encoding_name
            and stored.get("chars") == len(message.content or "")
            and isinstance(stored.get("count"), int)
            and not message.tool_calls
        ):
            return stored["count"]
        return None

    def remember_count(self, message: Message) -> None:
        """Put the message's count in its meta before it is stored, so that resuming a long
        session does not encode every old tool output again (98 MB took ~11 s)."""
        message.meta[TOKENS_META_KEY] = {
            "encoding": self.encoding_name,
            "chars": len(message.content or ""),
            "count": self.count_stored(message),
        }

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        if not messages:
            return 0
        return sum(self.count_message(m) for m in messages) + REPLY_PRIMING

    def count_tools(self, tools: list[dict[str, Any]]) -> int:
        if not tools:
            return 0
        return self.count_text(json.dumps(tools, ensure_ascii=False, sort_keys=True))


def _image_tokens(meta: dict[str, Any], content: str | None) -> int:
    """Attached images, by the documented estimate (agent/images.py `image_tokens`): tiktoken
    cannot count them, and how a provider bills one depends on its size, not its bytes. A tool
    result's document counts while its text carries it (`content`; agent/images.py `carried`)."""
    from agent.images import tokens_of

    return tokens_of(meta, content)


@functools.cache
def load_encoding(name: str):
    """tiktoken's encoding (immutable, slow to load): loaded once per process."""
    from agent.llm.offline import apply_offline_env

    apply_offline_env()
    from agent.context.encoding_cache import load
    from agent.paths import data_dir

    try:
        folder: Path | None = data_dir()
    except Exception:  # no usable data folder: no cache, tiktoken's own load
        folder = None
    return load(name, folder)


def counter_for(encoding: str) -> TokenCounter:
    """A new counter in `encoding`; its caches live as long as its owner keeps it (the
    session's request builder keeps one for every build)."""
    return TokenCounter(encoding)
