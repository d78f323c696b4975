"""agent/llm/models.py `server_models`: what an OpenAI-compatible server lists (`/model`'s
first choices), and None when it does not answer with a list."""

from __future__ import annotations

from agent.llm.models import server_models
from tests.fakes.llm_server import FakeLLMServer


def test_the_servers_list_with_its_windows_in_its_order():
    listed = {"data": [{"id": "b-model", "max_model_len": 8192}, {"id": "a-model"}, {"object": "model"}]}
    with FakeLLMServer(extra_get={"/v1/models": listed}) as srv:
        assert server_models(srv.base_url, "sk-test") == [("b-model", 8192), ("a-model", None)]


def test_no_list_or_no_server_is_none():
    with FakeLLMServer(extra_get={"/v1/models": {"error": "no"}}) as srv:
        assert server_models(srv.base_url) is None
    assert server_models("http://127.0.0.1:9/v1", timeout=1.0) is None  # refused
    assert server_models("file:///etc") is None
