"""No library reads a repository's `.env` (agent/llm/offline.py).

litellm's import calls python-dotenv's `load_dotenv()`, which looks for `.env` upwards from
litellm's own folder, or from the working directory under `python -c`, a REPL or a debugger.
With cairn installed in a virtualenv inside the project, that is the project's `.env`: a
repository's `OPENAI_BASE_URL` became cairn's. Each test runs a child Python whose litellm
sits in such a layout (the real package, linked into `<workspace>/.venv/…/site-packages`),
imports it the way cairn does, and reports its environment; a control imports it plainly and
must see the file loaded (else the layout would prove nothing)."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SENTINEL = "CAIRN_TEST_DOTENV_SENTINEL"
ATTACKER = "http://attacker.invalid/v1"

CHILD = f"""
import json, os, sys
sys.path.insert(0, sys.argv[1])  # the workspace's site-packages first, as its venv would
if sys.argv[2] == "cairn":
    from agent.llm.offline import import_litellm
    litellm = import_litellm()
else:
    import litellm
print(json.dumps({{
    "litellm": litellm.__file__,
    "sentinel": os.environ.get("{SENTINEL}"),
    "base": os.environ.get("OPENAI_BASE_URL"),
    "mode": os.environ.get("LITELLM_MODE"),
}}))
"""


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    """A project with a `.env` and a venv-like site-packages holding litellm."""
    spec = importlib.util.find_spec("litellm")
    assert spec is not None and spec.origin
    ws = tmp_path / "project"
    site = ws / ".venv" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    site.mkdir(parents=True)
    (site / "litellm").symlink_to(Path(spec.origin).parent, target_is_directory=True)
    (ws / ".env").write_text(f"{SENTINEL}=leaked\nOPENAI_BASE_URL={ATTACKER}\n")
    return ws, site


def _child(tmp_path: Path, how: str, *, in_project: bool, as_script: bool, mode: str | None = None) -> dict:
    """Run CHILD with the workspace's site-packages first: `how` is "cairn" or "plain"."""
    ws, site = _workspace(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in (SENTINEL, "OPENAI_BASE_URL", "LITELLM_MODE")}
    env.update(PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    if mode is not None:
        env["LITELLM_MODE"] = mode
    if as_script:  # dotenv searches from the calling file's folder: litellm's, in the workspace
        script = tmp_path / "child.py"
        script.write_text(CHILD)
        argv = [sys.executable, str(script), str(site), how]
    else:  # `python -c`: dotenv searches from the working directory
        argv = [sys.executable, "-c", CHILD, str(site), how]
    out = subprocess.run(argv, cwd=ws if in_project else tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["litellm"].startswith(str(ws)), "litellm was not imported from the workspace's venv"
    return report


@pytest.mark.parametrize("as_script", [True, False], ids=["venv-in-project", "python-c-in-project"])
def test_the_plain_import_would_load_the_projects_env(tmp_path, as_script):
    """The control: without cairn's guard, this layout hands litellm the repository's `.env`."""
    report = _child(tmp_path, "plain", in_project=not as_script, as_script=as_script)
    assert report["sentinel"] == "leaked" and report["base"] == ATTACKER


@pytest.mark.parametrize("as_script", [True, False], ids=["venv-in-project", "python-c-in-project"])
def test_cairns_import_reads_no_env_file(tmp_path, as_script):
    report = _child(tmp_path, "cairn", in_project=True, as_script=as_script)
    assert report["sentinel"] is None and report["base"] is None
    assert report["mode"] is None, "LITELLM_MODE must be put back (commands cairn runs see the user's own)"


def test_a_users_dev_mode_does_not_open_the_door(tmp_path):
    """LITELLM_MODE=DEV in the user's environment would read the repository's file just the same."""
    report = _child(tmp_path, "cairn", in_project=True, as_script=True, mode="DEV")
    assert report["sentinel"] is None and report["base"] is None
    assert report["mode"] == "DEV"
