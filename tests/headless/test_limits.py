"""Limits of unattended runs through the installed `cairn -p`: each ends the run with its own
exit code (3 max turns, 4 max cost, 5 not allowed, 6 disallowed) and a final event saying why,
and leaves a session whose next request is valid."""

from __future__ import annotations

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn

pytestmark = needs_cairn
STREAM = ("--output-format", "stream-json")


def _read(call_id: str, path: str = "a.txt"):
    return tool_calls([(call_id, "filesystem-read", {"filePath": path})])


def _final(out) -> tuple[dict, dict]:
    lines = events(out.stdout)
    limit = next(e for e in lines if e["type"] == "limit")
    return limit, lines[-1]


def test_max_turns_stops_before_the_next_request(workspace):
    (workspace / "a.txt").write_text("a\n")
    with FakeLLMServer([_read("c1"), _read("c2"), text("never sent")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "loop", "--max-turns", "2", *STREAM)
        sent = len(srv.requests)
    assert out.returncode == 3, out.stderr
    assert sent == 2
    limit, final = _final(out)
    assert limit["limit"] == "max_turns" and limit["exit_code"] == 3 and "--max-turns 2" in limit["message"]
    assert final["type"] == "result" and final["status"] == "limit" and final["limit"] == "max_turns"
    assert final["exit_code"] == 3 and final["requests"] == 2
    assert "Stopped: the run reached --max-turns 2 (2 model requests)" in out.stderr
    assert "Error" not in out.stderr  # a limit the user asked for is not an error


def test_max_turns_1_says_one_request(workspace):
    (workspace / "a.txt").write_text("a\n")
    with FakeLLMServer([_read("c1")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "loop", "--max-turns", "1")
    assert out.returncode == 3, out.stderr
    assert out.stderr.strip().endswith(
        "Stopped: the run reached --max-turns 1 (1 model request) and the model wanted to go on."
    ), out.stderr


def test_max_turns_is_not_hit_by_a_run_that_finishes(workspace):
    with FakeLLMServer([text("done")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "hi", "--max-turns", "1")
    assert out.returncode == 0 and out.stdout == "done\n"


def test_max_cost_from_reported_usage_and_prices(workspace):
    """gpt-4o is in litellm's price map: the fake server's reported usage has a price."""
    (workspace / "a.txt").write_text("a\n")
    with FakeLLMServer([_read("c1"), text("never sent")]) as srv:
        out = cairn(
            *base_args(srv, workspace, model="openai/gpt-4o"), "-p", "spend", "--max-cost", "0.0000001", *STREAM
        )
        sent = len(srv.requests)
    assert out.returncode == 4, out.stderr
    assert sent == 1
    limit, final = _final(out)
    assert limit["limit"] == "max_cost" and final["limit"] == "max_cost" and final["exit_code"] == 4
    usage = next(e for e in events(out.stdout) if e["type"] == "usage")
    assert usage["cost"] > 0 and abs(final["run_cost"] - usage["cost"]) < 1e-9


def test_allowed_tools_offers_only_those_and_stops_on_another(workspace):
    with FakeLLMServer([tool_calls([("c1", "terminal-execute", {"command": "touch made"})]), text("x")]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "go", "--allowed-tools", "filesystem-read", *STREAM)
        offered = [t["function"]["name"] for t in srv.requests[0]["tools"]]
    assert out.returncode == 5, out.stderr
    assert offered == ["filesystem-read"]
    assert not (workspace / "made").exists()
    limit, final = _final(out)
    assert limit["limit"] == "tool_not_allowed" and limit["tool_call_id"] == "c1" and final["exit_code"] == 5
    result = next(e for e in events(out.stdout) if e["type"] == "tool_result")
    assert result["id"] == "c1" and result["status"] == "error" and result["content"].startswith("Error: not run")


def test_allowed_command_prefix_runs_unasked_and_stops_beyond_it(workspace):
    """Without --yolo a listed prefix is approved by the flag; a compound command must be
    covered in every part."""
    with FakeLLMServer(
        [
            tool_calls([("c1", "terminal-execute", {"command": "touch made"})]),
            tool_calls([("c2", "terminal-execute", {"command": "touch ok && rm made"})]),
            text("never sent"),
        ]
    ) as srv:
        out = cairn(
            *base_args(srv, workspace),
            "-p",
            "go",
            "--allowed-tools",
            "filesystem-read, terminal-execute(touch)",
            *STREAM,
        )
    assert out.returncode == 5, out.stderr
    assert (workspace / "made").exists() and not (workspace / "ok").exists()
    limit, _ = _final(out)
    assert limit["tool_call_id"] == "c2" and "touch ok && rm made" in limit["message"]


def test_disallowed_tools_and_command_prefixes(workspace):
    with FakeLLMServer(
        [
            tool_calls([("c1", "terminal-execute", {"command": "echo hi"})]),
            tool_calls(
                [
                    ("c2", "terminal-execute", {"command": "git  push origin main"}),
                    ("c3", "filesystem-read", {"filePath": "x"}),
                ]
            ),
            text("after"),
        ]
    ) as srv:
        args = base_args(srv, workspace)
        out = cairn(
            *args,
            "--yolo",
            "-p",
            "ship it",
            "--disallowed-tools",
            "filesystem-edit,terminal-execute(git push)",
            *STREAM,
        )
        offered = [t["function"]["name"] for t in srv.requests[0]["tools"]]
        assert out.returncode == 6, out.stderr
        # The run stopped with every call answered: the session continues with a valid request.
        again = cairn(*args, "--continue", "-p", "what happened?")
        continued = srv.requests[-1]["messages"]
    assert "filesystem-edit" not in offered and "terminal-execute" in offered
    limit, final = _final(out)
    assert limit["limit"] == "tool_disallowed" and limit["tool_call_id"] == "c2" and final["exit_code"] == 6
    results = [e for e in events(out.stdout) if e["type"] == "tool_result"]
    assert [(r["id"], r["status"]) for r in results] == [("c1", "ok"), ("c2", "error"), ("c3", "error")]
    assert again.returncode == 0, again.stderr
    answered = {m["tool_call_id"] for m in continued if m["role"] == "tool"}
    assert {"c1", "c2", "c3"} <= answered


def test_an_unparseable_command_counts_as_disallowed(workspace):
    with FakeLLMServer([tool_calls([("c1", "terminal-execute", {"command": 'eval "git push"'})])]) as srv:
        out = cairn(*base_args(srv, workspace), "--yolo", "-p", "x", "--disallowed-tools", "terminal-execute(git push)")
    assert out.returncode == 6
    assert "could not be parsed" in out.stderr


def test_bad_limit_flags_are_usage_errors(workspace):
    for flags, words in (
        (["--allowed-tools", "nosuch-tool"], "unknown tool 'nosuch-tool'"),
        (["--disallowed-tools", "filesystem-read(x)"], "only terminal-execute"),
        (["--max-turns", "0"], "at least 1"),
        (["--max-cost", "-1"], "more than 0"),
    ):
        out = cairn("--model", "openai/x", "--cwd", str(workspace), "-p", "hi", *flags)
        assert out.returncode == 2 and words in out.stderr, (flags, out.stderr)
    out = cairn("--cwd", str(workspace), "--max-turns", "3")
    assert out.returncode == 2 and "apply to a headless run" in out.stderr


def test_rules_may_name_the_tools_a_session_adds(workspace):
    """`subagent`, `skill-load` and `lsp` join the tools when the session has something to
    offer (agents, skills, a language server): a rule may name them all the same."""
    with FakeLLMServer([text("done")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "x", "--allowed-tools", "subagent,skill-load,lsp,filesystem-read")
    assert out.returncode == 0, out.stderr
