"""First token on screen after Enter, in a real terminal (tmux), against the scripted fake server.

Launches the installed `cairn` in a detached tmux pane (120×36) pointed at a `FakeLLMServer`
running in this process (a thread; this process otherwise only polls tmux, so it takes no
CPU from cairn's). For each prompt: the text `ping-N please` is typed and seen on screen,
then the clock starts, Enter is sent, and `tmux capture-pane` is polled every ~5 ms until
the answer's first content delta — a marker unique to that prompt, `TOKnnnQ`, sent alone in
the stream's first chunk — is drawn. The answer then streams ~40 more words (5 ms apart)
and the next prompt waits until its end marker is on screen and the turn has finished.

Two figures (medians):

- **warm**: prompts 2.. of a launch — the runtime and litellm are loaded; this is what
  every prompt of a session costs (the request build, litellm's request, the fake server's
  first chunk, the chat drawing it, tmux);
- **first prompt**: Enter pressed as soon as the prompt is drawn, so it also waits for the
  runtime to open behind the first screen (litellm's import, the database);
- **first prompt once loaded**: the first prompt of a launch sent after the status line
  shows the context window (the backend has loaded and warmed up): what a user who takes
  a few seconds to type the first prompt waits — first-request costs not paid by the
  warm-up show here.

What the figures include besides cairn: spawning `tmux send-keys` (~2–5 ms) and the poll
interval (≤ 5 ms). SPEC §10 sets no target for this. `--quick`: one launch of each kind, one warm prompt.

Usage: python bench/first_token.py [--launches 3] [--prompts 4] [--cairn PATH] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from run import SKIPPED_NO_TMUX, Row, cairn_script, common_args, finish, have_tmux  # noqa: E402
from tmux_timing import READY_TEXT, PrivateTmux  # noqa: E402

START_TIMEOUT = 30.0
ANSWER_TIMEOUT = 60.0  # the first prompt waits for litellm's import (seconds on a loaded box)
POLL = 0.005
_PING = re.compile(r"ping-(\d+) please")


def first_marker(i: int) -> str:
    return f"TOK{i:03d}Q"


def end_marker(i: int) -> str:
    return f"END{i:03d}Q"


def respond(request: dict):
    """The fake model: `ping-N please` → an answer whose first chunk is exactly `TOKnnnQ `."""
    from tests.fakes.llm_server import filler_text, text

    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    found = _PING.findall(json.dumps(users[-1].get("content") if users else ""))
    i = int(found[-1]) if found else 999
    first = first_marker(i) + " "
    return text(first + filler_text(40) + " " + end_marker(i), chunk_size=len(first), delay=0.005)


class Pane:
    """One cairn in one tmux session: type, press Enter, wait for text."""

    def __init__(self, tmux: PrivateTmux, command: str) -> None:
        self.tmux = tmux
        self.name = f"ft-{uuid.uuid4().hex[:8]}"
        started = tmux.run("new-session", "-d", "-s", self.name, "-x", "120", "-y", "36", command)
        if started.returncode != 0:
            raise RuntimeError(f"tmux new-session failed: {started.stderr.strip()}")

    def screen(self) -> str:
        return self.tmux.run("capture-pane", "-p", "-t", self.name).stdout

    def wait_for(self, text: str, timeout: float) -> float:
        """perf_counter() when `text` was first seen on screen."""
        deadline = time.perf_counter() + timeout
        while True:
            screen = self.screen()
            now = time.perf_counter()
            if text in screen:
                return now
            if now > deadline:
                raise RuntimeError(f"{text!r} not on screen after {timeout:.0f} s; screen:\n{screen}")
            time.sleep(POLL)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux.run("send-keys", "-t", self.name, *(["-l"] if literal else []), *keys)

    def close(self) -> None:
        self.tmux.run("kill-session", "-t", self.name)


def ask(pane: Pane, server, i: int) -> float:
    """Type prompt `i`, press Enter; ms until its first token is on screen (waits for the whole turn)."""
    prompt = f"ping-{i} please"
    pane.keys(prompt, literal=True)
    pane.wait_for(prompt, ANSWER_TIMEOUT)
    start = time.perf_counter()
    pane.keys("Enter")
    seen = pane.wait_for(first_marker(i), ANSWER_TIMEOUT)
    pane.wait_for(end_marker(i), ANSWER_TIMEOUT)
    server.wait_idle(ANSWER_TIMEOUT)
    time.sleep(0.3)  # the turn stores the answer and ends: the next prompt must not find it busy
    return (seen - start) * 1000


LOADED_TEXT = "/128k"  # the status line's context window (the fake model's default window)


def measure(cairn: Path, launches: int, prompts: int) -> tuple[list[float], list[float], list[float]]:
    """(first-prompt ms per launch, the same once loaded, warm ms per later prompt):
    `launches` launches of each kind."""
    from tests.fakes.llm_server import FakeLLMServer

    first, loaded, warm = [], [], []
    counter = 0
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeLLMServer([respond], repeat=True) as server,
        PrivateTmux("cairn-bench-first-token") as tmux,
    ):
        for launch in range(2 * launches):
            home, ws = Path(tmp, f"home{launch}"), Path(tmp, f"ws{launch}")
            home.mkdir()
            ws.mkdir()
            command = (
                f"env -u PYTHONDONTWRITEBYTECODE CAIRN_HOME={home} {cairn} --model openai/fake-model "
                f"--api-base {server.base_url} --api-key sk-bench --cwd {ws}"
            )
            pane = Pane(tmux, command)
            try:
                pane.wait_for(READY_TEXT, START_TIMEOUT)
                if launch % 2:
                    pane.wait_for(LOADED_TEXT, START_TIMEOUT)
                for k in range(prompts):
                    counter += 1
                    ms = ask(pane, server, counter)
                    (warm if k else loaded if launch % 2 else first).append(ms)
            finally:
                pane.close()
    return first, loaded, warm


def run(quick: bool = False, *, launches: int = 3, prompts: int = 4, cairn: Path | None = None) -> list[Row]:
    if quick:
        launches, prompts = 1, 2
    cairn = cairn or cairn_script()
    warm_figure = "Enter → first token on screen, warm (tmux)"
    first_figure = "Enter → first token, first prompt at start (tmux)"
    loaded_figure = "Enter → first token, first prompt once loaded (tmux)"
    if not have_tmux():
        return [
            Row("first_token", figure, None, note=SKIPPED_NO_TMUX)
            for figure in (warm_figure, loaded_figure, first_figure)
        ]
    if not cairn.exists():
        raise RuntimeError(f"{cairn} not found: pip install -e . first")
    first, loaded, warm = measure(cairn, launches, max(2, prompts))
    for label, values in (("warm", warm), ("first prompt once loaded", loaded), ("first prompt", first)):
        print(
            f"first_token_ms {label}: median={statistics.median(values):.0f} "
            f"runs=[{', '.join(f'{v:.0f}' for v in values)}]"
        )
    return [
        Row("first_token", warm_figure, statistics.median(warm), runs=warm),
        Row("first_token", loaded_figure, statistics.median(loaded), runs=loaded),
        Row(
            "first_token",
            first_figure,
            statistics.median(first),
            runs=first,
            note="includes the runtime opening (litellm import) behind the first screen",
        ),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=3, help="cairn processes (one first prompt each)")
    parser.add_argument("--prompts", type=int, default=4, help="prompts per launch (the first is not warm)")
    parser.add_argument("--cairn", default=str(cairn_script()))
    common_args(parser)
    args = parser.parse_args(argv)
    return finish(run(args.quick, launches=args.launches, prompts=args.prompts, cairn=Path(args.cairn)), args.json)


if __name__ == "__main__":
    sys.exit(main())
