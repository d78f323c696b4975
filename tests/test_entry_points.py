"""Issue 34: from a fresh copy of the repository, `./cairn` and `./test` set themselves up
(a .venv from requirements.lock) and run; a broken lock line fails in one readable sentence.

Slow: the first run installs the locked packages (from pip's cache when it has them)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git lists the repository's files"),
]


def _copy(dest: Path) -> Path:
    """The repository's files (tracked and new, not ignored: no .venv), as a clone has them."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = REPO / os.fsdecode(name)
        if source.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return dest


def _run(*command: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    return subprocess.run(list(command), cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def test_a_fresh_copy_sets_itself_up_then_starts_at_once(tmp_path):
    clone = _copy(tmp_path / "cairn")
    first = _run("./cairn", "--version", cwd=clone)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("cairn ")
    assert "setting up .venv from requirements.lock" in first.stderr and "Traceback" not in first.stderr
    assert (clone / ".venv" / "bin" / "cairn").exists()
    again = _run("./cairn", "--version", cwd=clone)
    assert again.returncode == 0 and again.stdout == first.stdout
    assert "setting up" not in again.stderr  # nothing to do: straight to cairn
    # ./test passes its arguments to pytest in the same .venv.
    tests = _run("./test", "tests/test_config.py", "-q", "-n", "0", "-p", "no:cacheprovider", cwd=clone)
    assert tests.returncode == 0, tests.stdout[-2000:] + tests.stderr[-2000:]
    assert " passed" in tests.stdout
    # A changed lock installs again on the next run.
    lock = clone / "requirements.lock"
    lock.write_text(lock.read_text() + "\n# a comment: the lock changed\n")
    changed = _run("./cairn", "--version", cwd=clone)
    assert changed.returncode == 0 and "setting up .venv" in changed.stderr


def test_a_broken_lock_line_fails_with_one_readable_sentence(tmp_path):
    clone = _copy(tmp_path / "cairn")
    lock = clone / "requirements.lock"
    lock.write_text(lock.read_text() + "this is not ! a requirement\n")
    out = _run("./cairn", "--version", cwd=clone, timeout=300)
    assert out.returncode != 0
    said = [line for line in out.stderr.splitlines() if line.startswith("cairn:") and "setting up" not in line]
    assert len(said) == 1, out.stderr
    assert "requirements.lock" in said[0] and "Traceback" not in out.stderr
