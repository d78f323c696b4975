"""The installed console script: --help, --version, headless -p through the fake server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls

CAIRN = Path(sys.executable).parent / "cairn"
pytestmark = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")


def run(*args, cwd=None, timeout=60):
    return subprocess.run(
        [str(CAIRN), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env=os.environ.copy(),
        stdin=subprocess.DEVNULL,
    )


def test_help_lists_the_contract_flags():
    out = run("--help")
    assert out.returncode == 0
    for flag in (
        "--model",
        "--api-base",
        "--api-key",
        "--yolo",
        "--cwd",
        "--debug",
        "--continue",
        "--resume",
        "-p",
        "--output-format",
        "--version",
        "--input-format",
        "--max-turns",
        "--max-cost",
        "--allowed-tools",
        "--disallowed-tools",
        "stream-json",
        "acp",
    ):
        assert flag in out.stdout


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.startswith("cairn ")


def test_headless_text_and_json(workspace):
    with FakeLLMServer(
        [
            tool_calls([("c1", "filesystem-create", {"filePath": "hello.txt", "content": "hi\n"})]),
            text("Created hello.txt."),
            text("Second run."),
        ]
    ) as srv:
        base = ["--model", "openai/fake", "--api-base", srv.base_url, "--api-key", "sk-test", "--cwd", str(workspace)]
        out = run(*base, "--yolo", "-p", "create hello.txt")
        assert out.returncode == 0, out.stderr
        assert out.stdout == "Created hello.txt.\n"
        assert (workspace / "hello.txt").read_text() == "hi\n"
        out = run(*base, "--continue", "-p", "again", "--output-format", "json")
        assert out.returncode == 0, out.stderr
        result = json.loads(out.stdout)  # one object: Claude Code's result, the stored messages beside
        assert result["result"] == "Second run." and result["is_error"] is False
        lines = result["messages"]
        assert [m["role"] for m in lines] == ["user", "assistant"]
        assert lines[1]["content"] == "Second run." and lines[1]["parent_id"] == lines[0]["id"]
        # --continue sent the whole earlier conversation.
        assert len(srv.requests[-1]["messages"]) == 1 + 4 + 1


def test_headless_without_yolo_refuses_changes(workspace):
    with FakeLLMServer(
        [
            tool_calls([("c1", "terminal-execute", {"command": "touch made"})]),
            text("could not"),
        ]
    ) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            "k",
            "--cwd",
            str(workspace),
            "-p",
            "make a file",
        )
    assert out.returncode == 0 and not (workspace / "made").exists()


def test_headless_no_model_is_a_clear_error(workspace):
    out = run("--cwd", str(workspace), "-p", "hi")
    assert out.returncode == 2
    assert "no model configured" in out.stderr and "Traceback" not in out.stderr


def test_headless_provider_error_exit_code(workspace):
    from tests.fakes.llm_server import error

    with FakeLLMServer([error(401)]) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            "bad",
            "--cwd",
            str(workspace),
            "-p",
            "hi",
        )
    assert out.returncode == 1
    assert "OPENAI_API_KEY" in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""


def test_bad_cwd():
    out = run("--cwd", "/nonexistent/folder", "-p", "x")
    assert out.returncode == 2 and "not a folder" in out.stderr


def test_resume_unknown_session_is_a_clear_error(workspace):
    out = run("--model", "openai/fake", "--cwd", str(workspace), "--resume", "nope", "-p", "hi")
    assert out.returncode == 2 and "No session matches 'nope'" in out.stderr


def test_headless_compact_and_project_command(workspace):
    commands = workspace / ".cairn" / "commands"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: review a file\n---\nReview $ARGUMENTS for bugs.\n")
    with FakeLLMServer([text("First."), text("Reviewed."), text("SUMMARY OF THE SESSION")]) as srv:
        base = ["--model", "openai/fake", "--api-base", srv.base_url, "--api-key", "sk-test", "--cwd", str(workspace)]
        assert run(*base, "-p", "hello").returncode == 0
        out = run(*base, "--continue", "-p", "/review src/app.py")
        assert out.returncode == 0, out.stderr
        sent = srv.requests[-1]["messages"][-1]["content"]
        assert sent.startswith('<command name="review">') and "Review src/app.py for bugs." in sent
        out = run(*base, "--continue", "-p", "/compact keep the API notes")
        assert out.returncode == 0, out.stderr
        assert "SUMMARY OF THE SESSION" in out.stdout
        assert "context condensed (manual)" in out.stderr
        assert any("keep the API notes" in m["content"] for m in srv.requests[-1]["messages"])


def test_headless_answer_cut_at_the_output_limit_says_so(workspace):
    """Issue 17: an answer cut off at the output limit is printed, stderr says it was cut
    (naming the setting), and the exit code stays 0 (README, `-p`)."""
    with FakeLLMServer([text("The parser starts with\n    def parse(", finish_reason="length")]) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            "sk-test",
            "--cwd",
            str(workspace),
            "-p",
            "write a parser",
        )
        sent = srv.requests[-1]
    assert out.returncode == 0, out.stderr
    assert out.stdout == "The parser starts with\n    def parse(\n"
    assert (
        "Note: the answer was cut off at the model's output limit (llm.max_output_tokens = 4096)."
        in out.stderr.splitlines()
    ), out.stderr
    assert sent.get("max_tokens") == 4096


def test_headless_configured_output_limit(workspace):
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text("[llm]\nmax_output_tokens = 512\n")
    with FakeLLMServer([text("Short.", finish_reason="length")]) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            "sk-test",
            "--cwd",
            str(workspace),
            "-p",
            "hi",
            "--output-format",
            "json",
        )
        sent = srv.requests[-1]
    assert out.returncode == 0, out.stderr
    assert sent.get("max_tokens") == 512
    answer = json.loads(out.stdout)["messages"][-1]
    assert answer["meta"]["finish_reason"] == "length" and answer["meta"]["max_output_tokens"] == 512
    assert "(llm.max_output_tokens = 512)" in out.stderr


def test_debug_log_has_each_request_and_the_context_passes(workspace, _isolated_home):
    """Issue 17: `--debug` logs each request (model, tokens estimated vs reported, cache
    tokens, duration, finish reason, cost) and each context pass that changed the request,
    with the key redacted."""
    key = "sk-test-0123456789abcdefghijklmnop"
    big = "python3 -c \"print('line of output ' * 2000)\""
    with FakeLLMServer(
        [
            tool_calls([("c1", "terminal-execute", {"command": big})], prompt_tokens=700, completion_tokens=30),
            # The server waits before it answers: the logged duration must include that wait.
            text("Printed it.", prompt_tokens=1234, completion_tokens=56, initial_delay=0.3),
        ]
    ) as srv:
        out = run(
            "--model",
            "openai/fake",
            "--api-base",
            srv.base_url,
            "--api-key",
            key,
            "--cwd",
            str(workspace),
            "--yolo",
            "--debug",
            "-p",
            f"run {big} and tell me",
        )
    assert out.returncode == 0, out.stderr
    log = (_isolated_home / "cairn.log").read_text()
    requests = [line for line in log.splitlines() if " INFO agent.llm: request " in line]
    assert len(requests) == 2, log
    first, second = requests
    assert "model=openai/fake messages=2 " in first and "finish_reason=tool_calls" in first
    assert "prompt_tokens=700 completion_tokens=30" in first
    for part in (
        "model=openai/fake messages=4 ",
        "max_tokens=4096",
        "prompt_tokens=1234",
        "completion_tokens=56",
        "cache_read_tokens=0",
        "cache_write_tokens=0",
        "finish_reason=stop",
        "cost=0.000000",
    ):
        assert part in second, second
    assert int(second.split("tokens_estimated=")[1].split()[0]) > 0
    # Logged, and measured around the call: the server's wait makes it non-zero (a timer that
    # never started or stopped logs 0.00).
    assert float(second.split("duration=")[1].split("s ")[0]) > 0
    # The long output went to the model as a preview and a ref: the pass said so.
    assert " INFO agent.context: externalize: 1 changed, " in log, log
    assert key not in log
