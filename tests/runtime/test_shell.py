"""`!command`'s runner and note (agent/runtime/shell.py): the user's shell, no keys, bounded."""

from __future__ import annotations

import asyncio

from agent.process.secrets import remember_secret
from agent.runtime.shell import MAX_NOTE_CHARS, clip, note_message, run_command, shown_output

SECRET = "sk-shell-test-secret-99"


async def test_runs_in_the_workspace_with_output_streamed_and_no_keys(tmp_path, monkeypatch):
    remember_secret(SECRET)
    monkeypatch.setenv("SOME_PROVIDER_KEY", SECRET)
    seen: list[str] = []
    run = await run_command('pwd; echo "k=$SOME_PROVIDER_KEY"; exit 3', cwd=tmp_path, timeout=30, on_output=seen.append)
    assert run.stdout == f"{tmp_path}\nk=\n" and "".join(seen) == run.stdout
    assert run.exit_code == 3 and not run.timed_out and not run.interrupted


async def test_a_timeout_kills_the_group_and_says_so(tmp_path):
    run = await run_command("echo before; sleep 30", cwd=tmp_path, timeout=0.5)
    assert run.timed_out and run.exit_code is None and run.stdout == "before\n"
    assert "[cairn] timed out after 0.5 s; killed." in run.stderr


async def test_cancelling_stops_it_and_keeps_what_it_printed(tmp_path):
    seen: list[str] = []
    task = asyncio.ensure_future(run_command("echo started; sleep 30", cwd=tmp_path, timeout=60, on_output=seen.append))
    while not seen:
        await asyncio.sleep(0.01)
    task.cancel()
    run = await task
    assert run.interrupted and run.stdout == "started\n" and run.exit_code is None


async def test_something_left_in_the_background_does_not_hold_it(tmp_path):
    run = await run_command("sleep 30 & echo done", cwd=tmp_path, timeout=60)
    assert run.exit_code == 0 and run.stdout == "done\n"


def test_the_note_is_claude_codes_shape_bounded_and_marked_as_shell():
    from agent.runtime.shell import ShellRun

    run = ShellRun("ls", "a\nb\n", "x" * (MAX_NOTE_CHARS + 10), 1, False, False, 5)
    note = note_message(run)
    assert note.role == "user" and note.kind == "note" and note.meta["shell"]["exit_code"] == 1
    assert "<bash-input>ls</bash-input>\n<bash-stdout>a\nb</bash-stdout>" in note.content
    assert "characters left out" in note.content and "[exit code 1]" in note.content
    assert shown_output(note).startswith("a\nb\n" + "x" * 10)
    assert clip("short") == "short"


def test_the_first_screen_of_a_resumed_session_shows_the_note_as_output():
    from agent.runtime.shell import ShellRun
    from agent.ui.early_history import history_lines

    note = note_message(ShellRun("ls", "a.py\n", "", 0, False, False, 5))
    lines = history_lines([{"role": "user", "kind": "note", "content": note.content, "meta": note.meta}], 80)
    assert [line.split("\x1b[0m ", 1)[1] for line in lines if line] == ["! ls", "a.py"]
