"""An unknown model on a custom `api_base` gets the window its server reports.

issues #17, "With a real model": "An unknown model on a custom `api_base` is assumed to have
128k tokens; ask the server (llama.cpp `/props` or `/v1/models`, Ollama `/api/show`, vLLM
`/v1/models` `max_model_len`) and use its window; say which window is used in `/context`."

Each server shape is a small stdlib HTTP server on 127.0.0.1 answering what the real one
answers (llama.cpp: tools/server/README.md `GET /props`; vLLM: `GET /v1/models` with
`max_model_len`; Ollama: `POST /api/show`); unknown routes get 404 as on the real servers.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agent.llm.models import (
    SOURCE_CONFIG,
    SOURCE_DEFAULT,
    SOURCE_LLAMA_CPP,
    SOURCE_OLLAMA,
    SOURCE_OPENAI_MODELS,
    SOURCE_PRICE_MAP,
    DiscoveredWindow,
    discover_window,
    model_limits,
    needs_window_discovery,
    probe_window,
)
from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Prompt
from agent.runtime.runtime import Runtime
from agent.settings.config import load_settings
from tests.fakes.llm_server import FakeLLMServer, text

LLAMA_PROPS = {
    "default_generation_settings": {
        "id": 0,
        "id_task": -1,
        "n_ctx": 16384,
        "speculative": False,
        "params": {"n_predict": -1},
    },
    "total_slots": 1,
    "model_path": "../models/qwen2.5-coder-1.5b-q4_k_m.gguf",
}
VLLM_MODELS = {
    "object": "list",
    "data": [
        {"id": "other/model", "object": "model", "owned_by": "vllm", "max_model_len": 4096},
        {"id": "Qwen/Qwen2.5-Coder-7B-Instruct", "object": "model", "owned_by": "vllm", "max_model_len": 32768},
    ],
}
OLLAMA_SHOW = {
    "modelfile": "FROM qwen2.5-coder:7b",
    "parameters": 'stop "<|im_end|>"\nnum_ctx 8192',
    "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
}


class _Server:
    """GET/POST routes → JSON; anything else 404. `requests` records (method, path)."""

    def __init__(self, get: dict[str, Any] | None = None, post: dict[str, Any] | None = None) -> None:
        routes = {("GET", k): v for k, v in (get or {}).items()} | {("POST", k): v for k, v in (post or {}).items()}
        self.requests: list[tuple[str, str, bytes]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                owner.requests.append((method, self.path, body))
                found = routes.get((method, self.path))
                payload = json.dumps(found if found is not None else {"error": "not found"}).encode()
                self.send_response(200 if found is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802
                self._answer("POST")

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.root = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def __enter__(self) -> _Server:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_llama_cpp_props_gives_the_slot_window():
    with _Server(get={"/props": LLAMA_PROPS}) as srv:
        found = probe_window(srv.root + "/v1", "openai/qwen2.5-coder", "sk-local")
        assert found == DiscoveredWindow(16384, SOURCE_LLAMA_CPP)
        assert srv.requests[0][:2] == ("GET", "/props")  # at the server's root, not under /v1
        assert discover_window(srv.root, "openai/qwen2.5-coder") == 16384


def test_llama_cpp_props_top_level_n_ctx():
    with _Server(get={"/props": {"n_ctx": 12288, "total_slots": 1}}) as srv:
        assert probe_window(srv.root + "/v1", "openai/local") == DiscoveredWindow(12288, SOURCE_LLAMA_CPP)


def test_vllm_models_max_model_len_of_the_model_id():
    with _Server(get={"/v1/models": VLLM_MODELS}) as srv:
        found = probe_window(srv.root + "/v1", "hosted_vllm/Qwen/Qwen2.5-Coder-7B-Instruct")
        assert found == DiscoveredWindow(32768, SOURCE_OPENAI_MODELS)
        # A base without /v1 still finds the OpenAI-compatible listing.
        assert discover_window(srv.root, "openai/Qwen/Qwen2.5-Coder-7B-Instruct") == 32768
        # A model the server does not list (it lists several): no guess.
        assert probe_window(srv.root + "/v1", "openai/unknown") is None


def test_ollama_api_show_num_ctx_then_context_length():
    with _Server(post={"/api/show": OLLAMA_SHOW}) as srv:
        found = probe_window(srv.root + "/v1", "ollama_chat/qwen2.5-coder:7b")
        assert found == DiscoveredWindow(8192, SOURCE_OLLAMA)  # the num_ctx it runs with
        method, path, body = srv.requests[-1]
        assert (method, path) == ("POST", "/api/show") and json.loads(body) == {"model": "qwen2.5-coder:7b"}
    no_num_ctx = {**OLLAMA_SHOW, "parameters": 'stop "<|im_end|>"'}
    with _Server(post={"/api/show": no_num_ctx}) as srv:
        assert discover_window(srv.root + "/v1", "openai/qwen2.5-coder:7b") == 32768


def test_a_server_that_never_answers_times_out_to_the_default():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)  # accepts connections (the kernel does), never answers
    base = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    try:
        assert probe_window(base, "openai/local", timeout=0.3) is None
        # One timeout ends the search: one connection, not one per endpoint (each would wait
        # out its own timeout). The kernel queued every connection the probe made.
        listener.setblocking(False)
        connections = []
        try:
            while True:
                connections.append(listener.accept()[0])
        except BlockingIOError:
            pass
        for conn in connections:
            conn.close()
        assert len(connections) == 1
    finally:
        listener.close()
    settings = load_settings(None, flags={"model": "openai/local", "api_base": base})
    limits = model_limits(settings, "openai/local", None)
    assert limits.context_window == settings.context.default_context_window
    assert limits.window_source == SOURCE_DEFAULT


def test_refused_connection_and_garbage_fall_back_silently():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert probe_window(f"http://127.0.0.1:{port}/v1", "openai/local") is None  # nothing listens
    with _Server(get={"/props": {"default_generation_settings": {"n_ctx": "many"}}, "/v1/models": [1, 2]}) as srv:
        assert probe_window(srv.root + "/v1", "openai/local") is None
    assert probe_window("not a url", "openai/local") is None


def test_the_window_order_and_when_to_ask(workspace):
    flags = {"model": "openai/local", "api_base": "http://127.0.0.1:9/v1"}
    settings = load_settings(workspace, flags=flags)
    found = DiscoveredWindow(16384, SOURCE_LLAMA_CPP)
    assert needs_window_discovery(settings, "openai/local")
    limits = model_limits(settings, "openai/local", found)
    assert (limits.context_window, limits.window_source) == (16384, SOURCE_LLAMA_CPP)
    # The price map wins over the server, and the model is not asked about.
    assert not needs_window_discovery(settings, "openai/gpt-4o")
    assert model_limits(settings, "openai/gpt-4o", found).window_source == SOURCE_PRICE_MAP
    # A configured window wins over everything, and the model is not asked about.
    pinned = load_settings(workspace, flags={**flags, "models": {"openai/local": {"context_window": 5000}}})
    assert not needs_window_discovery(pinned, "openai/local")
    assert (
        model_limits(pinned, "openai/local", found).context_window,
        model_limits(pinned, "openai/local", found).window_source,
    ) == (5000, SOURCE_CONFIG)
    # No api_base: nothing to ask.
    assert not needs_window_discovery(load_settings(workspace, flags={"model": "openai/local"}), "openai/local")


@pytest.mark.parametrize("props", [LLAMA_PROPS])
async def test_a_runtime_uses_the_window_its_server_reports(workspace, props):
    """End to end: the scripted server also answers llama.cpp's `/props`; the budget, the
    status line's window, the Usage event and `/context` all use its 16,384 tokens."""
    from agent.context.budget import threshold_tokens
    from agent.context.inspect import format_report

    srv = FakeLLMServer([text("hello back")], extra_get={"/props": props})
    try:
        settings = load_settings(
            workspace,
            flags={"model": "openai/fake-model", "api_base": srv.base_url, "api_key": "sk-test", "yolo": True},
        )
        events: list = []
        runtime = await Runtime.open(settings, FrontEnd(on_event=events.append))
        try:
            await runtime.ready()
            assert runtime.context_window == 16384  # what the TUI's status line shows
            budget = runtime.agent.budget
            assert budget.window == 16384
            assert budget.threshold == threshold_tokens(16384, budget.threshold_percent)
            await runtime.submit(Prompt("hi"))
            usage = [e for e in events if e.type == "usage"]
            assert usage and usage[-1].context_window == 16384
            report = await runtime.context_report()
            assert report["window"] == 16384 and report["window_source"] == "server (llama.cpp /props)"
            assert report["threshold"] == budget.threshold
            assert "16,384 tokens, from server (llama.cpp /props)" in format_report(report)
        finally:
            await runtime.close()
    finally:
        srv.close()
    srv.check_script()


async def test_a_runtime_without_an_answer_keeps_the_default(workspace):
    srv = FakeLLMServer()  # lists its model without max_model_len, no /props, no /api/show
    try:
        settings = load_settings(
            workspace,
            flags={"model": "openai/fake-model", "api_base": srv.base_url, "api_key": "sk-test", "yolo": True},
        )
        runtime = await Runtime.open(settings, FrontEnd(on_event=lambda e: None))
        try:
            await runtime.ready()
            assert runtime.context_window == settings.context.default_context_window
            report = await runtime.context_report()
            assert report["window_source"] == "default"
        finally:
            await runtime.close()
    finally:
        srv.close()
