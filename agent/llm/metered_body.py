"""An httpx response hook that holds a model's answer to agent/llm/wire_limits.py's caps.

Why a hook on the client: every reader of the body (httpx's line iterator, the openai SDK's SSE
decoder, litellm's own) reads through `response.stream`, so one hook bounds them all, and stops
the read before a reader has gathered an endless line. A compressed body is measured after
decompression, a step at a time (a small gzip can inflate a thousandfold).

Imported only where a client is built: httpx loads with it.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from agent.llm.wire_limits import Meter, ResponseTooLarge

# Content encodings measured after decompression (the ones httpx decodes).
ZLIB_ENCODINGS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}
# Bytes decompressed at a time while measuring (a gzip bomb never expands all at once).
INFLATE_STEP = 64 * 1024


async def bound_response(response: httpx.Response) -> None:
    """The response hook: the body, however it is read later, passes through a Meter."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    meter = Meter(response.headers.get("content-type", ""))
    response.stream = MeteredStream(response.stream, meter, encoding)


class MeteredStream(httpx.AsyncByteStream):
    """`inner`'s pieces, each measured before the reader gets it."""

    def __init__(self, inner: Any, meter: Meter, encoding: str) -> None:
        self._inner = inner
        self._meter = meter
        wbits = ZLIB_ENCODINGS.get(encoding)
        self._inflater = _Inflater(wbits) if wbits is not None else None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for piece in self._inner:
            try:
                self._measure(piece)
            except ResponseTooLarge:
                # Closed here, not by the reader: httpx, the openai SDK and litellm leave a
                # response whose read failed open, and the server would go on sending.
                await self.aclose()
                raise
            yield piece

    async def aclose(self) -> None:
        await self._inner.aclose()

    def _measure(self, piece: bytes) -> None:
        inflated = self._inflater.pieces(piece) if self._inflater is not None else None
        if inflated is None:  # plain, or not what its header says (httpx reports that when it decodes)
            self._inflater = None
            self._meter.feed(piece)
            return
        for part in inflated:
            self._meter.feed(part)


class _Inflater:
    """A gzip/deflate body decompressed INFLATE_STEP bytes at a time, to be measured; None
    from `pieces` once the data does not decompress."""

    def __init__(self, wbits: int) -> None:
        self._inflate: Any = zlib.decompressobj(wbits)
        self._may_be_raw = wbits == zlib.MAX_WBITS  # "deflate" is sometimes sent without its header

    def pieces(self, data: bytes) -> list[bytes] | None:
        out: list[bytes] = []
        try:
            out.append(self._inflate.decompress(data, INFLATE_STEP))
            while self._inflate.unconsumed_tail:
                piece = self._inflate.decompress(self._inflate.unconsumed_tail, INFLATE_STEP)
                if not piece:
                    break
                out.append(piece)
        except zlib.error:
            if not self._may_be_raw:
                return None
            self._may_be_raw = False
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.pieces(data)
        self._may_be_raw = False
        return out
