"""`cairn session list` shows titles as text: a title holding escape sequences cannot drive
the terminal, on a terminal or piped (the listing is for people; scripts read `--json`,
whose values stay exact).

Titles come from outside: a subagent's session is titled with the task the model wrote, an
imported session with the title its file gave, a session with its first prompt (a paste).
"""

from __future__ import annotations

import json

from agent.session.models import Message
from agent.session.store import Store
from tests.headless.terminals import run_on_terminals
from tests.hostile.test_terminal_text import FORBIDDEN
from tests.test_cli import CAIRN, pytestmark, run  # noqa: F401

TITLE = "fix \x1b]0;PWNED\x07\x1b]52;c;Y3VybCBldmls\x1b\\ \x1b[2J \x9b31m \u202eevil"
PROMPT = "prompt \x1b[8mhidden\x1b[0m \x9d2;T\x9c"
TASK = "explore: \x1b]2;CHILD\x1b\\ look"


async def make_sessions() -> None:
    store = await Store.open()
    try:
        parent = await store.create_session(cwd="/w\x1b[2J", model="openai/fake", title=TITLE)
        await store.append(parent, Message(role="user", content=PROMPT))
        untitled = await store.create_session(cwd="/w", model="openai/fake")
        await store.append(untitled, Message(role="user", content=PROMPT))
        child = await store.create_session(
            cwd="/w", model="openai/fake", title=TASK, parent_session_id=parent.id, agent="explore"
        )
        await store.append(child, Message(role="user", content="look"))
    finally:
        await store.close()


async def test_titles_are_inert_on_a_terminal_and_piped(workspace):
    await make_sessions()
    code, out, err = run_on_terminals([str(CAIRN), "session", "list"], timeout=60)
    assert code == 0, err
    on_terminal = out.decode()
    piped = run("session", "list")
    assert piped.returncode == 0, piped.stderr
    for shown in (on_terminal, piped.stdout):
        assert not set(shown) & (FORBIDDEN - {"\r"}), repr(shown)  # (a pty ends lines in CRLF)
        assert "fix ␛]0;PWNED␇␛]52;c;Y3VybCBldmls␛\\ ␛[2J \\x9b31m \\u202eevil" in shown
        assert "prompt ␛[8mhidden␛[0m \\x9d2;T\\x9c" in shown  # an untitled session: its first prompt
        assert "explore: ␛]2;CHILD␛\\ look" in shown
        assert "[/w␛[2J]" in shown


async def test_json_keeps_the_titles_exactly(workspace):
    await make_sessions()
    piped = run("session", "list", "--json")
    assert piped.returncode == 0, piped.stderr
    assert not set(piped.stdout) & FORBIDDEN
    rows = json.loads(piped.stdout)
    assert {r["title"] for r in rows} >= {TITLE, TASK}
    assert PROMPT in {r["first_prompt"] for r in rows}


async def test_an_export_is_inert_on_a_terminal_and_exact_piped(workspace):
    """An export is data (it must import again exactly) when piped; on a terminal it is read."""
    await make_sessions()
    rows = json.loads(run("session", "list", "--json").stdout)
    session_id = next(r["id"] for r in rows if r["title"] == TITLE)
    code, out, err = run_on_terminals([str(CAIRN), "session", "export", session_id, "--format", "md"], timeout=60)
    assert code == 0, err
    assert "\x1b" not in out.decode() and "prompt ␛[8mhidden" in out.decode()
    piped = run("session", "export", session_id, "--format", "md")
    assert piped.returncode == 0, piped.stderr
    assert "prompt \x1b[8mhidden\x1b[0m" in piped.stdout
