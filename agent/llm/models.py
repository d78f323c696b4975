"""Which model to use and how big its window is."""

from __future__ import annotations

import json
import logging
import math
import os
import re
import urllib.error
import urllib.request
from typing import Any, NamedTuple

from pydantic import BaseModel

from agent.llm.providers import PROVIDERS
from agent.settings.schema import Settings, model_override

log = logging.getLogger(__name__)


def resolve_model(settings: Settings) -> str | None:
    if settings.model:
        return settings.model
    # With no model configured, the first provider whose key is set picks a sensible default.
    for provider in PROVIDERS:
        if provider.default_model and any(os.environ.get(key) for key in provider.key_variables):
            return provider.default_model
    return None


# Where a model's window came from (`/context` says it; agent/context/inspect.py).
SOURCE_CONFIG = "config"
SOURCE_PRICE_MAP = "price map"
SOURCE_DEFAULT = "default"
SOURCE_LLAMA_CPP = "server (llama.cpp /props)"
SOURCE_OPENAI_MODELS = "server (vLLM /models)"
SOURCE_OLLAMA = "server (Ollama /api/show)"

DISCOVERY_TIMEOUT_S = 2.0  # per request to the model's server
# A window that holds the prompt and the reply together (a local server's n_ctx, max_model_len
# or num_ctx, a configured or default window) gives the reply at most this share: the budget
# keeps `window × 0.9 − output` for the prompt, and cairn's own system prompt and tool
# definitions alone take about 2,200 tokens, so a 4,096-token window still leaves the
# conversation room. The price map's windows are input limits (the reply comes on top).
MAX_OUTPUT_SHARE_OF_WINDOW = 0.25


class ModelLimits(BaseModel):
    context_window: int
    max_output_tokens: int
    from_litellm: bool = False  # the model is in litellm's cost map
    window_source: str = SOURCE_DEFAULT  # SOURCE_*: where context_window came from


class DiscoveredWindow(NamedTuple):
    """A window the model's own server reported (`probe_window`)."""

    tokens: int
    source: str  # one of the SOURCE_* "server (...)" strings


def model_limits(settings: Settings, model: str, discovered: DiscoveredWindow | None = None) -> ModelLimits:
    """Config override > litellm's cost map (read without importing litellm) > the window the
    model's server reported (`discovered`, see `probe_window`) > configured defaults.

    The output limit is what each request sends as max_tokens and what the budget reserves
    for the reply: `[models."<model>"] max_output_tokens` > `llm.max_output_tokens` > the map >
    `context.default_max_output_tokens`, capped by `output_cap` when the window is shared by
    prompt and reply (any window but the price map's): with a small local window, the
    configured 4,096 tokens would be the whole window and every request would overflow it."""
    from agent.llm.cost_map import model_info

    info = model_info(model)  # None: unknown to litellm (local or custom models): use defaults
    window = info.context_window if info else None
    output = info.max_output_tokens if info else None
    override = model_override(settings, model)
    if override.context_window:
        context_window, source = override.context_window, SOURCE_CONFIG
    elif window:
        context_window, source = window, SOURCE_PRICE_MAP
    elif discovered is not None:
        context_window, source = discovered.tokens, discovered.source
    else:
        context_window, source = settings.context.default_context_window, SOURCE_DEFAULT
    max_output = (
        override.max_output_tokens
        or settings.llm.max_output_tokens
        or output
        or settings.context.default_max_output_tokens
    )
    if source != SOURCE_PRICE_MAP and max_output > output_cap(context_window):
        log.info(
            "output limit %d capped at %d: the %d-token window (%s) holds prompt and reply",
            max_output,
            output_cap(context_window),
            context_window,
            source,
        )
        max_output = output_cap(context_window)
    return ModelLimits(
        context_window=context_window, max_output_tokens=max_output, from_litellm=info is not None, window_source=source
    )


def output_cap(window: int) -> int:
    """The most a reply may take of a window it shares with the prompt."""
    return max(1, math.floor(window * MAX_OUTPUT_SHARE_OF_WINDOW))


def needs_window_discovery(settings: Settings, model: str) -> bool:
    """Ask the server only for a model on a custom `api_base` that neither the config nor
    litellm's price map gives a window."""
    if not settings.api_base or not model:
        return False
    if model_override(settings, model).context_window:
        return False
    from agent.llm.cost_map import model_info

    info = model_info(model)
    return info is None or not info.context_window


# litellm routes whose model names are the server's own ids (`openai/qwen2.5` → `qwen2.5`).
_LOCAL_PREFIXES = (
    "openai",
    "hosted_vllm",
    "ollama",
    "ollama_chat",
    "llamafile",
    "lm_studio",
    "custom_openai",
    "text-completion-openai",
    "vllm",
    "llama_cpp",
)
_VERSION_SEGMENT = re.compile(r"/v\d+$")


def _server_model_name(model: str) -> str:
    head, sep, rest = model.partition("/")
    return rest if sep and head.lower() in _LOCAL_PREFIXES else model


class _Unreachable(Exception):
    """No connection, or no answer in time: the other endpoints are not tried."""


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Follows nothing: `None` makes urllib raise the redirect as an HTTPError."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: ANN001 - urllib's signature
        return None


def _request_json(url: str, api_key: str | None, timeout: float, body: dict | None = None) -> Any:
    """The JSON a GET (or, with `body`, a POST) answers; None for an HTTP error or non-JSON."""
    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if body is not None else "GET")
    # No redirect is followed: urllib would send the Authorization header on to wherever it
    # points. A redirect reads as an HTTP error: that endpoint is not asked further.
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=timeout) as response:  # noqa: S310 - the configured api_base
            raw = response.read(4 * 1024 * 1024)
    except urllib.error.HTTPError:
        return None  # the server answered, just not this endpoint: try the next
    except (urllib.error.URLError, OSError, ValueError) as exc:  # refused, timed out, bad URL
        raise _Unreachable(str(exc)) from exc
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _positive_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = int(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def _from_props(answer: Any) -> int | None:
    """llama.cpp `GET /props`: `default_generation_settings.n_ctx` (a slot's window), or `n_ctx`."""
    if not isinstance(answer, dict):
        return None
    settings = answer.get("default_generation_settings")
    if isinstance(settings, dict) and _positive_int(settings.get("n_ctx")):
        return _positive_int(settings.get("n_ctx"))
    return _positive_int(answer.get("n_ctx"))


def _from_models(answer: Any, names: tuple[str, ...]) -> int | None:
    """OpenAI-compatible `GET /models` (vLLM): `data[].max_model_len` of the entry whose id is
    the model's; a server listing a single model serves that one whatever it is called."""
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        return None
    entries = [e for e in data if isinstance(e, dict)]
    match = next((e for e in entries if e.get("id") in names), None)
    if match is None and len(entries) == 1:
        match = entries[0]
    return _positive_int(match.get("max_model_len")) if match else None


def _from_ollama(answer: Any) -> int | None:
    """Ollama `POST /api/show`: the `num_ctx` the model is run with (`parameters`), else
    `model_info["<arch>.context_length"]`."""
    if not isinstance(answer, dict):
        return None
    parameters = answer.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            key, _, value = line.strip().partition(" ")
            if key == "num_ctx" and _positive_int(value.strip()):
                return _positive_int(value.strip())
    info = answer.get("model_info")
    if isinstance(info, dict):
        arch = info.get("general.architecture")
        if arch and _positive_int(info.get(f"{arch}.context_length")):
            return _positive_int(info.get(f"{arch}.context_length"))
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length") and _positive_int(value):
                return _positive_int(value)
    return None


def probe_window(
    api_base: str, model: str, api_key: str | None = None, timeout: float = DISCOVERY_TIMEOUT_S
) -> DiscoveredWindow | None:
    """Ask the model's server for its window: llama.cpp `GET {root}/props`, then the
    OpenAI-compatible `GET {base}/models` (vLLM's `max_model_len`), then Ollama's
    `POST {root}/api/show` (`root`: the base without its `/v1`). Each request waits at most
    `timeout` s; a server that does not connect or answer in time ends the search. Blocking
    (run it in a thread); never raises: None means "use the default"."""
    try:
        base = api_base.strip().rstrip("/")
        if not base.lower().startswith(("http://", "https://")):
            return None
        root = _VERSION_SEGMENT.sub("", base)
        models_url = f"{base}/models" if _VERSION_SEGMENT.search(base) else f"{base}/v1/models"
        name = _server_model_name(model)
        names = (name, model)
        tokens = _from_props(_request_json(f"{root}/props", api_key, timeout))
        if tokens:
            return DiscoveredWindow(tokens, SOURCE_LLAMA_CPP)
        tokens = _from_models(_request_json(models_url, api_key, timeout), names)
        if tokens:
            return DiscoveredWindow(tokens, SOURCE_OPENAI_MODELS)
        tokens = _from_ollama(_request_json(f"{root}/api/show", api_key, timeout, body={"model": name}))
        if tokens:
            return DiscoveredWindow(tokens, SOURCE_OLLAMA)
    except _Unreachable as exc:
        log.debug("window discovery: %s unreachable (%s)", api_base, exc)
    except Exception:  # a discovery bug must never stop a session: fall back to the default
        log.debug("window discovery failed for %s", api_base, exc_info=True)
    return None


def server_models(
    api_base: str, api_key: str | None = None, timeout: float = DISCOVERY_TIMEOUT_S
) -> list[tuple[str, int | None]] | None:
    """The models an OpenAI-compatible server lists (`GET {base}/models`), each with the window
    it reports (vLLM's `max_model_len`; else None), in its order; None when it does not answer
    with a list (`/model` then offers the price map's). Blocking, bounded by `timeout`; never raises."""
    try:
        base = api_base.strip().rstrip("/")
        if not base.lower().startswith(("http://", "https://")):
            return None
        url = f"{base}/models" if _VERSION_SEGMENT.search(base) else f"{base}/v1/models"
        answer = _request_json(url, api_key, timeout)
    except _Unreachable as exc:
        log.debug("model list: %s unreachable (%s)", api_base, exc)
        return None
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        return None
    found = [(e.get("id"), _positive_int(e.get("max_model_len"))) for e in data if isinstance(e, dict)]
    return [(name, window) for name, window in found if isinstance(name, str) and name.strip()]


def discover_window(
    api_base: str, model: str, api_key: str | None = None, timeout: float = DISCOVERY_TIMEOUT_S
) -> int | None:
    """The window `probe_window` finds, in tokens (None: none found)."""
    found = probe_window(api_base, model, api_key, timeout)
    return found.tokens if found else None
