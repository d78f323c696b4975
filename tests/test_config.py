"""Config layering and bad input: a clear warning and the default, never a crash."""

from __future__ import annotations

from agent.config import ModelOverride, config_dir, load_settings, model_override
from agent.llm.models import resolve_model


def test_defaults(workspace):
    s = load_settings(workspace)
    assert s.model is None and s.yolo is False and s.workspace == workspace.resolve()
    assert s.context.tokenizer == "o200k_base" and s.tools.command_timeout == 120
    assert s.warnings == []


def test_layers_user_project_env_flags(workspace, monkeypatch):
    config_dir().mkdir(parents=True, exist_ok=True)
    (config_dir() / "config.toml").write_text('model = "user/m"\n[tools]\ncommand_timeout = 5\n')
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text('model = "project/m"\n[llm]\nmax_retries = 2\n')
    s = load_settings(workspace)
    assert (s.model, s.tools.command_timeout, s.llm.max_retries) == ("project/m", 5, 2)
    monkeypatch.setenv("CAIRN_MODEL", "env/m")
    monkeypatch.setenv("CAIRN_COMMAND_TIMEOUT", "7")
    s = load_settings(workspace)
    assert (s.model, s.tools.command_timeout) == ("env/m", 7)
    s = load_settings(workspace, flags={"model": "flag/m", "api_base": None})
    assert s.model == "flag/m"


def test_bad_toml_is_reported_and_ignored(workspace):
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text("model = \n[[[")
    s = load_settings(workspace)
    assert s.model is None
    assert len(s.warnings) == 1 and "config.toml" in s.warnings[0]


def test_wrong_types_and_unknown_keys_keep_defaults(workspace):
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text(
        'model = "ok/m"\nbogus = 1\n[tools]\ncommand_timeout = "soon"\nmax_read_lines = 10\n[llm]\nmax_retries = [1]\n'
    )
    s = load_settings(workspace)
    assert s.model == "ok/m" and s.tools.max_read_lines == 10
    assert s.tools.command_timeout == 120 and s.llm.max_retries == 5
    assert any("tools.command_timeout" in w for w in s.warnings)
    assert any("llm.max_retries" in w for w in s.warnings)


def test_per_model_override(workspace):
    (workspace / ".cairn").mkdir()
    (workspace / ".cairn" / "config.toml").write_text('[models."openai/local"]\ncontext_window = 4096\n')
    s = load_settings(workspace)
    assert model_override(s, "openai/local").context_window == 4096
    assert model_override(s, "other").context_window is None


def test_default_model_from_provider_keys(workspace, monkeypatch):
    s = load_settings(workspace)
    assert resolve_model(s) is None
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    assert resolve_model(s) == "openai/gpt-5.1"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-y")
    assert resolve_model(s).startswith("anthropic/")
    assert resolve_model(load_settings(workspace, flags={"model": "m/x"})) == "m/x"


def test_model_limits_from_litellm_and_override(workspace):
    from agent.llm.models import model_limits

    s = load_settings(workspace)
    limits = model_limits(s, "anthropic/claude-sonnet-4-5")
    assert limits.from_litellm and limits.context_window == 200_000
    unknown = model_limits(s, "openai/not-a-real-model")
    assert unknown.context_window == s.context.default_context_window
    s.models["openai/not-a-real-model"] = ModelOverride(context_window=999)
    assert model_limits(s, "openai/not-a-real-model").context_window == 999
