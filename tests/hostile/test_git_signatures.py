"""Signature checks in read-only git run nothing of the repository's (issue 43, class 7).

`git log '--format=%G? %GG'` passed as read-only and ran the repository's `gpg.program`. A
format that checks signatures now asks (`%G` placeholders in any spelling, a `pretty.NAME`
alias of the repository's, `-c`), and what still checks one unasked (a `format.pretty` of
the repository's config) runs git's `false` as the verifier (git_guard's HARDENED_CONFIG).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent.tools.read_only import read_only
from agent.tools.sandbox import Sandbox
from tests.fakes.approver import FakeApprover
from tests.hostile.conftest import execute
from tests.hostile.test_repository_code import MARK, git, repo, sandboxed, sign_head, unconfined, verifier

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is needed")


def signed_repository(root: Path, marker: Path) -> Path:
    """A commit with a (bogus) PGP signature and a gpg.program that prints the mark."""
    ws = repo(root / "ws")
    sign_head(ws)
    program = verifier(root / "verify", marker)
    for key in ("gpg.program", "gpg.openpgp.program"):
        git("config", key, str(program), cwd=ws)
    git("config", "pretty.sig", "format:%G? %h", cwd=ws)
    return ws


ASKING = [
    "git log --format=%G?",
    "git log '--format=%G? %GG'",
    "git log --pretty=format:%GS",
    "git log --pretty=tformat:%h%n%GK",
    "git show --format=%+GF",
    "git log --format='% GP'",
    "git log --format=%-GT",
    "git log --pretty=sig",
    "git log --format=si",
    "git log --pretty=",
    "git -c pretty.x=format:%G? log --pretty=x",
    "git log --show-signature",
    "git -c log.showSignature=true log",
    "git branch --format='%(signature)'",
    "git status -v",
]


@pytest.mark.parametrize("command", ASKING)
async def test_a_format_that_checks_signatures_asks(tmp_path, registry, command):
    if not Sandbox(Path("/")).probe():
        pytest.skip("bubblewrap cannot sandbox on this machine")
    marker = tmp_path / "pwned"
    ws = signed_repository(tmp_path, marker)
    approver = FakeApprover("deny")
    result = await execute(registry, sandboxed(ws, approver), "terminal-execute", {"command": command})
    assert len(approver.requests) == 1 and result.is_error, result.content
    assert not marker.exists() and MARK not in result.content


@pytest.mark.parametrize(
    "words",
    ["git log --format=%h", "git log --format=%%G?", "git log --pretty=oneline", "git log --pretty=FULLER", "git log"],
)
def test_formats_that_check_no_signature_stay_read_only(words):
    assert read_only(tuple(words.split()))[0] == ""


@pytest.mark.parametrize("make_context", [sandboxed, unconfined], ids=["sandbox", "unconfined"])
async def test_a_repository_default_format_that_checks_signatures_runs_no_verifier(tmp_path, registry, make_context):
    """`format.pretty` is the repository's own default for `git log`: the command stays
    read-only, and the hardened git runs `false` in place of the repository's gpg.program."""
    if make_context is sandboxed and not Sandbox(Path("/")).probe():
        pytest.skip("bubblewrap cannot sandbox on this machine")
    marker = tmp_path / "pwned"
    ws = signed_repository(tmp_path, marker)
    git("config", "format.pretty", "format:%G?%GG %h", cwd=ws)
    git("config", "log.showSignature", "true", cwd=ws)
    approver = FakeApprover("deny")
    result = await execute(registry, make_context(ws, approver), "terminal-execute", {"command": "git log"})
    assert approver.requests == []
    out = json.loads(result.content)
    assert out["exitCode"] == 0 and MARK not in result.content and not marker.exists(), out
    assert out["stdout"].startswith(("N", "E", "B")), out  # git says it could not check, or bad
