"""Running the installed `cairn` against a fake server, as a script or CI job would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

CAIRN = Path(sys.executable).parent / "cairn"
needs_cairn = pytest.mark.skipif(not CAIRN.exists(), reason="the cairn console script is not installed in this venv")
TIMEOUT = 120  # generous: a loaded 2-core machine imports litellm slowly


def cairn(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = TIMEOUT
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(CAIRN), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        env=env if env is not None else os.environ.copy(),
    )


def base_args(server, workspace: Path, model: str = "openai/fake-model") -> list[str]:
    return ["--model", model, "--api-base", server.base_url, "--api-key", "sk-test", "--cwd", str(workspace)]


def events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def write_user_config(home: Path, text: str) -> None:
    (home / "config.toml").write_text(text)


FAST_RETRIES = "[llm]\nretry_base_delay = 0.01\nretry_max_delay = 0.05\n"
