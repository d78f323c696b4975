"""Streaming throughput: 2,000-token answers at 200, 1,000 and 5,000 tokens/s on screen.

SPEC §10: "Streaming renders at least 1,000 tokens/s without the screen falling behind."

The fake server runs as its own process (`python -m tests.fakes --script FILE`, so its
pacing does not share a GIL with the app) and streams each answer as one 4-character
content delta per token (≈ one BPE token of English prose; OpenAI also sends about one
token per delta), paced to the rate on an absolute schedule, in paragraphs of 60 words.
The real `CairnApp` (real Runtime, litellm, SQLite) runs headless under Textual's Pilot at
120×36 and gets each prompt through its prompt widget and Enter.

"On screen" is what a terminal would get: the app's `_display` is wrapped so every frame
the compositor produces is rendered to the terminal bytes it would write (as in a real
terminal; headless Textual skips that step), timed, and searched for the answer's last
word, a unique marker. Per answer:

- **after stream end**: last token on screen minus the stream's scheduled end (first
  token received + (N−1)/rate): how far the screen is behind what the model sent. Judged
  at 200 and 1,000 tokens/s against a margin of 250 ms (the chat's 20 Hz drain, one
  Markdown re-parse and one frame, with room for a 2-core box);
- **screen rate**: N tokens ÷ (last token on screen − first token received + 1/rate);
  judged ≥ 1,000 tokens/s on the 5,000 tokens/s stream (the screen keeps up with at least
  1,000 tokens/s even when the model is faster);
- **received rate**: text deltas the app got per second, (N−1) ÷ (last − first delta
  received): below the scripted rate the client side (litellm's stream parsing, the loop)
  is what falls behind, before anything is drawn;
- **after last delta**: last token on screen minus the last delta received: the UI's own
  share of the lag;
- **worst frame gap**: the longest time between two consecutive frames that changed a row
  of the chat, from the first token received to the last token on screen: how long the
  answer looked frozen while tokens were arriving (the status bar's 10 Hz spinner frames
  do not count);
- **worst loop stall**: the most a 5 ms `asyncio.sleep` heartbeat overslept in the same
  window: the longest the event loop was blocked (keys wait that long).

Each figure is the median over runs. One uncounted warm-up answer first (the first request
loads litellm's lazy parts). `--quick`: 200-token answers, one run per rate.

Usage: python bench/streaming.py [--tokens 2000] [--rates 200 1000 5000] [--runs 3] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from run import Row, at_least, at_most, common_args, finish  # noqa: E402

CHARS_PER_TOKEN = 4
PARAGRAPH_WORDS = 60
MARGIN_MS = 250.0
TARGET_RATE = 1000.0
READY_TIMEOUT = 120.0  # the runtime's open imports litellm (many seconds on a loaded box)
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def answer_text(tokens: int, marker: str) -> str:
    """`tokens` × 4 characters of prose in 60-word paragraphs, ending with ` marker`."""
    from tests.fakes.llm_server import filler_text

    words = filler_text(tokens * CHARS_PER_TOKEN // 3).split(" ")
    paragraphs = [" ".join(words[i : i + PARAGRAPH_WORDS]) for i in range(0, len(words), PARAGRAPH_WORDS)]
    body = "\n\n".join(paragraphs)[: tokens * CHARS_PER_TOKEN - len(marker) - 1].rstrip()
    body += " " * (tokens * CHARS_PER_TOKEN - len(marker) - len(body))
    return body + marker


@dataclass
class Watch:
    """What one answer's timings are collected into."""

    marker: str
    first_delta: float | None = None
    last_delta: float | None = None
    deltas: int = 0
    on_screen: float | None = None
    chat_frames: list[float] = field(default_factory=list)
    stalls: list[tuple[float, float]] = field(default_factory=list)  # (when, overslept seconds)


def make_app_class():
    from textual._compositor import ChopsUpdate, CompositorUpdate, LayoutUpdate

    from agent.ui.app import CairnApp

    class StreamBenchApp(CairnApp):
        """CairnApp plus timing: frames rendered to terminal bytes, text deltas received."""

        CSS_PATH = str(REPO / "agent" / "ui" / "app.tcss")  # relative paths resolve next to this file
        watch: Watch | None = None

        def handle_event(self, event) -> None:
            watch = self.watch
            if watch is not None and event.type == "text_delta":
                now = time.perf_counter()
                watch.first_delta = watch.first_delta or now
                watch.last_delta = now
                watch.deltas += 1
            super().handle_event(event)

        def _display(self, screen, renderable) -> None:
            watch = self.watch
            if watch is not None and isinstance(renderable, CompositorUpdate) and not self._batch_count:
                data = renderable.render_segments(self.console)  # what a terminal would be sent
                now = time.perf_counter()
                chat = self.chat.region
                if isinstance(renderable, ChopsUpdate):
                    rows = {y for y, _x1, _x2 in renderable.spans}
                elif isinstance(renderable, LayoutUpdate):
                    rows = set(range(renderable.region.y, renderable.region.bottom))
                else:
                    rows = set()
                if any(chat.y <= y < chat.bottom for y in rows):
                    watch.chat_frames.append(now)
                if watch.on_screen is None and watch.marker in _ESCAPE.sub("", data):
                    watch.on_screen = now
            super()._display(screen, renderable)

    return StreamBenchApp


async def heartbeat(app, period: float = 0.005) -> None:
    while True:
        before = time.perf_counter()
        await asyncio.sleep(period)
        now = time.perf_counter()
        watch = app.watch
        if watch is not None:
            watch.stalls.append((now, now - before - period))


def start_server(script: list[dict], tmp: Path) -> tuple[subprocess.Popen, str]:
    path = tmp / "script.json"
    path.write_text(json.dumps(script))
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes", "--port", "0", "--script", str(path)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline().strip()
    if not line.startswith("PORT="):
        proc.kill()
        raise RuntimeError(f"fake server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split('=', 1)[1])}/v1"


def figures(watch: Watch, tokens: int, rate: float) -> dict[str, float]:
    assert watch.first_delta is not None and watch.on_screen is not None, watch
    scheduled_end = watch.first_delta + (tokens - 1) / rate
    window = [t for t in watch.chat_frames if watch.first_delta <= t <= watch.on_screen]
    gaps = [b - a for a, b in zip([watch.first_delta] + window, window, strict=False)]
    stalls = [s for t, s in watch.stalls if watch.first_delta <= t <= watch.on_screen + 0.005]
    return {
        "behind": (watch.on_screen - scheduled_end) * 1000,
        "rate": tokens / (watch.on_screen - watch.first_delta + 1 / rate),
        "gap": max(gaps, default=0.0) * 1000,
        "stall": max(stalls, default=0.0) * 1000,
        "after_last_delta": (watch.on_screen - (watch.last_delta or watch.on_screen)) * 1000,
        "received": (watch.deltas - 1) / max(1e-9, (watch.last_delta or 0) - watch.first_delta),
        "deltas": watch.deltas,
    }


async def measure(tokens: int, rates: list[float], runs: int, tmp: Path) -> dict[float, list[dict[str, float]]]:
    from agent.settings.config import load_settings
    from tests.fakes.llm_server import text

    plan = [(0.0, "warm-up")] + [(rate, f"{rate:g}/{i}") for rate in rates for i in range(runs)]
    markers = [f"ZQ{i:04d}X" for i in range(len(plan))]
    script = []
    for (rate, _), marker in zip(plan, markers, strict=False):
        step = text(
            answer_text(200 if rate == 0 else tokens, marker),
            chunk_size=CHARS_PER_TOKEN,
            delay=0.0 if rate == 0 else 1 / rate,
        )
        script.append({"type": "text", **{k: getattr(step, k) for k in ("text", "chunk_size", "delay")}})
    server, base_url = start_server(script, tmp)
    results: dict[float, list[dict[str, float]]] = {}
    try:
        ws = tmp / "ws"
        ws.mkdir()
        settings = load_settings(
            ws, flags={"model": "openai/fake-model", "api_base": base_url, "api_key": "sk-bench", "yolo": True}
        )
        app = make_app_class()(settings)
        async with app.run_test(size=(120, 36)) as pilot:
            beat = asyncio.create_task(heartbeat(app))
            try:
                deadline = time.monotonic() + READY_TIMEOUT
                while app.runtime is None:
                    if app._exception or app.open_error or app.no_model or time.monotonic() > deadline:
                        raise RuntimeError(f"the runtime did not open: {app.open_error or 'timed out'}")
                    await asyncio.sleep(0.05)
                await app.runtime.ready()
                for (rate, label), marker in zip(plan, markers, strict=False):
                    watch = Watch(marker)
                    app.watch = watch
                    app.prompt.insert(f"stream {label}")
                    await pilot.pause()
                    await pilot.press("enter")
                    deadline = time.monotonic() + 60 + tokens / (rate or 1000)
                    while watch.on_screen is None or app.turn_running:
                        if time.monotonic() > deadline:
                            raise RuntimeError(f"answer {label}: marker not on screen ({watch.deltas} deltas seen)")
                        await asyncio.sleep(0.02)
                    await app.workers.wait_for_complete()
                    app.watch = None
                    if rate:
                        got = figures(watch, tokens, rate)
                        results.setdefault(rate, []).append(got)
                        print(
                            f"  {tokens} tokens at {rate:>5g}/s: behind {got['behind']:7.1f} ms, "
                            f"screen {got['rate']:7.0f} tok/s, received {got['received']:7.0f}/s, "
                            f"worst frame gap {got['gap']:6.1f} ms, "
                            f"worst stall {got['stall']:6.1f} ms, after last delta "
                            f"{got['after_last_delta']:6.1f} ms ({got['deltas']} deltas)",
                            flush=True,
                        )
                    await pilot.pause(0.2)
            finally:
                beat.cancel()
    finally:
        server.terminate()
        server.wait(10)
    return results


def run(quick: bool = False, *, tokens: int = 2000, rates: list[float] | None = None, runs: int = 3) -> list[Row]:
    rates = rates or [200.0, 1000.0, 5000.0]
    if quick:
        tokens, runs = 200, 1
    with tempfile.TemporaryDirectory(prefix="cairn-bench-stream-") as tmp:
        os.environ["CAIRN_HOME"] = str(Path(tmp, "home"))
        results = asyncio.run(measure(tokens, rates, runs, Path(tmp)))
    rows = []
    for rate in rates:
        got = results[rate]

        def med(key: str, got: list = got) -> float:
            return statistics.median(g[key] for g in got)

        name = f"{tokens:,} tok at {rate:,.0f} tok/s"
        judged_behind = rate <= TARGET_RATE
        rows += [
            Row(
                "streaming",
                f"{name}: last token on screen after stream end",
                med("behind"),
                target="≤ 250 ms" if judged_behind else "—",
                ok=at_most(med("behind"), MARGIN_MS, quick) if judged_behind else None,
                runs=[g["behind"] for g in got],
            ),
            Row(
                "streaming",
                f"{name}: screen rate",
                med("rate"),
                unit="tok/s",
                target="—" if judged_behind else "≥ 1,000 tok/s",
                ok=None if judged_behind else at_least(med("rate"), TARGET_RATE, quick),
                runs=[g["rate"] for g in got],
            ),
            Row(
                "streaming",
                f"{name}: text deltas received (litellm + loop)",
                med("received"),
                unit="deltas/s",
                runs=[g["received"] for g in got],
            ),
            Row(
                "streaming",
                f"{name}: last token on screen after last delta",
                med("after_last_delta"),
                runs=[g["after_last_delta"] for g in got],
            ),
            Row("streaming", f"{name}: worst gap between chat frames", med("gap"), runs=[g["gap"] for g in got]),
            Row("streaming", f"{name}: worst event-loop stall", med("stall"), runs=[g["stall"] for g in got]),
        ]
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--rates", type=float, nargs="+", default=[200.0, 1000.0, 5000.0])
    parser.add_argument("--runs", type=int, default=3)
    common_args(parser)
    args = parser.parse_args(argv)
    return finish(run(args.quick, tokens=args.tokens, rates=args.rates, runs=args.runs), args.json)


if __name__ == "__main__":
    sys.exit(main())
