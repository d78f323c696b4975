"""The notification's escape sequences (agent/ui/notify.py); when they are sent is
tests/ui/test_habits_pilot.py's."""

from __future__ import annotations

from agent.ui.notify import MAX_TEXT, sequences


def test_notification_sequences_are_osc_9_and_777_without_control_characters():
    assert sequences("done\x07\x1b]evil") == "\x1b]9;done ]evil\x07\x1b]777;notify;cairn;done ]evil\x07"
    assert len(sequences("x" * 1000)) < 2 * MAX_TEXT + 40
