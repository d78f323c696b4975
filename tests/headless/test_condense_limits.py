"""A condense is a model request of the run like any (issue 43, class 4): its bill counts
toward `--max-cost` as it happens, through the installed `cairn -p` against the scripted
server. A repository whose files fill the window makes cairn summarise again and again;
before this, those summaries' cost was shown by /cost but never reached the run's guard.

The script holds exactly the requests the run may send: a run that went on past the limit
would find the script empty, and the `server` fixture fails the test."""

from __future__ import annotations

from tests.fakes.llm_server import text, tool_calls
from tests.headless.helpers import base_args, cairn, events, needs_cairn, write_user_config

pytestmark = needs_cairn
SMALL_WINDOW = '[models."openai/gpt-4o"]\ncontext_window = 3000\n'


def test_max_cost_counts_what_a_condense_costs(server, workspace, _isolated_home):
    (workspace / "big.txt").write_text("".join(f"line {i} of a long file with words\n" for i in range(400)))
    (workspace / "a.txt").write_text("a\n")
    write_user_config(_isolated_home, SMALL_WINDOW)
    server.add(
        tool_calls([("r1", "filesystem-read", {"filePath": "big.txt"})], prompt_tokens=10, completion_tokens=10),
        text("the summary of what happened", prompt_tokens=200_000, completion_tokens=10),  # the condense: $0.50
        tool_calls([("r2", "filesystem-read", {"filePath": "a.txt"})], prompt_tokens=10, completion_tokens=10),
    )
    args = base_args(server, workspace, model="openai/gpt-4o")
    out = cairn(*args, "-p", "read big.txt", "--max-cost", "0.01", "--output-format", "stream-json")
    assert out.returncode == 4, out.stderr
    assert len(server.requests) == 3
    final = events(out.stdout)[-1]
    assert final["limit"] == "max_cost" and final["run_cost"] > 0.01


def test_max_turns_counts_a_condense_as_a_request(server, workspace, _isolated_home):
    """`--max-turns 2`: the first request, then the second; the condense the second needs would
    be a third request, so it is not sent (the request is truncated instead) and the run stops
    at the limit. Before, summaries were sent past --max-turns."""
    (workspace / "big.txt").write_text("".join(f"line {i} of a long file with words\n" for i in range(400)))
    (workspace / "a.txt").write_text("a\n")
    write_user_config(_isolated_home, SMALL_WINDOW)
    server.add(
        tool_calls([("r1", "filesystem-read", {"filePath": "big.txt"})], prompt_tokens=10, completion_tokens=10),
        tool_calls([("r2", "filesystem-read", {"filePath": "a.txt"})], prompt_tokens=10, completion_tokens=10),
    )
    args = base_args(server, workspace, model="openai/gpt-4o")
    out = cairn(*args, "-p", "read big.txt", "--max-turns", "2", "--output-format", "stream-json")
    assert out.returncode == 3, out.stderr
    assert len(server.requests) == 2
    assert all(r.get("tools") for r in server.requests)  # both are the turn's own: no summary request went out
    final = events(out.stdout)[-1]
    assert final["limit"] == "max_turns" and "summarise" in final["message"], final
