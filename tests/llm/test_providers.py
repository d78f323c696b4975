"""One table of provider facts (agent/llm/providers.py): every module reads it, none keeps a
copy, and what it says about a model string is what the router and the key rule act on."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from agent.llm.providers import (
    ADDRESSED_BY_USER,
    KEY_VARIABLES,
    OWN_HOSTS,
    PROVIDERS,
    lookup,
    named_provider,
    provider_of,
)
from agent.llm.route import fast_wire

AGENT = Path(__file__).resolve().parents[2] / "agent"
TABLE = AGENT / "llm" / "providers.py"
# A provider's key or address variable, as a string of its own (prose may name one).
VARIABLE = re.compile(r"^(?!CAIRN_)[A-Z][A-Z0-9_]*_(?:API_KEY|API_BASE|BASE_URL)$")


def test_no_module_but_the_table_names_a_providers_variable():
    found = [
        f"{path.relative_to(AGENT.parent)}:{node.lineno}: {node.value}"
        for path in sorted(AGENT.rglob("*.py"))
        if path != TABLE
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.match(node.value)
    ]
    assert found == []


def test_each_provider_is_listed_once():
    names = [p.name for p in PROVIDERS]
    assert len(names) == len(set(names))


def test_the_views_are_the_table():
    assert dict(KEY_VARIABLES) == {p.name: p.key_variables for p in PROVIDERS if p.key_variables}
    assert dict(OWN_HOSTS) == {p.name: p.hosts for p in PROVIDERS if p.hosts}
    assert {p.name for p in PROVIDERS if p.addressed_by_user} == ADDRESSED_BY_USER


@pytest.mark.parametrize("provider", [p for p in PROVIDERS if p.wire is not None], ids=lambda p: p.name)
def test_a_provider_the_fast_path_carries_has_what_a_request_needs(provider):
    assert provider.key_variables and provider.default_base and provider.always_finishes
    for model in [f"{provider.name}/m", *(f"{prefix}-m" for prefix in provider.bare_prefixes)]:
        wire = fast_wire(model)
        assert wire is not None and (wire.protocol, wire.provider) == (provider.wire, provider.name)


@pytest.mark.parametrize(
    "model,named,shown",
    [
        ("Anthropic/x", "anthropic", "anthropic"),
        ("claude-3-opus", "anthropic", "anthropic"),
        ("gpt-4o", "openai", "openai"),
        ("o3-mini", "openai", "openai"),
        ("llama3", "", "openai"),
        ("a/b/c", "a", "a"),
    ],
)
def test_what_a_model_string_says_of_its_provider(model, named, shown):
    assert named_provider(model) == named
    assert provider_of(model) == shown


def test_a_provider_cairn_does_not_know_has_no_facts():
    unknown = lookup("somewhere")
    assert unknown.name == "somewhere" and not unknown.key_variables and not unknown.hosts and unknown.wire is None
