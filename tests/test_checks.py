"""The checks CI runs before the tests (scripts/check.sh): lint, format and types, each of
which fails the run on a single finding. Proved on a small tree with the project's own
pyproject.toml, one finding of each kind at a time."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.skipif(
    not (BIN / "ruff").exists() or not (BIN / "mypy").exists(),
    reason="ruff and mypy are dev dependencies (requirements.lock)",
)


def check(tmp_path: Path, code: str) -> subprocess.CompletedProcess:
    (tmp_path / "agent").mkdir()
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "agent" / "__init__.py").write_text(code)
    return subprocess.run(
        ["bash", str(REPO / "scripts" / "check.sh"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "CHECK_BIN": str(BIN)},
    )


@pytest.mark.parametrize(
    "code, fails",
    [
        ('"""Clean."""\n\nVALUE: int = 1\n', ""),
        ('"""A name imported and never used."""\n\nimport os\n', "ruff check"),
        ('"""Not formatted."""\n\nVALUE: int=1\n', "ruff format"),
        ('"""A type error."""\n\nVALUE: int = "one"\n', "mypy"),
    ],
    ids=["clean", "lint", "format", "types"],
)
def test_each_kind_of_finding_fails_the_check(tmp_path, code, fails):
    done = check(tmp_path, code)
    assert (done.returncode != 0) == bool(fails), done.stdout + done.stderr
    if fails == "types":
        assert "Incompatible types in assignment" in done.stdout


def test_ci_runs_the_checks_before_the_tests():
    """.ci/run is README's test command, ./test, which checks first and stops on a finding."""
    assert "./test" in [line.strip() for line in (REPO / ".ci" / "run").read_text().splitlines()]
    lines = [line.strip() for line in (REPO / "test").read_text().splitlines()]
    assert "set -euo pipefail" in lines  # a failing check stops the run
    assert lines.index("bash scripts/check.sh") < lines.index("exec .venv/bin/python -m pytest")
