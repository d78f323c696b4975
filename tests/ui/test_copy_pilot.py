"""/copy (issue 47 item 6): the last answer or its N-th code block to the clipboard, by OSC 52
(Textual keeps what it wrote in `app.clipboard`) and by the desktop's clipboard tool, which a
script on PATH stands in for here, recording what it was given."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from agent.ui.app import CairnApp
from agent.ui.clipboard import ClipboardTool, ToolFailed, copy_with, find_tool
from agent.ui.widgets.chat import Notice
from tests.fakes.llm_server import text
from tests.ui.conftest import run_prompt, wait_ready

SIZE = (80, 24)
FIRST = "An older answer, not the last one."
BLOCK_ONE = "pip install cairn"
BLOCK_TWO = 'def greet(name):\n    return f"hi {name}"'
# The last answer: two fenced blocks, and an ESC the chat shows as ␛ (a hidden one would end a
# shell's bracketed paste early: `ESC [ 201 ~`).
LAST = (
    f"Install it:\n\n```bash\n{BLOCK_ONE}\n```\n\nThen \x1b[201~ write:\n\n```python\n{BLOCK_TWO}\n```\n\nThat is all."
)
LAST_AS_SHOWN = LAST.replace("\x1b", "␛")


@pytest.fixture
def desktop(monkeypatch, tmp_path):
    """No display, no tmux: OSC 52 alone, whatever the machine running the tests has."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "TMUX"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def last_notice(app) -> Notice:
    return list(app.chat.query(Notice))[-1]


async def copy(pilot, line: str) -> Notice:
    await run_prompt(pilot, line)
    return last_notice(pilot.app)


async def test_copy_the_last_answer_and_its_code_blocks(make_settings, server, desktop, monkeypatch):
    server.add(text(FIRST), text(LAST, chunk_size=11))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        assert "Nothing to copy yet" in (await copy(pilot, "/copy")).text
        await run_prompt(pilot, "first")
        await run_prompt(pilot, "second")
        assert app.clipboard == ""  # an answer alone never reaches the clipboard

        notice = await copy(pilot, "/copy")
        assert app.clipboard == LAST_AS_SHOWN
        assert notice.text == (
            f"Copied the last answer ({len(LAST_AS_SHOWN):,} characters) to the clipboard with OSC 52 "
            "(your terminal must allow it)."
        )

        notice = await copy(pilot, "/copy 2")
        assert app.clipboard == BLOCK_TWO  # its code only: no fences, no last line end
        assert notice.text.startswith(f"Copied code block 2 of the last answer ({len(BLOCK_TWO)} characters)")

        notice = await copy(pilot, "/copy 3")
        assert notice.text == "The last answer has 2 code blocks: /copy 1 to /copy 2 copy one."
        assert app.clipboard == BLOCK_TWO  # unchanged

        assert (await copy(pilot, "/copy two")).text.startswith("Usage: /copy [N]")
        assert (await copy(pilot, "/copy 0")).text.startswith("Usage: /copy [N]")
        assert (await copy(pilot, "/copy ²")).text.startswith("Usage: /copy [N]")

        monkeypatch.setenv("TMUX", "/tmp/tmux-1000/default,1,0")
        notice = await copy(pilot, "/copy 1")
        assert app.clipboard == BLOCK_ONE
        assert "tmux needs `set -g set-clipboard on`" in notice.text


FAKE_XCLIP = """#!/bin/sh
printf '%s\\n' "$@" > "{record}.args"
env > "{record}.env"
cat > "{record}"
exit {code}
"""


def install_xclip(folder: Path, record: Path, code: int = 0) -> None:
    script = folder / "xclip"
    script.write_text(FAKE_XCLIP.format(record=record, code=code))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


async def test_the_desktops_clipboard_tool_gets_the_text_on_stdin(make_settings, server, desktop, monkeypatch):
    tools, record = desktop / "bin", desktop / "xclip-got"
    tools.mkdir()
    install_xclip(tools, record)
    monkeypatch.setenv("PATH", f"{tools}:{Path('/usr/bin')}:{Path('/bin')}")
    monkeypatch.setenv("DISPLAY", ":99")
    monkeypatch.setenv("CAIRN_API_KEY", "sk-cairn-own-key-0123456789")  # never handed to a program cairn starts
    server.add(text(LAST))
    app = CairnApp(make_settings())
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        await run_prompt(pilot, "show me")
        assert not record.exists()  # nothing copied unasked

        notice = await copy(pilot, "/copy 2")
        assert record.read_text() == BLOCK_TWO == app.clipboard
        assert record.with_name("xclip-got.args").read_text().split() == ["-selection", "clipboard"]
        assert "CAIRN_API_KEY" not in record.with_name("xclip-got.env").read_text()
        assert notice.text.endswith("to the clipboard with OSC 52 and xclip.")
        assert notice.kind == "info"

        install_xclip(tools, record, code=1)  # the display refused it
        notice = await copy(pilot, "/copy")
        assert record.read_text() == LAST_AS_SHOWN == app.clipboard
        assert notice.text.endswith("with OSC 52 only (your terminal must allow it): xclip failed (exit 1).")
        assert notice.kind == "warning"


def test_a_display_picks_its_tool_from_path(tmp_path):
    for name in ("wl-copy", "xsel", "pbcopy"):
        install_xclip(tmp_path, tmp_path / "unused")
        (tmp_path / "xclip").rename(tmp_path / name)
    path = str(tmp_path)
    wayland = find_tool({"PATH": path, "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"}, platform="linux")
    assert wayland is not None and wayland.argv == (str(tmp_path / "wl-copy"),)
    x11 = find_tool({"PATH": path, "DISPLAY": ":0"}, platform="linux")
    assert x11 is not None and x11.argv == (str(tmp_path / "xsel"), "--clipboard", "--input")  # no xclip here
    mac = find_tool({"PATH": path}, platform="darwin")
    assert mac is not None and mac.argv == (str(tmp_path / "pbcopy"),)
    assert find_tool({"PATH": path}, platform="linux") is None  # no display: OSC 52 alone


HANGING_TOOL = """#!/bin/sh
sleep 600 &
echo $! > "{child}"
wait
"""


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # killed, maybe not yet reaped by init


async def test_a_tool_that_hangs_is_given_up_and_its_group_killed(tmp_path):
    script, child = tmp_path / "xclip", tmp_path / "child"
    script.write_text(HANGING_TOOL.format(child=child))
    script.chmod(0o755)
    with pytest.raises(ToolFailed, match="did not finish"):
        await copy_with(ClipboardTool("xclip", (str(script),)), "text", timeout=1.0)
    pid = int(child.read_text())
    for _ in range(500):  # SIGKILL went to the whole group: wait for it to land
        if not running(pid):
            break
        await asyncio.sleep(0.01)
    assert not running(pid)
