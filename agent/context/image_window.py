"""Which of a session's images a request still carries: the newest, within what providers take.

Every image a prompt or a tool result attached would otherwise ride along in every later
request, and providers refuse requests past their limits: Anthropic takes at most 100
images and 32 MB per request, and over 20 images refuses any side over 2,000 pixels (a
Retina screenshot). A session of screenshots would then fail on every turn until rewound.
So a request carries at most `MAX_IMAGES_PER_REQUEST` images and `MAX_IMAGE_BYTES_PER_REQUEST`
of their bytes, the newest; an older one is sent as its `[image: name, WxH]` label (the model
saw it when it was new, and its answers then are in the history).

The window does not slide one image at a time: each image dropped changes a message deep in
the cached prefix and makes the provider bill everything after it again. When it overflows,
the oldest go until half the budget is free, so a session of screenshots rewrites its cache
once every ten or so images. The cut is a function of the images' order and sizes alone, so
the same history always gives the same request.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from typing import Any, Protocol


# What the window reads, as shapes rather than imports: the build's records (context/facts.py)
# and the session's image bytes (context/rendered.py) both depend on this module.
class Record(Protocol):
    role: str
    message: Any


class ImageSizes(Protocol):
    pdf: bool  # the model takes PDF documents (else a document is its label, nothing to carry)

    def size(self, digest: str) -> int | None: ...


MAX_IMAGES_PER_REQUEST = 20
MAX_IMAGE_BYTES_PER_REQUEST = 20 * 1024 * 1024  # raw bytes: base64 makes ~27 MB, under Anthropic's 32
REFILL_SHARE = 0.5  # an overflowing window keeps at most this share of each budget
# A PDF document's pages count against the bytes budget too: Anthropic takes at most 100 pages
# a request, so a page weighs a hundredth of the budget (whichever of the two is more).
MAX_DOCUMENT_PAGES_PER_REQUEST = 100

# (record index, image ordinal within the record): the first image a request carries.
Cut = tuple[int, int]


def window_start(
    sizes: list[int], *, max_images: int = MAX_IMAGES_PER_REQUEST, max_bytes: int = MAX_IMAGE_BYTES_PER_REQUEST
) -> int:
    """The index of the first image sent, for images of these byte `sizes` in order."""
    keep_images, keep_bytes = int(max_images * REFILL_SHARE), int(max_bytes * REFILL_SHARE)
    start = held = held_bytes = 0
    for size in sizes:
        held += 1
        held_bytes += size
        if held > max_images or held_bytes > max_bytes:
            while held > 1 and (held > keep_images or held_bytes > keep_bytes):
                held -= 1
                held_bytes -= sizes[start]
                start += 1
    return start


def image_cut(records: Sequence[Record], images: ImageSizes) -> Cut | None:
    """Where the images `records` carry start being sent; None when all of them are."""
    from agent.images import META_KEY, carried, refs_of

    at: list[Cut] = []
    sizes: list[int] = []
    page_weight = MAX_IMAGE_BYTES_PER_REQUEST // MAX_DOCUMENT_PAGES_PER_REQUEST
    roles = [f.role in ("user", "tool") for f in records]
    for index in compress(range(len(records)), roles):
        meta = records[index].message.meta
        if not meta or META_KEY not in meta:
            continue
        for ordinal, ref in enumerate(refs_of(meta)):
            size = images.size(ref.hash)
            if ref.document:  # a label when the model takes no PDFs or a pass replaced its result
                if not (images.pdf and carried(ref, records[index].message.content)):
                    continue
                size = None if size is None else max(size, (ref.pages or 0) * page_weight)
            if size is not None:  # bytes missing: a label anyway, nothing to carry
                at.append((index, ordinal))
                sizes.append(size)
    start = window_start(sizes)
    return at[start] if start else None


def sent(cut: Cut | None, index: int, ordinal: int) -> bool:
    """Whether the image `ordinal` of record `index` is carried (see `image_cut`)."""
    return cut is None or (index, ordinal) >= cut
