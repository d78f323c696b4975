"""`cairn -p` against an address nothing listens on (issue 28 item 6): one readable `Error:`
line naming the model and the address, no library internals, and at most three attempts
(the first and two quick retries: with --debug the log has one line per request sent)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.headless.helpers import cairn, needs_cairn
from tests.llm.test_error_map import INTERNALS, closed_port


@needs_cairn
def test_a_refused_connection_is_one_readable_line_after_at_most_three_attempts(workspace):
    base = f"http://127.0.0.1:{closed_port()}/v1"
    args = ["--model", "openai/fake-model", "--api-base", base, "--api-key", "sk-test", "--cwd", str(workspace)]
    out = cairn(*args, "--debug", "-p", "hello")  # the default retry settings: five retries, backoff
    assert out.returncode == 1
    errors = [line for line in out.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, out.stderr
    (line,) = errors
    assert line.startswith(f"Error: Cannot reach openai/fake-model at {base}: the connection was refused")
    assert "--api-base" in line
    for word in INTERNALS:
        assert word not in out.stderr, (word, out.stderr)
    log = (Path(os.environ["CAIRN_HOME"]) / "cairn.log").read_text(encoding="utf-8").splitlines()
    attempts = [entry for entry in log if " request model=openai/fake-model " in entry]
    assert 1 <= len(attempts) <= 3, attempts
    assert all(" failed=" in entry for entry in attempts)
