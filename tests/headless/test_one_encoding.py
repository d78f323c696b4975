"""Issue 20: a run loads only the encoding the context engine counts with. litellm would
load cl100k_base to price each streamed request itself (and encode the whole prompt again
per request); cairn's costs come from the provider's reported usage instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.fakes.llm_server import FakeLLMServer, text

SCRIPT = """
import json, sys
from agent.cli import main
code = main(sys.argv[1:])
import gc, tiktoken, litellm
# Every encoding built, through tiktoken's registry or cairn's cache (agent/context/encoding_cache.py).
names = sorted({o.name for o in gc.get_objects() if isinstance(o, tiktoken.Encoding)})
print("ENCODINGS=" + json.dumps(names), file=sys.stderr)
print("COUNTER=" + json.dumps(litellm.disable_token_counter), file=sys.stderr)
sys.exit(code)
"""
WARM_UP = """
import gc, json, tiktoken
from agent.runtime.backend_load import warm_up
warm_up("o200k_base")
print(json.dumps(sorted({o.name for o in gc.get_objects() if isinstance(o, tiktoken.Encoding)})))
"""


def _marker(stderr: str, name: str):
    line = next(line for line in stderr.splitlines() if line.startswith(name + "="))
    return json.loads(line.split("=", 1)[1])


def test_headless_run_loads_one_encoding(workspace):
    # Through litellm (the fast path never imports it: tests/headless/test_fast_path_imports.py).
    Path(os.environ["CAIRN_HOME"], "config.toml").write_text('[llm]\nclient = "litellm"\n')
    with FakeLLMServer([text("priced by usage")]) as srv:
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                SCRIPT,
                "--model",
                "openai/gpt-4o",
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
            ],
            capture_output=True,
            text=True,
            timeout=180,
            env=os.environ.copy(),
            stdin=subprocess.DEVNULL,
        )
    assert out.returncode == 0, out.stderr
    assert _marker(out.stderr, "ENCODINGS") == ["o200k_base"]
    assert _marker(out.stderr, "COUNTER") is True
    answer = json.loads(out.stdout)["messages"][-1]
    assert answer["meta"]["cost"] > 0  # gpt-4o's price applied to the usage the server reported


def test_the_tui_warm_up_loads_one_encoding():
    out = subprocess.run(
        [sys.executable, "-c", WARM_UP],
        capture_output=True,
        text=True,
        timeout=180,
        env=os.environ.copy(),
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[-1]) == ["o200k_base"]
