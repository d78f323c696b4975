"""`cairn -p` with text piped on stdin (issue 28, item 4): appended to PROMPT, or the whole
prompt with `-p` alone; too much, binary input or no prompt at all is one `Error:` line."""

from __future__ import annotations

import io
import os

import pytest

from agent.headless.input import MAX_PIPED_PROMPT_BYTES, PipedInputError, prompt_with_stdin
from tests.fakes.llm_server import FakeLLMServer, text
from tests.headless.helpers import CAIRN, base_args

pytestmark = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")


def _cairn(*args: str, stdin: bytes | None):
    import subprocess

    return subprocess.run(
        [str(CAIRN), *args],
        capture_output=True,
        timeout=120,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        env=os.environ.copy(),
    )


def _user_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "user"]


def test_piped_text_is_appended_to_the_prompt(workspace):
    log = "Traceback (most recent call last):\n  File 'app.py', line 3\nZeroDivisionError: division by zero\n"
    with FakeLLMServer([text("It divides by zero.")]) as srv:
        out = _cairn(*base_args(srv, workspace), "-p", "summarise", stdin=log.encode())
        assert out.returncode == 0, out.stderr
        assert out.stdout.decode() == "It divides by zero.\n"
        (request,) = srv.requests
    (sent,) = _user_texts(request)
    assert sent.startswith("summarise\n\n") and "ZeroDivisionError: division by zero" in sent


def test_p_alone_reads_the_whole_prompt_from_stdin(workspace):
    with FakeLLMServer([text("Hello.")]) as srv:
        out = _cairn(*base_args(srv, workspace), "-p", stdin="say hello, café\n".encode())
        assert out.returncode == 0, out.stderr
        (request,) = srv.requests
    assert _user_texts(request) == ["say hello, café"]


def test_more_than_the_cap_is_a_readable_error_and_nothing_is_sent(workspace):
    with FakeLLMServer([]) as srv:
        out = _cairn(*base_args(srv, workspace), "-p", "look", stdin=b"x" * (MAX_PIPED_PROMPT_BYTES + 1))
        assert not srv.requests
    assert out.returncode == 2
    err = out.stderr.decode()
    assert err.startswith("Error: standard input is larger than 1 MB") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_binary_input_is_a_readable_error(workspace):
    with FakeLLMServer([]) as srv:
        out = _cairn(*base_args(srv, workspace), "-p", "what is this", stdin=b"\x89PNG\r\n\x1a\n\xff\x00\x00")
        assert not srv.requests
    assert out.returncode == 2
    err = out.stderr.decode()
    assert err.startswith("Error: standard input is not UTF-8 text") and "Traceback" not in err


def test_no_prompt_and_nothing_piped_says_how(workspace):
    with FakeLLMServer([]) as srv:
        out = _cairn(*base_args(srv, workspace), "-p", stdin=None)  # stdin: /dev/null, empty
        assert not srv.requests
    assert out.returncode == 2
    assert out.stderr.decode().startswith("Error: no prompt")


# -- the function itself ------------------------------------------------------------------------


def _stream(data: bytes) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")


def test_exactly_the_cap_is_taken():
    body = "y" * MAX_PIPED_PROMPT_BYTES
    assert prompt_with_stdin("", _stream(body.encode())) == body


def test_nothing_piped_leaves_the_prompt_as_given():
    assert prompt_with_stdin("  fix it\n", _stream(b"")) == "  fix it\n"
    assert prompt_with_stdin("fix it", _stream(b"\n\n")) == "fix it"
    assert prompt_with_stdin("fix it", None) == "fix it"


def test_a_byte_order_mark_is_not_part_of_the_prompt():
    assert prompt_with_stdin("", _stream("\ufeffhello".encode())) == "hello"


def test_nul_bytes_are_binary():
    with pytest.raises(PipedInputError, match="binary"):
        prompt_with_stdin("x", _stream(b"text\x00more"))


def test_a_terminal_is_never_read():
    """stdin a terminal: what is typed there is not the prompt (and reading would wait)."""
    master, slave = os.openpty()
    try:
        os.write(master, b"typed at the terminal\n\x04")  # a line, then end of input: no read would block
        with open(slave, encoding="utf-8", closefd=False) as tty:
            assert tty.isatty()
            assert prompt_with_stdin("the prompt", tty) == "the prompt"
            with pytest.raises(PipedInputError, match="no prompt"):
                prompt_with_stdin("", tty)
    finally:
        os.close(master)
        os.close(slave)


def test_an_open_pipe_with_nothing_on_it_does_not_hold_up_a_prompt(workspace):
    """A parent that keeps stdin open without writing (a CI runner, a harness): with a prompt
    given, -p goes on without it instead of waiting for an end of file that never comes."""
    import subprocess

    with FakeLLMServer([text("Hi.")]) as srv:
        proc = subprocess.Popen(
            [str(CAIRN), *base_args(srv, workspace), "-p", "hello"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=os.environ.copy(),
        )
        try:  # stdin stays open (never written, never closed) until cairn has answered
            assert proc.stdout is not None and proc.stderr is not None
            out, err = proc.stdout.read(), proc.stderr.read()
        finally:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)
        assert proc.returncode == 0, err
        assert out.decode() == "Hi.\n"
        (request,) = srv.requests
    assert _user_texts(request) == ["hello"]
