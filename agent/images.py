"""Images in the prompt: finding the paths a prompt names, reading and checking the files.

A prompt attaches an image with `@path/to/shot.png` or by containing a pasted path to an
existing image file (what a terminal types when a file is dropped on it: absolute, `~/…`
or relative with a folder, quoted or with backslash-escaped spaces). A bare name without a
folder (`logo.png`) is prose, not an attachment: too many prompts mention files by name.
Relative paths are read from the workspace. The path comes from the user, so any file the
user can read may be attached; what a repository wrote is not read for paths: the body of a
project command (agent/commands/, a `<command>` block in the prompt) could
otherwise send any picture on the disk to the provider.

A file is an image only by its first bytes (PNG, JPEG, GIF, WebP), never by its name, and
its dimensions come from its header, so no imaging library is needed and nothing is
decoded. The bytes are kept exactly as read (the store's blob table; lossless), and the
message records `ImageRef`s (`meta["images"]`). An MCP tool result's images (base64 in the
result) are checked the same way (`decode_image`) and recorded on the tool message. What a
request makes of them is agent/context/rendered.py's concern; standard library and pydantic
only here.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shlex
import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from pydantic import BaseModel, SerializerFunctionWrapHandler, ValidationError, model_serializer

# Anthropic's API refuses images over 5 MB, and OpenAI's limit is higher: the lower one applies.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
# At most this many images per prompt (Anthropic allows 100 per request; a prompt rarely needs more).
MAX_IMAGES_PER_PROMPT = 20
# Token estimate (Anthropic's documented rule): tokens ≈ width × height / 750, and an image
# whose long edge is over 1568 px is scaled down first, which caps it near 1,600 tokens.
PIXELS_PER_TOKEN = 750
MAX_IMAGE_TOKENS = 1600
# What one page of a PDF document costs, as a bound (Anthropic bills 1,500-3,000 tokens a page:
# its text and a picture of it); agent/documents.py reads PDFs.
PAGE_TOKENS = 3_000
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
META_KEY = "images"
# A header that claims more than this is not a real picture (a crafted file).
MAX_DIMENSION = 100_000

_PNG = b"\x89PNG\r\n\x1a\n"
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # start-of-frame markers (not DHT/JPG/DAC)
_SUFFIX_GROUP = "|".join(s[1:] for s in IMAGE_SUFFIXES)
# `@path` (quoted or not), a quoted path, or an unquoted token (backslash escapes allowed) ending in a suffix.
# A project command's expansion: the repository's text, not the user's (see the docstring).
_COMMAND_BLOCK = re.compile(r'<command name="[a-z0-9_-]+">\n.*?\n</command>', re.S)
_AT_QUOTED = re.compile(r"""(?:(?<=\s)|^)@(["'])(.+?)\1""")
_AT_BARE = re.compile(r"""(?:(?<=\s)|^)@((?:\\.|[^\s"'])+)""")
_QUOTED = re.compile(rf"""(["'])([^"'\n]+?\.(?:{_SUFFIX_GROUP}))\1""", re.I)
_BARE = re.compile(rf"""(?:(?<=\s)|^)((?:\\.|[^\s"'@])+?\.(?:{_SUFFIX_GROUP}))(?=[\s,;:!?)]|\.(?:\s|$)|$)""", re.I)


class ImageError(Exception):
    """A named file that cannot be attached; the message says why, for the user."""


class ImageRef(BaseModel):
    """What a message records of one attached image; the bytes are the blob `hash` (sha256).
    A PDF a read attaches (agent/documents.py) is one too: `mime` `application/pdf`, its
    `pages`, no size; stored without `pages` for an image, so an image's record is unchanged."""

    hash: str
    name: str
    mime: str
    width: int
    height: int
    pages: int | None = None

    @model_serializer(mode="wrap")
    def _without_pages(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        out = handler(self)
        if out.get("pages") is None:
            out.pop("pages", None)
        return out

    @property
    def document(self) -> bool:
        return self.pages is not None

    @property
    def label(self) -> str:
        if self.pages is not None:
            return f"[document: {self.name}, {self.pages} page{'s' * (self.pages != 1)}]"
        return f"[image: {self.name}, {self.width}x{self.height}]"

    @property
    def tokens(self) -> int:
        """What it costs in a request (`image_tokens`; a document by its pages, as a bound)."""
        if self.pages is not None:
            return max(1, self.pages) * PAGE_TOKENS
        return image_tokens(self.width, self.height)


@dataclass(frozen=True)
class Attachment:
    ref: ImageRef
    data: bytes


@dataclass
class PromptImages:
    """The images a prompt attaches, and notices `(sentence, kind)` saying what was attached
    and what was not (a path that cannot be, or every image for a model without vision)."""

    attachments: list[Attachment] = field(default_factory=list)
    notices: list[tuple[str, str]] = field(default_factory=list)

    def meta(self) -> dict[str, Any]:
        return {META_KEY: [a.ref.model_dump() for a in self.attachments]} if self.attachments else {}


# -- headers -----------------------------------------------------------------------------


def sniff(data: bytes) -> tuple[str, int, int]:
    """`(mime, width, height)` from the file's first bytes; ImageError when it is not an
    image this module knows or its header is cut or implausible."""
    if data.startswith(_PNG):
        if len(data) < 24 or data[12:16] != b"IHDR":
            raise ImageError("a PNG without its header")
        width, height = struct.unpack(">II", data[16:24])
        mime = "image/png"
    elif data.startswith(b"\xff\xd8\xff"):
        width, height = _jpeg_size(data)
        mime = "image/jpeg"
    elif data[:6] in (b"GIF87a", b"GIF89a"):
        if len(data) < 10:
            raise ImageError("a GIF without its header")
        width, height = struct.unpack("<HH", data[6:10])
        mime = "image/gif"
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        width, height = _webp_size(data)
        mime = "image/webp"
    else:
        raise ImageError("not a PNG, JPEG, GIF or WebP image")
    if not (0 < width <= MAX_DIMENSION and 0 < height <= MAX_DIMENSION):
        raise ImageError(f"implausible image size {width}x{height}")
    return mime, width, height


def _jpeg_size(data: bytes) -> tuple[int, int]:
    """Walk the JPEG's segments to its start-of-frame, which holds the size."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            raise ImageError("a damaged JPEG")
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_SOF:
            if at + 9 > len(data):
                break
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        if length < 2:
            raise ImageError("a damaged JPEG")
        at += 2 + length
    raise ImageError("a JPEG without its size")


def _webp_size(data: bytes) -> tuple[int, int]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    raise ImageError("a WebP without its size")


def image_tokens(width: int, height: int) -> int:
    """The documented estimate of what one image costs in a request (see PIXELS_PER_TOKEN)."""
    return max(1, min(MAX_IMAGE_TOKENS, math.ceil(width * height / PIXELS_PER_TOKEN)))


# -- a message's images ---------------------------------------------------------------------


def refs_of(meta: dict[str, Any] | None) -> list[ImageRef]:
    """The images a message's meta records; malformed entries (an edited import) are skipped."""
    raw = meta.get(META_KEY) if meta else None
    if not isinstance(raw, list):
        return []
    refs = []
    for item in raw:
        try:
            refs.append(ImageRef.model_validate(item))
        except ValidationError:
            continue
    return refs


def with_labels(text: str | None, refs: Iterable[ImageRef]) -> str:
    """The message's text followed by one `[image: name, WxH]` line per image: how an image
    reads where it cannot be shown (the chat, a summary request, a model without vision)."""
    labels = "\n".join(ref.label for ref in refs)
    if not labels:
        return text or ""
    return f"{text}\n{labels}" if text else labels


def tokens_of(meta: dict[str, Any] | None, content: str | None = None) -> int:
    """The attachments' estimate; with `content` (a tool result's text), a document counts only
    while its label is in it: a pass that replaced the text (a placeholder) dropped it."""
    return sum(ref.tokens for ref in refs_of(meta) if content is None or carried(ref, content))


def carried(ref: ImageRef, content: str | None) -> bool:
    """Whether a tool result whose text is `content` still carries `ref`: an image always; a
    document only while its label stands in the text (a context pass that replaced the text by
    a placeholder, a fold or a reference dropped the document with it)."""
    return not ref.document or ref.label in (content or "")


# -- the prompt ------------------------------------------------------------------------------


def _unescape(token: str) -> str:
    """A terminal's drop of `/a/my shot.png` is `/a/my\\ shot.png`; a `file://` URL is a path too."""
    if token.startswith("file://"):
        return unquote(urlparse(token).path)
    if "\\" in token:
        try:
            parts = shlex.split(token)
        except ValueError:
            return token
        return parts[0] if len(parts) == 1 else token
    return token


def _looks_like_path(token: str) -> bool:
    return token.startswith(("/", "~", "./", "../", "file://")) or "/" in token or os.sep in token


def referenced_paths(text: str) -> list[tuple[str, bool]]:
    """The image paths `text` names, in order, once each: `(path, explicit)`; `explicit` for
    `@path` (a missing file is then worth a notice; a bare path is attached only if it exists).
    Project command blocks are skipped."""
    text = _COMMAND_BLOCK.sub(lambda match: " " * len(match.group(0)), text)
    spans: list[tuple[tuple[int, int], str, bool]] = []

    def add(path: str, explicit: bool, span: tuple[int, int]) -> None:
        if not any(a < span[1] and span[0] < b for (a, b), _, _ in spans):  # an earlier form took it
            spans.append((span, path, explicit))

    for match in _AT_QUOTED.finditer(text):
        add(match.group(2), True, match.span())
    for match in _AT_BARE.finditer(text):
        token = match.group(1).rstrip(".,;:!?)")
        if token.lower().endswith(IMAGE_SUFFIXES) or token.startswith("file://"):
            add(_unescape(token), True, match.span())
    for match in _QUOTED.finditer(text):
        if _looks_like_path(match.group(2)):
            add(match.group(2), False, match.span())
    for match in _BARE.finditer(text):
        token = match.group(1)
        if _looks_like_path(token):
            add(_unescape(token), False, match.span(1))
    found: dict[str, bool] = {}
    for _, path, explicit in sorted(spans):
        found[path] = found.get(path, False) or explicit
    return list(found.items())


def at_mentions(text: str) -> list[str]:
    """The `@path`s `text` names (quoted, or with `\\ ` escapes), in order, once each: what
    agent/turn/attachments.py attaches as text when they are not images. Project command
    blocks are skipped, as for images."""
    text = _COMMAND_BLOCK.sub(lambda match: " " * len(match.group(0)), text)
    quoted = list(_AT_QUOTED.finditer(text))
    found = [(m.start(), m.group(2)) for m in quoted]
    for match in _AT_BARE.finditer(text):
        if not any(q.start() <= match.start() < q.end() for q in quoted):
            found.append((match.start(), _unescape(match.group(1).rstrip(".,;:!?)"))))
    return list(dict.fromkeys(path for _, path in sorted(found) if path))


def resolve(path: str, workspace: Path) -> Path:
    expanded = Path(os.path.expanduser(path))
    return expanded if expanded.is_absolute() else workspace / expanded


def read_image(path: Path, *, max_bytes: int = MAX_IMAGE_BYTES) -> Attachment:
    """The file's bytes, checked: a regular file, at most `max_bytes`, an image by its header."""
    try:
        with open(path, "rb") as handle:
            stat = os.fstat(handle.fileno())
            if not _is_regular(stat.st_mode):
                raise ImageError("not a regular file")
            if stat.st_size > max_bytes:
                raise ImageError(f"{_mb(stat.st_size)} is over the {_mb(max_bytes)} limit for an image")
            data = handle.read(max_bytes + 1)
    except FileNotFoundError:
        raise ImageError("no such file") from None
    except IsADirectoryError:
        raise ImageError("a folder, not an image") from None
    except OSError as exc:
        raise ImageError(exc.strerror or str(exc)) from None
    if len(data) > max_bytes:  # grew while read
        raise ImageError(f"over the {_mb(max_bytes)} limit for an image")
    mime, width, height = sniff(data)
    ref = ImageRef(hash=hashlib.sha256(data).hexdigest(), name=path.name, mime=mime, width=width, height=height)
    return Attachment(ref=ref, data=data)


# The name an image without one (a tool's) gets, by what its bytes are.
SUFFIX_OF_MIME = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def decode_image(encoded: str, stem: str, *, max_bytes: int = MAX_IMAGE_BYTES) -> Attachment:
    """An image sent as base64 (an MCP tool result's image content), checked like a file:
    at most `max_bytes`, an image by its header whatever type it claims; named `stem` plus
    the suffix of what it is. The size is judged before decoding: a server may send 100 MB."""
    import base64
    import binascii

    if len(encoded) * 3 // 4 > max_bytes + 3:
        raise ImageError(f"{_mb(len(encoded) * 3 // 4)} is over the {_mb(max_bytes)} limit for an image")
    try:
        data = base64.b64decode("".join(encoded.split()), validate=True)  # line breaks are allowed
    except (binascii.Error, ValueError):
        raise ImageError("not valid base64") from None
    if len(data) > max_bytes:
        raise ImageError(f"{_mb(len(data))} is over the {_mb(max_bytes)} limit for an image")
    mime, width, height = sniff(data)
    ref = ImageRef(
        hash=hashlib.sha256(data).hexdigest(), name=stem + SUFFIX_OF_MIME[mime], mime=mime, width=width, height=height
    )
    return Attachment(ref=ref, data=data)


def _is_regular(mode: int) -> bool:
    import stat

    return stat.S_ISREG(mode)


def _mb(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MB"


def prompt_images(
    text: str, workspace: Path, *, model: str, vision: bool, max_bytes: int = MAX_IMAGE_BYTES
) -> PromptImages:
    """The images `text` attaches (see the module docstring), each file read once; none when
    the model does not take images (`vision`), with a notice saying so."""
    out = PromptImages()
    seen: set[str] = set()
    for raw, explicit in referenced_paths(text):
        path = resolve(raw, workspace)
        if not explicit and not path.is_file():
            continue
        try:
            attachment = read_image(path, max_bytes=max_bytes)
        except ImageError as exc:
            if explicit or path.suffix.lower() in IMAGE_SUFFIXES:
                out.notices.append((f"{raw}: {exc}; not attached.", "warning"))
            continue
        if attachment.ref.hash in seen:
            continue
        if len(out.attachments) >= MAX_IMAGES_PER_PROMPT:
            out.notices.append(
                (f"{raw}: more than {MAX_IMAGES_PER_PROMPT} images in one prompt; not attached.", "warning")
            )
            continue
        seen.add(attachment.ref.hash)
        out.attachments.append(attachment)
    if out.attachments and not vision:
        names = ", ".join(a.ref.name for a in out.attachments)
        out.notices.append(
            (
                f"{model} does not take images (litellm's model map says so); the prompt was sent without {names}.",
                "warning",
            )
        )
        out.attachments = []
    out.notices += [(f"{a.ref.label} attached", "info") for a in out.attachments]
    return out


def sees_images(model: str, api_base: str | None) -> bool:
    """Whether `model` takes images: litellm's bundled model map says (`supports_vision`; a
    known model without the flag does not). A model the map does not know is assumed to see
    them when it is served from the user's own `api_base` (a local or proxied server cairn
    cannot ask, and the user attached the image on purpose; a server that refuses says so
    in its error), and not otherwise."""
    from agent.llm.cost_map import model_info

    info = model_info(model) if model else None
    if info is None:
        return bool(api_base)
    return bool(info.supports_vision)
