"""A sandboxed command's environment holds no secrets (issue 43, class 7).

Sandboxed repository code saw `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY` and other providers'
keys: the sandbox hid the files (`~/.aws`) but not the variables. Now every variable that
looks like a secret is left out, except those the user keeps with `[sandbox] env_passthrough`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.tools.base import ToolContext
from agent.tools.permissions import Permissions
from agent.tools.sandbox import Sandbox, secret_variable
from tests.tools.test_permissions import call

needs_sandbox = pytest.mark.skipif(not Sandbox(Path("/")).probe(), reason="bubblewrap cannot sandbox on this machine")
SECRETS = {
    "GITHUB_TOKEN": "ghp_secret_github",
    "GH_TOKEN": "gho_secret_gh",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-key",
    "AWS_ACCESS_KEY_ID": "AKIASECRET",
    "AWS_SESSION_TOKEN": "aws-session",
    "OPENAI_API_KEY": "sk-secret-openai",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "HF_TOKEN": "hf_secret",
    "NPM_TOKEN": "npm_secret",
    "GOOGLE_APPLICATION_CREDENTIALS": "/secret/creds.json",
    "AZURE_OPENAI_KEY": "azure-secret",
    "PGPASSWORD": "pg-secret",
    "DJANGO_SECRET_KEY": "django-secret",
}


async def printed_environment(workspace: Path, sandbox: Sandbox) -> dict[str, str]:
    """What a rule-allowed command sees, printed by `env` inside the sandbox."""
    (workspace / "show.sh").write_text("env -0\n")
    perms = Permissions(None, workspace=workspace, allow_commands=["sh"], sandbox=sandbox)
    res = await call(ToolContext(workspace=workspace, permissions=perms), "terminal-execute", command="sh show.sh")
    assert res.meta["sandbox"] == "workspace-write", res.content
    out = json.loads(res.content)["stdout"]
    return dict(item.split("=", 1) for item in out.split("\0") if "=" in item)


@needs_sandbox
async def test_a_sandboxed_command_sees_no_secret_variable(workspace, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("PROJECT_SETTING", "kept")
    seen = await printed_environment(workspace, Sandbox(workspace))
    assert sorted(set(SECRETS) & set(seen)) == []
    assert not any(value in json.dumps(seen) for value in SECRETS.values())
    assert seen["PROJECT_SETTING"] == "kept" and seen["TMPDIR"] == "/tmp" and "PATH" in seen


@needs_sandbox
async def test_env_passthrough_keeps_what_the_user_names(workspace, monkeypatch):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    seen = await printed_environment(workspace, Sandbox(workspace, env_passthrough=["HF_TOKEN", "NPM_*"]))
    assert seen["HF_TOKEN"] == "hf_secret" and seen["NPM_TOKEN"] == "npm_secret"
    assert "GITHUB_TOKEN" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen


@pytest.mark.parametrize(
    "name",
    [
        *SECRETS,
        "CI_JOB_TOKEN",
        "SLACK_BOT_TOKEN",
        "STRIPE_SECRET_KEY",
        "TWINE_PASSWORD",
        "MYSQL_PWD",
        "GITLAB_PAT",
        "SENDGRID_APIKEY",
        "GPG_PASSPHRASE",
        "DATABASE_URL",
        "github_token",
        "GITHUB_TOKEN_FILE",
        "NPM_CONFIG__AUTH",
    ],
)
def test_secret_looking_names(name):
    assert secret_variable(name)


@pytest.mark.parametrize(
    "name",
    ["PATH", "HOME", "TERM", "LANG", "PWD", "OLDPWD", "TOKENIZERS_PARALLELISM", "KEYTIMEOUT", "VIRTUAL_ENV", "SHELL"],
)
def test_ordinary_names(name):
    assert not secret_variable(name)


def test_passthrough_by_name_or_pattern_and_case():
    assert not secret_variable("GITHUB_TOKEN", ["GITHUB_TOKEN"])
    assert not secret_variable("AWS_SESSION_TOKEN", ["AWS_*"])
    assert secret_variable("GITHUB_TOKEN", ["github_token"])  # as written: names are case-sensitive
    assert secret_variable("GITHUB_TOKEN", ["GH_*"])
