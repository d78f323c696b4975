"""Hostile config files for `load_config`: a readable warning, the default kept, no crash.

Covers the user file ($CAIRN_HOME/config.toml), the project file (.cairn/config.toml) and
CAIRN_* variables.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.settings.config import LoadedConfig, load_config
from agent.settings.schema import Settings
from tests.hostile.conftest import bounded_sync

DEFAULTS = Settings()


def user_config(text: str | bytes) -> Path:
    path = Path(os.environ["CAIRN_HOME"]) / "config.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def project_config(workspace: Path, text: str) -> Path:
    path = workspace / ".cairn" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def load(workspace: Path, **flags) -> LoadedConfig:
    return bounded_sync(lambda: load_config(workspace, flags=flags or None), 30)


BAD_FILES = [
    pytest.param("model = ", id="missing-value"),
    pytest.param("[tools\ncommand_timeout = 5", id="unclosed-table"),
    pytest.param('model = "unterminated', id="unterminated-string"),
    pytest.param("a = 1\na = 2", id="duplicate-key"),
    pytest.param("[tools]\n[tools]", id="duplicate-table"),
    pytest.param("\x00\x01\x02", id="control-bytes"),
    pytest.param(b'model = "caf\xe9"', id="not-utf8"),
    pytest.param(b"\xff\xfe\x00m\x00o", id="utf16-bom"),
]


@pytest.mark.parametrize("text", BAD_FILES)
def test_a_broken_user_file_is_ignored_with_a_warning(workspace, text):
    path = user_config(text)
    project_config(workspace, "[tools]\ncommand_timeout = 7\n")  # the other file still counts
    loaded = load(workspace, model="openai/flag")
    s = loaded.settings
    assert len(loaded.warnings) == 1 and str(path) in loaded.warnings[0] and loaded.warnings[0].startswith("Ignoring")
    assert s.tools.command_timeout == 7 and s.model == "openai/flag" and s.workspace == workspace.resolve()
    assert s.llm == DEFAULTS.llm and s.context == DEFAULTS.context


def test_a_broken_project_file_is_ignored_with_a_warning(workspace):
    user_config('model = "openai/user"\n')
    path = project_config(workspace, "this is not toml")
    loaded = load(workspace)
    s = loaded.settings
    assert any(str(path) in w for w in loaded.warnings) and s.model == "openai/user"


WRONG_TYPES = [
    pytest.param(
        '[tools]\ncommand_timeout = "soon"', "tools.command_timeout", ("tools", "command_timeout"), id="str-for-float"
    ),
    pytest.param(
        "[tools]\nmax_read_lines = 1.5", "tools.max_read_lines", ("tools", "max_read_lines"), id="fraction-for-int"
    ),
    pytest.param(
        "[tools]\nmax_file_bytes = [1, 2]", "tools.max_file_bytes", ("tools", "max_file_bytes"), id="array-for-int"
    ),
    pytest.param('yolo = "maybe"', "yolo", ("yolo",), id="str-for-bool"),
    pytest.param("model = 42", "model", ("model",), id="int-for-str"),
    pytest.param("tools = 5", "tools", ("tools",), id="int-for-table"),
    pytest.param("[[llm]]\nmax_retries = 1", "llm", ("llm",), id="array-of-tables"),
    pytest.param('[llm]\ntemperature = "hot"', "llm.temperature", ("llm", "temperature"), id="optional-float"),
    pytest.param(
        '[context]\nauto_condense = "yes please"',
        "context.auto_condense",
        ("context", "auto_condense"),
        id="context-bool",
    ),
    pytest.param("models = 3", "models", ("models",), id="models-not-table"),
    pytest.param('[models."openai/x"]\ncontext_window = "big"', "context_window", ("models",), id="model-override"),
    pytest.param(
        '[permissions]\nallow_commands = "git status"',
        "permissions.allow_commands",
        ("permissions", "allow_commands"),
        id="permissions-str-for-list",
    ),
    pytest.param(
        "[tools]\ncommand_timeout = 1979-05-27T07:32:00Z",
        "tools.command_timeout",
        ("tools", "command_timeout"),
        id="datetime-for-float",
    ),
]


def _value(settings_: Settings, path: tuple[str, ...]):
    value = settings_
    for part in path:
        value = getattr(value, part)
    return value


@pytest.mark.parametrize("text, named, path", WRONG_TYPES)
def test_a_wrong_type_warns_and_keeps_the_default(workspace, text, named, path):
    user_config(text)
    # A good value in another section of the other file survives.
    good_section, good_key, good = (
        ("llm", "request_timeout", 9) if path[0] != "llm" else ("tools", "max_read_lines", 55)
    )
    project_config(workspace, f"[{good_section}]\n{good_key} = {good}\n")
    loaded = load(workspace, **({} if path == ("model",) else {"model": "openai/flag"}))
    s = loaded.settings
    assert any(named in w and "ignored" in w for w in loaded.warnings), loaded.warnings
    if path == ("models",):
        assert all(o.context_window is None for o in s.models.values())
    else:
        assert _value(s, path) == _value(DEFAULTS, path)
    assert _value(s, (good_section, good_key)) == good
    assert s.workspace == workspace.resolve()


def test_good_values_next_to_bad_ones_are_kept(workspace):
    user_config('[tools]\ncommand_timeout = "x"\nmax_read_lines = 55\n[llm]\nmax_retries = "y"\nrequest_timeout = 9\n')
    loaded = load(workspace)
    s = loaded.settings
    assert s.tools.max_read_lines == 55 and s.llm.request_timeout == 9
    assert s.tools.command_timeout == DEFAULTS.tools.command_timeout and s.llm.max_retries == DEFAULTS.llm.max_retries
    assert len(loaded.warnings) == 2


@pytest.mark.parametrize(
    "var, value, named",
    [
        ("CAIRN_COMMAND_TIMEOUT", "soon", "tools.command_timeout"),
        ("CAIRN_YOLO", "perhaps", "yolo"),
        ("CAIRN_MAX_RETRIES", "1e999", "llm.max_retries"),
    ],
)
def test_a_bad_environment_value_warns(workspace, monkeypatch, var, value, named):
    monkeypatch.setenv(var, value)
    loaded = load(workspace)
    s = loaded.settings
    assert any(named in w for w in loaded.warnings)
    assert s.yolo is False and s.tools.command_timeout == DEFAULTS.tools.command_timeout


def test_config_paths_that_are_not_files(workspace):
    home = Path(os.environ["CAIRN_HOME"])
    (home / "config.toml").mkdir()
    (workspace / ".cairn").mkdir()
    os.mkfifo(workspace / ".cairn" / "config.toml")  # reading it would block forever
    s = load(workspace).settings
    assert s.tools == DEFAULTS.tools


@pytest.mark.parametrize("text", ["modle = 'x'", "[tools]\ncomand_timeout = 5", "[nonsense]\na = 1"])
def test_an_unknown_key_warns(workspace, text):
    user_config(text)
    loaded = load(workspace)
    s = loaded.settings
    assert loaded.warnings and any(("modle" in w or "comand_timeout" in w or "nonsense" in w) for w in loaded.warnings)
    assert s.tools == DEFAULTS.tools and s.model is None


def test_unknown_keys_are_named_and_known_ones_kept(workspace):
    user_config(
        "[tools]\ncomand_timeout = 5\nmax_read_lines = 55\n"
        '[models."openai/x"]\ncontext_window = 1000\ncontext_windw = 9\n'
        '[permissions]\nallow = ["edit"]\nalow = ["edit"]\n'
    )
    loaded = load(workspace)
    s = loaded.settings
    assert sorted(loaded.warnings) == [
        "Unknown config key models.openai/x.context_windw ignored",
        "Unknown config key permissions.alow ignored",
        "Unknown config key tools.comand_timeout ignored",
    ]
    assert s.tools.max_read_lines == 55 and s.models["openai/x"].context_window == 1000
    assert s.permissions.allow == ["edit"]


def test_every_known_key_loads_without_a_warning(workspace):
    lines = ['model = "openai/m"', 'api_base = "http://x"', 'api_key = "k"', "yolo = false"]
    for name in ("llm", "tools", "context", "permissions"):
        section = getattr(DEFAULTS, name)
        lines.append(f"[{name}]")
        for key in type(section).model_fields:
            value = getattr(section, key)
            if value is not None:
                lines.append(f"{key} = {json.dumps(value)}")
    lines += [
        '[models."any/model-name"]',
        "context_window = 1000",
        "max_output_tokens = 10",
        "auto_condense_percent = 50",
    ]
    user_config("\n".join(lines) + "\n")
    loaded = load(workspace)
    s = loaded.settings
    assert loaded.warnings == [] and s.models["any/model-name"].max_output_tokens == 10


def test_many_unknown_keys_give_a_bounded_list_of_warnings(workspace):
    user_config("".join(f"typo{i} = 1\n" for i in range(500)))
    loaded = load(workspace)
    assert 1 < len(loaded.warnings) < 50 and "typo0" in loaded.warnings[0] and "more" in loaded.warnings[-1]


def test_deeply_nested_toml_warns(workspace):
    user_config("a = " + "[" * 2000 + "]" * 2000)
    loaded = load(workspace)
    s = loaded.settings
    assert loaded.warnings and s.tools == DEFAULTS.tools


def test_a_huge_config_file_is_ignored(workspace):
    path = user_config("[tools]\nmax_read_lines = 55\n" + "# padding\n" * 200_000)
    loaded = load(workspace)
    s = loaded.settings
    assert len(loaded.warnings) == 1 and str(path) in loaded.warnings[0] and s.tools == DEFAULTS.tools


def test_many_bad_values_keep_the_good_ones(workspace):
    user_config(
        "".join(f'[models."m{i}"]\ncontext_window = "big"\n' for i in range(60)) + "[tools]\nmax_read_lines = 55\n"
    )
    s = load(workspace, model="openai/flag").settings
    assert s.model == "openai/flag" and s.workspace == workspace.resolve() and s.tools.max_read_lines == 55


def test_out_of_range_values_warn(workspace):
    user_config("[tools]\ncommand_timeout = -5\nmax_read_lines = 0\n")
    loaded = load(workspace)
    s = loaded.settings
    assert len(loaded.warnings) == 2 and s.tools == DEFAULTS.tools


@pytest.mark.parametrize(
    "text, named",
    [
        ("[llm]\nmax_retries = -1", "llm.max_retries"),
        ("[llm]\nrequest_timeout = 0", "llm.request_timeout"),
        ("[llm]\nretry_base_delay = -0.5", "llm.retry_base_delay"),
        ("[tools]\ncommand_timeout = nan", "tools.command_timeout"),
        ("[tools]\nmax_file_bytes = 0", "tools.max_file_bytes"),
        ("[context]\ndefault_context_window = 0", "context.default_context_window"),
        ("[context]\nauto_condense_percent = 0", "context.auto_condense_percent"),
        ("[context]\nauto_condense_percent = 150", "context.auto_condense_percent"),
        ("[context]\nfallback_max_tokens = -1", "context.fallback_max_tokens"),
        ("[context]\ntruncation_middle_start = 1.5", "context.truncation_middle_start"),
        ("[context]\ntruncation_middle_start = 0.9\ntruncation_middle_end = 0.1", "truncation_middle_start/end"),
        ('[models."openai/x"]\ncontext_window = 0', "context_window"),
    ],
)
def test_more_out_of_range_values_warn_and_keep_the_default(workspace, text, named):
    user_config(text + "\n[tools]\nmax_read_lines = 55\n" if "[tools]" not in text else text)
    loaded = load(workspace)
    s = loaded.settings
    assert len(loaded.warnings) == 1 and named in loaded.warnings[0], loaded.warnings
    assert s.llm == DEFAULTS.llm and s.context == DEFAULTS.context
    assert s.tools.command_timeout == DEFAULTS.tools.command_timeout
    assert all(o.context_window is None for o in s.models.values())


# -- property test ---------------------------------------------------------------------------

SECTIONS = {
    "": ["model", "api_base", "yolo", "x"],
    "tools": list(type(DEFAULTS.tools).model_fields) + ["x"],
    "llm": list(type(DEFAULTS.llm).model_fields),
    "context": ["max_inline_chars", "auto_condense", "tokenizer"],
    "permissions": ["allow", "allow_commands"],
}
toml_scalars = st.one_of(
    st.integers(min_value=-(2**63), max_value=2**63 - 1).map(str),
    st.booleans().map(lambda b: str(b).lower()),
    st.floats(allow_nan=True).map(
        lambda f: "nan" if f != f else ("inf" if f == float("inf") else "-inf" if f == float("-inf") else repr(f))
    ),
    st.text(max_size=10).map(lambda t: '"' + t.encode("unicode_escape").decode().replace('"', '\\"') + '"'),
    st.just("[1, 2]"),
    st.just("{ a = 1 }"),
    st.just('["git status", 3]'),
    st.just("1979-05-27"),
)


@st.composite
def toml_documents(draw):
    lines = []
    for section in draw(st.lists(st.sampled_from(sorted(SECTIONS)), max_size=4, unique=True)):
        if section:
            lines.append(f"[{section}]")
        for key in draw(st.lists(st.sampled_from(SECTIONS[section]), max_size=4, unique=True)):
            lines.append(f"{key} = {draw(toml_scalars)}")
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["=", "[", "a = ", "[[tools]]"])))
    return "\n".join(lines) + "\n"


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(user=toml_documents(), project=toml_documents())
def test_any_config_loads_to_valid_settings(workspace, user, project):
    user_config(user)
    project_config(workspace, project)
    loaded = load(workspace, model="openai/flag")
    s = loaded.settings
    Settings.model_validate(s.model_dump())  # every value has its declared type
    assert s.model == "openai/flag" and s.workspace == workspace.resolve()
    assert all(isinstance(w, str) and w for w in loaded.warnings)


def _canonical(value):
    """Parsed TOML, comparable: tables unordered, nan equal to nan, a bool never equal to 1."""
    if isinstance(value, dict):
        return sorted((k, _canonical(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    return (type(value).__name__, "nan" if value != value else repr(value))


RULE_KEYS = ["command:pytest -x", "command:ls", "edit", "write", 'command:echo "ü" \\ done']


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    document=toml_documents(),
    notes=st.lists(st.integers(0, 2), min_size=12, max_size=12),
    crlf=st.booleans(),
    keys=st.lists(st.sampled_from(RULE_KEYS), min_size=1, max_size=3),
)
def test_saving_a_rule_keeps_every_comment_or_leaves_the_file_alone(workspace, document, notes, crlf, keys):
    """Any file, commented anywhere, CRLF or not: "always for this project" either adds the rule
    and keeps every comment and every other value, or refuses and leaves the bytes alone."""
    import tomllib

    from agent.settings.config_write import ConfigWriteError, add_project_permissions

    lines = []
    for i, line in enumerate(document.splitlines()):
        note = notes[i % len(notes)]
        if note == 1:
            line += f"  # note {i}"
        elif note == 2:
            lines.append(f"# note {i}")
        lines.append(line)
    text = ("\r\n" if crlf else "\n").join(lines) + ("\r\n" if crlf else "\n")
    path = workspace / ".cairn" / "config.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(text.encode())
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        data = None
    section = data.get("permissions", {}) if data is not None else None
    writable = isinstance(section, dict) and all(
        isinstance(section.get(k, []), list) for k in ("allow", "allow_commands")
    )
    try:
        bounded_sync(lambda: add_project_permissions(workspace, keys), 30)
    except ConfigWriteError:
        assert not writable, "refused a file it could have updated"
        assert path.read_bytes() == text.encode()
        return
    assert writable
    after = path.read_bytes().decode()
    for i in range(len(lines)):
        assert (f"# note {i}" in after) == (f"# note {i}" in text)
    if crlf:
        assert "\n" not in after.replace("\r\n", "")
    expected = {**data, "permissions": dict(section)}
    for name, values in (
        ("allow_commands", [k[8:] for k in keys if k.startswith("command:")]),
        ("allow", [k for k in keys if not k.startswith("command:")]),
    ):
        current = section.get(name, [])
        added = [v for v in dict.fromkeys(values) if v not in current]
        if added or name in section:
            expected["permissions"][name] = current + added
    assert _canonical(tomllib.loads(after)) == _canonical(expected)
