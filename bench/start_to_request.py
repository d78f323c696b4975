"""Process start → first request received by the model's server (issue 20, SPEC §10).

Two figures, medians of 5 fresh processes of the installed `cairn` against a
`FakeLLMServer` in this process (a thread that notes `perf_counter()` the moment a chat
request arrives; this process otherwise waits, so it takes no CPU from cairn's):

- **`cairn -p` start → request received** (SPEC target ≤ 1.5 s): `subprocess.Popen` of
  `cairn -p hi` until the server has the request's body; in-process (the default), and with
  the warm backend (`CAIRN_WARM=1`, agent/headless/warm.py) once it is up (one data folder
  for those runs, as a user's; the backend is stopped at the end);
- **CPU of a whole `cairn -p hi` run** (user + system, in-process): less at the mercy of
  the machine's load than wall time;
- **TUI: prompt sent 0.2 s after launch → request received** (issue 20 target ≤ 2 s):
  `cairn` launched in a detached tmux pane, `hi` typed 0.2 s later and Enter pressed as soon
  as `hi` is on the first screen (keys that reach the terminal before the first screen has
  put it in raw mode go through the line discipline, which turns Enter's CR into LF; the
  first screen takes such a queued LF as Enter since issue 46, but waiting for `hi` times
  the same moment in every run), until the server has the request. Needs tmux
  (`skipped (no tmux)` otherwise).

One uncounted warm-up run first (the OS file cache; its data folder's tokenizer cache is
copied into every counted run's, as a returning user's folder holds it). `--quick`: one run of each.

Usage: python bench/start_to_request.py [--runs 5] [--cairn PATH] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from run import SKIPPED_NO_TMUX, Row, at_most, cairn_script, common_args, finish, have_tmux  # noqa: E402
from tmux_timing import READY_TEXT, PrivateTmux  # noqa: E402

REQUEST_TIMEOUT = 60.0
APP_UP_TEXT = "new session"  # the Textual app's status line (the first screen has none)
TUI_PROMPT_DELAY = 0.2  # seconds after launch at which the prompt is typed and sent
SENT_TIMEOUT = 20.0  # after Enter, how long before an empty prompt on the app counts as a lost one
PROMPT_PLACEHOLDER = "Ask cairn…"  # an empty prompt shows it
HEADLESS_TARGET_MS = 1500
TUI_TARGET_MS = 2000


class Arrivals:
    """The fake model: notes when each request arrived, answers `ok`."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.event = threading.Event()

    def __call__(self, request: dict):
        from tests.fakes.llm_server import text

        self.times.append(time.perf_counter())
        self.event.set()
        return text("ok")

    def wait(self) -> float:
        if not self.event.wait(REQUEST_TIMEOUT):
            raise RuntimeError(f"no request within {REQUEST_TIMEOUT:.0f} s")
        self.event.clear()
        return self.times[-1]


def _env(home: Path, warm: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAIRN_") and k != "TMUX"}
    env["CAIRN_HOME"] = str(home)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if warm:
        env["CAIRN_WARM"] = "1"
    return env


def returning_user(first: Path, home: Path) -> None:
    """A launch as on a machine where cairn ran before: the data folder holds what the first
    launch left for later ones (the tokenizer, ready to load: agent/context/encoding_cache.py),
    not the sessions (each run starts a session of its own)."""
    import shutil

    if (first / "cache").is_dir() and not (home / "cache").exists():
        shutil.copytree(first / "cache", home / "cache")


def headless_once(
    cairn: Path, server, arrivals: Arrivals, tmp: Path, i: int, warm: bool = False, cpu: list[float] | None = None
) -> float:
    home, ws = (tmp / "home-warm", tmp / "ws-warm") if warm else (tmp / f"home-p{i}", tmp / f"ws-p{i}")
    home.mkdir(exist_ok=True)
    ws.mkdir(exist_ok=True)
    if i:
        returning_user(tmp / "home-p0", home)
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        [
            str(cairn),
            "--model",
            "openai/fake-model",
            "--api-base",
            server.base_url,
            "--api-key",
            "sk-bench",
            "--cwd",
            str(ws),
            "-p",
            "hi",
        ],
        env=_env(home, warm),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        arrived = arrivals.wait()
    finally:
        out, err = proc.communicate(timeout=REQUEST_TIMEOUT)
    if proc.returncode != 0:
        raise RuntimeError(f"cairn -p exited {proc.returncode}: {err}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if cpu is not None:
        cpu.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return (arrived - start) * 1000


def tui_once(cairn: Path, server, arrivals: Arrivals, tmux: PrivateTmux, tmp: Path, i: int, lost: list[int]) -> float:
    home, ws = tmp / f"home-t{i}", tmp / f"ws-t{i}"
    home.mkdir()
    ws.mkdir()
    returning_user(tmp / "home-p0", home)
    name = f"str-{os.getpid()}-{i}"
    command = (
        f"env -u PYTHONDONTWRITEBYTECODE CAIRN_HOME={home} {cairn} --model openai/fake-model "
        f"--api-base {server.base_url} --api-key sk-bench --cwd {ws}"
    )
    start = time.perf_counter()
    started = tmux.run("new-session", "-d", "-s", name, "-x", "120", "-y", "36", command)
    if started.returncode != 0:
        raise RuntimeError(f"tmux new-session failed: {started.stderr.strip()}")
    try:
        time.sleep(max(0.0, start + TUI_PROMPT_DELAY - time.perf_counter()))
        tmux.run("send-keys", "-t", name, "-l", "hi")
        deadline = time.monotonic() + REQUEST_TIMEOUT
        while True:
            screen = tmux.run("capture-pane", "-p", "-t", name).stdout
            if re.search(r"│ (?:hi)+\b", screen):  # in the prompt box
                break
            if READY_TEXT in screen and APP_UP_TEXT in screen and i not in lost:
                # The app is up with an empty prompt: the keys typed at 0.2 s were lost.
                lost.append(i)
                tmux.run("send-keys", "-t", name, "-l", "hi")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the typed prompt never showed on screen:\n{screen}")
            time.sleep(0.005)
        tmux.run("send-keys", "-t", name, "Enter")
        if not arrivals.event.wait(SENT_TIMEOUT):
            screen = tmux.run("capture-pane", "-p", "-t", name).stdout
            if APP_UP_TEXT in screen and i not in lost:
                # The app is up and nothing was sent: the Enter (or the keys too) typed around
                # the hand-over from the first screen was lost. Counted with the lost keys (the
                # note says how often), then typed again so the run still gives a figure.
                lost.append(i)
                if PROMPT_PLACEHOLDER in screen:
                    tmux.run("send-keys", "-t", name, "-l", "hi")
                tmux.run("send-keys", "-t", name, "Enter")
        arrived = arrivals.wait()
        server.wait_idle(REQUEST_TIMEOUT)
    finally:
        tmux.run("kill-session", "-t", name)
    return (arrived - start) * 1000


def warm_runs(cairn: Path, server, arrivals: Arrivals, tmp: Path, runs: int) -> list[float]:
    """The first run starts the backend (and runs in-process); the counted runs go through it."""
    home = tmp / "home-warm"
    headless_once(cairn, server, arrivals, tmp, 0, warm=True)
    log = home / "warm" / "backend.log"
    deadline = time.monotonic() + REQUEST_TIMEOUT
    while not (log.exists() and "ready" in log.read_text()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the warm backend did not start within {REQUEST_TIMEOUT:.0f} s")
        time.sleep(0.1)
    times = []
    try:
        for i in range(runs + 1):
            ms = headless_once(cairn, server, arrivals, tmp, i, warm=True)
            if i:  # the first child teaches the backend what a run imports
                times.append(ms)
            print(f"  cairn -p start → request, warm backend: {ms:,.0f} ms{'' if i else ' (not counted)'}")
    finally:
        stop_backend(home)
    if "run pid=" not in log.read_text():
        raise RuntimeError("the runs did not go through the warm backend")
    return times


def stop_backend(home: Path) -> None:
    import json
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(5)
            conn.connect(str(home / "warm" / "backend.sock"))
            conn.sendall(json.dumps({"command": "stop"}).encode() + b"\n")
            conn.recv(100)
    except OSError:
        pass


def run(
    quick: bool = False, *, runs: int = 5, cairn: Path | None = None, warm_backend: bool = True, tui_runs: bool = True
) -> list[Row]:
    from tests.fakes.llm_server import FakeLLMServer

    cairn = cairn or cairn_script()
    runs = 1 if quick else runs
    arrivals = Arrivals()
    headless: list[float] = []
    cpu: list[float] = []
    tui: list[float] = []
    warm: list[float] = []
    lost: list[int] = []  # TUI launches whose keys typed at 0.2 s, or their Enter, never reached the app
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer([arrivals], repeat=True) as server:
        for i in range(runs + 1):
            ms = headless_once(cairn, server, arrivals, Path(tmp), i, cpu=cpu)
            if i:  # the first run only warms the OS file cache
                headless.append(ms)
            else:
                cpu.clear()
            print(f"  cairn -p start → request: {ms:,.0f} ms{'' if i else ' (warm-up, not counted)'}")
        if warm_backend:
            warm = warm_runs(cairn, server, arrivals, Path(tmp), runs)
        if have_tmux() and tui_runs:
            with PrivateTmux("cairn-bench-start-to-request") as tmux:
                for i in range(runs + 1):
                    ms = tui_once(cairn, server, arrivals, tmux, Path(tmp), i, lost)
                    if i:
                        tui.append(ms)
                    print(
                        f"  TUI prompt at {TUI_PROMPT_DELAY} s → request: {ms:,.0f} ms"
                        f"{'' if i else ' (warm-up, not counted)'}"
                    )
    p_median = statistics.median(headless)
    rows = [
        Row(
            "start_to_request",
            "cairn -p start → request received",
            p_median,
            target="≤ 1,500 ms",
            ok=at_most(p_median, HEADLESS_TARGET_MS, quick),
            runs=headless,
        )
    ]
    rows.append(
        Row(
            "start_to_request",
            "cairn -p hi: CPU user+sys of the whole run (in-process)",
            statistics.median(cpu),
            runs=cpu,
        )
    )
    if warm:
        w_median = statistics.median(warm)
        rows.append(
            Row(
                "start_to_request",
                "cairn -p start → request received, warm backend (CAIRN_WARM=1)",
                w_median,
                target="≤ 1,500 ms",
                ok=at_most(w_median, HEADLESS_TARGET_MS, quick),
                runs=warm,
            )
        )
    figure = f"TUI prompt sent {TUI_PROMPT_DELAY} s after launch → request received"
    if tui:
        t_median = statistics.median(tui)
        rows.append(
            Row(
                "start_to_request",
                figure,
                t_median,
                target="≤ 2,000 ms (issue 20)",
                ok=at_most(t_median, TUI_TARGET_MS, quick),
                runs=tui,
                note=f"keys or Enter typed early lost (typed again) in {len(set(lost))} of {runs + 1} launches",
            )
        )
        print(f"  {rows[-1].note}")
    else:
        rows.append(Row("start_to_request", figure, None, note=SKIPPED_NO_TMUX if tui_runs else "not run (--no-tui)"))
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    common_args(parser)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cairn", type=Path, help="the cairn script (default: the one beside this python)")
    parser.add_argument("--no-warm", action="store_true", help="skip the warm-backend runs (an older cairn)")
    parser.add_argument("--no-tui", action="store_true", help="skip the TUI runs")
    args = parser.parse_args(argv)
    return finish(
        run(args.quick, runs=args.runs, cairn=args.cairn, warm_backend=not args.no_warm, tui_runs=not args.no_tui),
        args.json,
    )


if __name__ == "__main__":
    sys.exit(main())
