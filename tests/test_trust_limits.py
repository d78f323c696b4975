"""What else a project's `.cairn/config.toml` may only decide once trusted (agent/settings/trust.py,
agent/settings/raised_limits.py): the LLM client (litellm reads provider addresses and keys
from the environment and `.env` files), the environment kept in the sandbox, and any resource
limit raised above cairn's default. Lowering a limit applies untrusted."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent.settings import raised_limits, trust
from agent.settings.config import load_config, load_settings, read_project_config
from agent.settings.schema import Settings


def write_project(workspace: Path, text: str) -> None:
    (workspace / ".cairn").mkdir(exist_ok=True)
    (workspace / ".cairn" / "config.toml").write_text(text)


def trust_as_it_is(workspace: Path) -> None:
    data, raw = read_project_config(workspace, [])
    assert raw is not None
    trust.trust(workspace, trust.config_digest(workspace, raw, data))


def test_a_repository_choosing_the_litellm_client_is_not_obeyed_until_trusted(workspace):
    write_project(workspace, '[llm]\nclient = "litellm"\n')
    loaded = load_config(workspace)
    settings = loaded.settings
    assert settings.llm.client == "auto"
    assert loaded.project_trust is not None and "llm.client" in loaded.project_trust.notice
    assert dict(loaded.project_trust.items)["llm.client"] == '"litellm"'
    assert "litellm" in trust.EFFECTS["llm.client"] and ".env" in trust.EFFECTS["llm.client"]
    trust_as_it_is(workspace)
    assert load_settings(workspace).llm.client == "litellm"


def test_the_default_client_needs_no_trust(workspace):
    write_project(workspace, '[llm]\nclient = "auto"\n')
    loaded = load_config(workspace)
    settings = loaded.settings
    assert loaded.project_trust is None and settings.llm.client == "auto"


def test_keeping_environment_variables_in_the_sandbox_needs_trust(workspace):
    write_project(workspace, '[sandbox]\nenv_passthrough = ["GITHUB_TOKEN"]\n')
    data, _ = read_project_config(workspace, [])
    assert [name for name, _ in trust.shown_items(data)] == ["sandbox.env_passthrough"]
    assert trust.without_widening(data) == {"sandbox": {}}
    assert "sandbox.env_passthrough" in trust.EFFECTS
    write_project(workspace, "[sandbox]\nenv_passthrough = []\n")
    assert trust.shown_items(read_project_config(workspace, [])[0]) == []


def test_a_raised_max_file_bytes_is_not_applied_untrusted_and_a_lowered_one_is(workspace):
    default = Settings().tools.max_file_bytes
    write_project(workspace, f"[tools]\nmax_file_bytes = {default * 1000}\n")
    loaded = load_config(workspace)
    settings = loaded.settings
    assert settings.tools.max_file_bytes == default
    assert loaded.project_trust is not None and "tools.max_file_bytes" in loaded.project_trust.notice
    assert "default" in trust.EFFECTS["tools.max_file_bytes"]
    trust_as_it_is(workspace)
    assert load_settings(workspace).tools.max_file_bytes == default * 1000

    write_project(workspace, "[tools]\nmax_file_bytes = 1024\n")
    loaded = load_config(workspace)
    settings = loaded.settings
    assert settings.tools.max_file_bytes == 1024 and loaded.project_trust is None


@pytest.mark.parametrize(
    ("table", "key", "value"),
    [
        ("tools", "command_timeout", 1e9),
        ("mcp", "call_timeout", 86400),
        ("mcp", "startup_timeout", 3600),
        ("web", "timeout", 1e6),
        ("web", "max_bytes", 10**12),
        ("llm", "request_timeout", 1e9),
        ("context", "files_cache_max_bytes", 10**15),
        ("agents", "max_parallel", 16),
        ("tools", "max_file_bytes", "99999999999"),  # a string pydantic would turn into a number
        ("tools", "command_timeout", math.inf),
        ("tools", "command_timeout", math.nan),
        ("tools", "some_new_timeout", 1),  # named like a limit, not known yet: cannot be compared
    ],
)
def test_raising_a_resource_limit_needs_trust(table, key, value):
    data = {table: {key: value}}
    assert [name for name, _ in trust.shown_items(data)] == [f"{table}.{key}"]
    assert trust.without_widening(data).get(table, {}) == {}


@pytest.mark.parametrize(
    ("table", "key", "value"),
    [
        ("tools", "command_timeout", 5),
        ("tools", "max_file_bytes", 10 * 1024 * 1024),  # the default itself
        ("web", "max_bytes", 1024),
        ("context", "max_inline_chars", 10**9),  # context tuning: the provider's window bounds it
        ("context", "fold_max_tokens", 10**9),
    ],
)
def test_a_lowered_limit_or_context_tuning_needs_no_trust(table, key, value):
    assert trust.shown_items({table: {key: value}}) == []


def _numeric_fields() -> dict[tuple[str, str], object]:
    """Every number-valued key of the settings' tables, with its default."""
    found = {}
    for table, field in Settings.model_fields.items():
        model = field.annotation
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            continue
        defaults = model()
        for key, info in model.model_fields.items():
            value = getattr(defaults, key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) or "int" in str(info.annotation):
                found[(table, key)] = value
    return found


def test_any_mcp_setting_of_a_project_needed_trust_already():
    assert [name for name, _ in trust.shown_items({"mcp": {"call_timeout": 5}})] == ["mcp.call_timeout"]


def test_the_limits_defaults_are_the_settings_defaults():
    """raised_limits.py writes the defaults out (trust.py cannot import the model): they agree."""
    fields = _numeric_fields()
    for where, default in raised_limits.RESOURCE_LIMITS.items():
        assert where in fields, f"{where} is not a setting"
        assert fields[where] == default, where


def test_every_key_named_like_a_limit_is_decided():
    """A new `max_*` / `*_timeout` / `*_bytes` setting is either a resource limit (with its default)
    or listed as tuning: it cannot slip through as a key a repository raises unasked."""
    for (table, key), _ in _numeric_fields().items():
        if raised_limits.LIMIT_NAME.search(key):
            assert (table, key) in raised_limits.RESOURCE_LIMITS or (table, key) in raised_limits.TUNING, (table, key)
            assert table in raised_limits.LIMIT_TABLES


def test_the_question_names_the_raised_limit_with_its_default(workspace):
    write_project(workspace, "[tools]\ncommand_timeout = 1e9\n")
    pending = load_config(workspace).project_trust
    assert pending is not None
    assert pending.items == [("tools.command_timeout", json.dumps(1e9))]
    assert "120" in trust.EFFECTS["tools.command_timeout"]
