"""The first screen hands the terminal to the app in the app's own key mode (agent/ui/early.py):
an Enter typed in the moment between the two reaches the app as Enter, not as a line feed
(a new line in the prompt: the prompt was never sent), and nothing is echoed over the
screen. The shell's mode comes back once the app has ended. On a real pseudo-terminal."""

from __future__ import annotations

import os
import termios
import time
import tty

from agent.ui.early import EarlyScreen


def test_keys_typed_during_the_handoff_stay_raw_and_the_shells_mode_comes_back():
    master, slave = os.openpty()
    try:
        shell = termios.tcgetattr(slave)
        assert shell[tty.LFLAG] & termios.ICANON and shell[tty.IFLAG] & termios.ICRNL  # a cooked tty
        tty.setraw(slave, termios.TCSANOW)  # what EarlyScreen.start does
        screen = EarlyScreen(slave, slave, shell, [])
        screen._thread.start()
        os.write(master, b"hi")
        deadline = time.monotonic() + 60  # the reader takes the keys: a hang detector, not a timing
        while screen._keys.text != "hi" and time.monotonic() < deadline:
            time.sleep(0.01)
        typed = screen.stop()
        assert typed.text == "hi" and not typed.submitted

        mode = termios.tcgetattr(slave)
        assert not mode[tty.LFLAG] & (termios.ECHO | termios.ICANON | termios.ISIG)
        assert not mode[tty.IFLAG] & termios.ICRNL
        assert mode[tty.OFLAG] == shell[tty.OFLAG]  # output as the app would have it
        os.write(master, b"\r")  # Enter, after the first screen stopped and before the app reads
        assert os.read(slave, 16) == b"\r"  # the app sees Enter, not "\n"

        screen.restore()
        assert termios.tcgetattr(slave) == shell
    finally:
        os.close(master)
        os.close(slave)


def test_enter_typed_before_the_raw_mode_sends_the_prompt():
    """Keys typed while the tty was still the shell's (cooked): their Enter arrives as a line
    feed, and the first screen takes it as Enter, not as Ctrl+J (walk 9)."""
    master, slave = os.openpty()
    try:
        shell = termios.tcgetattr(slave)
        os.write(master, b"early at 0.1\r")  # a fast typist, before cairn set the raw mode
        tty.setraw(slave, termios.TCSANOW)
        screen = EarlyScreen(slave, slave, shell, [])
        screen._take_queued()
        screen._thread.start()  # as start() does: the reader must leave later keys alone
        os.write(master, b"after")  # typed once the screen is up: left for the app
        typed = screen.stop()
        assert typed.text == "early at 0.1" and typed.submitted
        assert os.read(slave, 16) == b"after"
        screen.restore()
    finally:
        os.close(master)
        os.close(slave)
