"""Asking the server behind a custom `api_base` how big a model's window is, once per model
and runtime, in a thread (agent/llm/models.py::probe_window), when neither the config nor
litellm's price map knows it. The agent's limits and budget use the answer
(`Agent.use_window`); a failure leaves the default window."""

from __future__ import annotations

import asyncio

from agent.process.background import in_daemon_thread
from agent.settings.schema import Settings


class WindowDiscovery:
    """The probes started so far, by model: the runtime waits on the current model's."""

    def __init__(self, settings: Settings, agent) -> None:
        self._settings = settings
        self._agent = agent
        self._probes: dict[str, asyncio.Future] = {}

    def start(self, model: str) -> None:
        if model in self._probes:
            return
        found: list = []
        future = asyncio.ensure_future(in_daemon_thread(_find_window, self._settings, model, found))

        def done(task: asyncio.Future) -> None:
            if not task.cancelled() and task.exception() is None and found and found[0] is not None:
                self._agent.use_window(model, found[0])

        future.add_done_callback(done)
        self._probes[model] = future

    def probe(self, model: str) -> asyncio.Future | None:
        """The probe for `model` (None: not started); it never raises."""
        return self._probes.get(model)


def _find_window(settings: Settings, model: str, out: list) -> None:
    from agent.llm.models import needs_window_discovery, probe_window

    if needs_window_discovery(settings, model):
        assert settings.api_base is not None  # discovery is for a custom api_base only
        out.append(probe_window(settings.api_base, model, settings.api_key))
