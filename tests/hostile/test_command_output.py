"""Hostile command output from `terminal-execute`: binary, invalid UTF-8, floods, escapes.

The result is always the JSON object the model expects, storable as UTF-8 text; a flood
is bounded in memory and in what is stored (head and tail kept, the middle dropped and
counted); the process is finished or killed, never left running; terminal escapes are kept
in storage as the command wrote them, and shown inert by the UI (tests/hostile/test_render.py).
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path

import pytest

from agent.session.models import Message
from agent.tools.terminal import STREAM_KEEP_BYTES
from agent.ui.widgets import tool_render
from tests.hostile.conftest import execute

MB = 1024 * 1024
# What may be stored for one stream: the kept head and tail plus the drop note.
STORED_BOUND = STREAM_KEEP_BYTES + 1024


def output(result) -> dict:
    data = json.loads(result.content)
    assert set(data) == {"command", "stdout", "stderr", "exitCode"}
    return data


def as_message(result) -> Message:
    return Message(
        role="tool",
        tool_call_id="c1",
        tool_name="terminal-execute",
        content=result.content,
        status="error" if result.is_error else "ok",
        meta=result.meta,
    )


async def run(registry, ctx, command: str, **extra):
    return await execute(registry, ctx, "terminal-execute", {"command": command, **extra}, seconds=120)


async def test_binary_output(registry, yolo_ctx):
    result = await run(registry, yolo_ctx, "head -c 65536 /dev/urandom; printf '\\0\\0end'")
    data = output(result)
    assert data["exitCode"] == 0 and data["stdout"].endswith("\x00\x00end")
    assert len(data["stdout"]) <= 65536 + 5  # one character per byte at most (U+FFFD for bad ones)


async def test_invalid_utf8_becomes_replacement_characters(registry, yolo_ctx):
    result = await run(registry, yolo_ctx, "printf 'ok \\377\\376 mid \\303 end'; printf 'err \\200' >&2")
    data = output(result)
    assert data["stdout"] == "ok \ufffd\ufffd mid \ufffd end"
    assert data["stderr"] == "err \ufffd"


async def test_utf8_split_across_reads_is_kept_whole(registry, yolo_ctx):
    # 300,000 three-byte characters: chunk boundaries fall inside characters.
    result = await run(registry, yolo_ctx, "python3 -c \"import sys; sys.stdout.write('€' * 300000)\"")
    assert output(result)["stdout"] == "€" * 300000


async def test_no_trailing_newline(registry, yolo_ctx):
    data = output(await run(registry, yolo_ctx, "printf 'abc'; printf 'x' >&2"))
    assert data["stdout"] == "abc" and data["stderr"] == "x"
    body = tool_render.result_body(as_message(await run(registry, yolo_ctx, "printf 'last'")))
    assert body == "last"


async def test_ansi_and_cursor_codes_are_stored_as_written(registry, yolo_ctx):
    command = "printf '\\033[31mred\\033[0m\\033[2J\\033[H\\033[10;5Hmoved\\r\\033[Kwiped\\a\\b\\n'"
    result = await run(registry, yolo_ctx, command)
    stdout = output(result)["stdout"]
    assert stdout == "\x1b[31mred\x1b[0m\x1b[2J\x1b[H\x1b[10;5Hmoved\r\x1b[Kwiped\x07\x08\n"
    shown = tool_render.result_body(as_message(result))
    assert "\x1b" not in shown and "\x07" not in shown and "\x08" not in shown
    assert "␛[2J" in shown and "␛[31mred" in shown


# A flood's own command timeout and hang guard. Reading 500 MB under tracemalloc takes a few
# seconds on an idle machine and several times that on a loaded one; the context's 20 s
# default is a limit for ordinary commands, not for this one. `exitCode == 0` and the
# "done" on stderr still prove the command ran to its end rather than being killed.
# Two floods (+ their guards) stay under conftest's 240 s whole-test guard.
FLOOD_TIMEOUT = 90.0


async def _flood(registry, ctx, size: int):
    """Run a command printing `size` bytes; (result, peak traced memory during the call)."""
    # One `tr` stage turns NUL bytes into "a" at pipe speed (no shell loop, no Python producer).
    command = f"head -c {size} /dev/zero | tr '\\0' a; echo done >&2"
    tracemalloc.start()
    try:
        result = await execute(
            registry,
            ctx,
            "terminal-execute",
            {"command": command, "timeout": FLOOD_TIMEOUT},
            seconds=FLOOD_TIMEOUT + 20,
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return result, peak


async def test_500mb_of_output_is_bounded_in_memory_and_storage(registry, yolo_ctx):
    size = 500_000_000
    result, peak = await _flood(registry, yolo_ctx, size)
    data = output(result)
    assert data["exitCode"] == 0 and data["stderr"] == "done\n"
    assert not yolo_ctx.processes  # finished and reaped
    stdout = data["stdout"]
    assert len(stdout) <= STORED_BOUND  # what the loop stores is the result's content
    assert len(result.content) <= STORED_BOUND + 1024
    dropped = result.meta["droppedBytes"]["stdout"]
    assert "bytes of output dropped" in stdout and dropped == size - STREAM_KEEP_BYTES
    assert stdout.startswith("aaaa") and stdout.endswith("aaaa")
    # Memory does not grow with the output: a flood five times smaller peaks about as high
    # (a whole copy of 500 MB would make this peak several times the other).
    _, smaller_peak = await _flood(registry, yolo_ctx, size // 5)
    assert peak < smaller_peak * 1.5
    assert peak < size


async def test_endless_output_is_killed_at_the_timeout(registry, yolo_ctx, workspace):
    pidfile = workspace / "pid"
    result = await run(registry, yolo_ctx, f"yes & echo $! > {pidfile}; wait", timeout=2)
    assert result.is_error and result.meta["timedOut"] is True
    data = output(result)
    assert "timed out after 2 s" in data["stderr"] and data["stdout"].startswith("y\ny\n")
    assert len(data["stdout"]) <= STORED_BOUND
    assert not yolo_ctx.processes
    assert not _running(int(pidfile.read_text()))


async def test_a_background_child_holding_the_pipe_does_not_hang(registry, yolo_ctx, workspace):
    pidfile = workspace / "pid"
    result = await run(registry, yolo_ctx, f"sleep 300 & echo $! > {pidfile}; echo started", timeout=60)
    data = output(result)
    assert data["stdout"] == "started\n" and data["exitCode"] == 0
    os.kill(int(pidfile.read_text()), 9)  # cairn leaves background jobs alone; tidy up


async def test_a_command_reading_stdin_gets_eof(registry, yolo_ctx):
    data = output(await run(registry, yolo_ctx, "cat; read line; echo after"))
    assert data["stdout"] == "after\n"


async def test_a_very_long_single_line(registry, yolo_ctx):
    size = STREAM_KEEP_BYTES - MB  # one line, stored whole (just under the memory guard)
    result = await run(registry, yolo_ctx, f"head -c {size} /dev/zero | tr '\\0' b")
    assert len(output(result)["stdout"]) == size
    body = tool_render.result_body(as_message(result))
    assert len(body) < tool_render.MAX_BODY_LINE_CHARS + 10


def _running(pid: int) -> bool:
    """False when the process is gone or only a zombie waiting for a reaper."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@pytest.mark.parametrize(
    "command",
    [
        "printf '\\033]0;evil title\\007\\033]52;c;ZXZpbA==\\007'",  # window title, clipboard write (OSC 52)
        "printf '\\233' ; printf '31m'",  # a one-byte C1 CSI (not valid UTF-8 on its own)
        "printf '\\302\\2332J'",  # U+009B as valid UTF-8: a C1 CSI some terminals honour
    ],
)
async def test_escape_sequences_are_inert_when_shown(registry, yolo_ctx, command):
    result = await run(registry, yolo_ctx, command)
    shown = tool_render.result_body(as_message(result)) + tool_render.summarize_result(as_message(result))
    assert not any(ch in shown for ch in ("\x1b", "\x07", "\x9b"))
