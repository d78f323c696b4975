"""The notification's escape sequences (agent/ui/notify.py); when they are sent is
tests/ui/test_habits_pilot.py's."""

from __future__ import annotations

from agent.ui.notify import MAX_DETAIL, MAX_TEXT, sequences, shortened


def test_notification_sequences_are_osc_9_and_777_without_control_characters():
    assert sequences("done\x07\x1b]evil") == "\x1b]9;done ]evil\x07\x1b]777;notify;cairn;done ]evil\x07"
    assert len(sequences("x" * 1000)) < 2 * MAX_TEXT + 40


def test_a_command_in_the_notification_is_one_inert_line_cut_with_an_ellipsis():
    assert shortened("pytest -q") == "pytest -q"
    assert shortened("python -m pytest\nrm -rf build") == "python -m pytest …"  # more lines follow
    long = shortened("x" * 200)
    assert len(long) == MAX_DETAIL and long.endswith("…")
    assert "\x1b" not in shortened("echo \x1b[31mred")
