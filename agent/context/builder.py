"""One open session's request builder: the only object that turns its history into a request.

The agent owns one per session (agent/turn/loop.py). It owns everything builds remember
(`BuildState`: records, step results, each pass's last run) and the token counter, resolves
the model's prompt-cache policy (agent/context/cache_policy.py), and returns the whole
request: system prompt, tool definitions, messages, parameters and cache breakpoints
(`chat_request`), and the condense request with a turn's settings (`summary_request`). A
new session (or `/new`) gets a new builder, so nothing of one session's builds reaches
another's. The build itself stays `build_api_messages`, a function of (history, now,
settings, tools, system prompt, policy): what the builder keeps only makes it faster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agent.context.cache_policy import DEFAULT_READ_SHARE, DEFAULT_WRITE_SHARE, EXACT, SENT_META, CachePolicy
from agent.context.pipeline import BuildResult, TruncateTo, build_api_messages
from agent.context.rendered import SessionImages
from agent.context.state import BuildState
from agent.context.tokens import TokenCounter, counter_for
from agent.mcp.catalog import CatalogState, request_tools
from agent.session.models import Message
from agent.settings.schema import Settings

if TYPE_CHECKING:
    from agent.llm.client import ChatRequest
    from agent.llm.http import ConnectionPool
    from agent.llm.models import DiscoveredWindow

# Providers with automatic prefix caches bill cache writes as plain input.
AUTOMATIC_WRITE_SHARE = 1.0


def resolve_policy(settings: Settings, model: str) -> CachePolicy:
    """`context.cache_policy` for `model`: unless the user chose, `auto` where its provider
    caches prompts (a model litellm's price map lists without a cache price does not), with
    the model's cache prices from that map (read without importing litellm)."""
    from agent.llm.caching import breakpoint_style
    from agent.llm.cost_map import model_info

    cfg = settings.context
    style = breakpoint_style(model) if model else "none"
    info = model_info(model) if model else None
    input_cost = info.input_cost_per_token if info is not None else None
    read_cost = info.cache_read_input_token_cost if info is not None else None
    write_cost = info.cache_creation_input_token_cost if info is not None else None
    priced = bool(input_cost)
    caches = style != "none" and not (priced and read_cost is None)
    mode = cfg.cache_policy or ("auto" if caches else "exact")
    if mode == "exact":
        return EXACT.model_copy(update={"ttl_ms": cfg.cache_ttl_ms})
    read, write = DEFAULT_READ_SHARE, DEFAULT_WRITE_SHARE if style == "explicit" else AUTOMATIC_WRITE_SHARE
    if input_cost:  # priced
        if read_cost is not None:
            read = read_cost / input_cost
        if write_cost:
            write = write_cost / input_cost
    return CachePolicy(mode="auto", ttl_ms=cfg.cache_ttl_ms, read_share=read, write_share=write)


class RequestBuilder:
    def __init__(
        self,
        settings: Settings,
        model: str,
        windows: Mapping[str, DiscoveredWindow] | None = None,
        connections: ConnectionPool | None = None,
        effort: str | None = None,
    ) -> None:
        """`windows`: the windows the models' servers reported, owned by the agent (it adds to
        them); a request's output limit is the one the budget reserves with that window.
        `connections`: the agent's pooled HTTP client, which every request carries. `effort`:
        the session's `/effort` choice, over the configured ones (agent/llm/reasoning.py)."""
        self.settings = settings
        self.effort = effort
        self.connections = connections
        self.windows: Mapping[str, DiscoveredWindow] = windows if windows is not None else {}
        self.counter: TokenCounter = counter_for(settings.context.tokenizer)
        self.state = BuildState()
        self.model = model
        self._policy: CachePolicy | None = None
        # Which MCP tools this session's requests carry (agent/mcp/catalog.py): grow-only.
        self.catalog = CatalogState()
        # The bytes of the images this session's prompts attach (the agent fills it).
        self.images = SessionImages()
        self._vision: bool | None = None
        self._pdf: bool | None = None

    @property
    def policy(self) -> CachePolicy:
        if self._policy is None:
            self._policy = resolve_policy(self.settings, self.model)
        return self._policy

    def set_model(self, model: str) -> None:
        self.model = model
        self._policy = None
        self._vision = None
        self._pdf = None

    @property
    def sees_images(self) -> bool:
        """Whether the model takes images (agent/images.py `sees_images`); without, a request
        carries each attached image as its `[image: name, WxH]` line."""
        if self._vision is None:
            from agent.images import sees_images

            self._vision = sees_images(self.model, self.settings.api_base)
        return self._vision

    @property
    def sees_pdfs(self) -> bool:
        """Whether the model takes PDF documents (agent/documents.py `sees_pdfs`): a read of a
        PDF then attaches it, and a request carries it; without, a document is its label."""
        if self._pdf is None:
            from agent.documents import sees_pdfs

            self._pdf = sees_pdfs(self.model)
        return self._pdf

    def _images(self) -> SessionImages | None:
        """The attachments' bytes for a request (None: the model sees no images, each is its label)."""
        if not self.sees_images:
            return None
        self.images.set_pdf(self.sees_pdfs)
        return self.images

    def request_tools(self, definitions: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
        """The tools a request carries, from the registry's definitions: MCP tools inline, or
        as the catalog (one line each, the loader, and the schemas loaded) above
        `mcp.inline_tool_tokens`."""
        if not definitions:
            return []
        return request_tools(
            self.catalog,
            definitions,
            inline_tokens=self.settings.mcp.inline_tool_tokens,
            count=self.counter.count_tools,
        )

    def build(
        self,
        history: list[Message],
        *,
        now_ms: int,
        tools: list[dict[str, Any]] | None,
        system_prompt: str | None,
        truncate: TruncateTo | None = None,
        flush: bool = False,
    ) -> BuildResult:
        """The next request's messages (SPEC §4). `flush`: apply every pending replacement (the
        budget needs the room). `tools`: the registry's definitions (`request_tools` picks)."""
        self.catalog.read_history(history)
        tools = self.request_tools(tools)
        return build_api_messages(
            history,
            now_ms=now_ms,
            settings=self.settings,
            tools=tools,
            system_prompt=system_prompt,
            truncate=truncate,
            policy=self.policy,
            flush=flush,
            state=self.state,
            counter=self.counter,
            images=self._images(),
        )

    def payload(
        self, build: BuildResult, tools: list[dict[str, Any]]
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and tools to send: with cache breakpoints where the provider needs them
        (after the system prompt and tools, on the end of the last request, on the newest message)."""
        from agent.llm.caching import breakpoint_style, with_breakpoints

        tools = self.request_tools(tools)
        if breakpoint_style(self.model) != "explicit":
            return build.messages, tools
        messages, marked_tools = with_breakpoints(build.messages, tools, breakpoint_positions(build.messages))
        return messages, marked_tools or []

    def chat_request(self, build: BuildResult, tools: list[dict[str, Any]]) -> ChatRequest:
        """The whole request for `build`: its messages and the tools (with cache breakpoints
        where the provider needs them), the model and the LLM settings of a turn."""
        from agent.llm.reasoning import effort_for
        from agent.llm.server_search import native_search
        from agent.settings.schema import model_override

        messages, sent_tools = self.payload(build, tools)
        request = self._request(self.model, messages, sent_tools, estimated_tokens=build.tokens.total)
        request.reasoning_effort = effort_for(self.settings, self.model, self.effort)
        request.supports_reasoning = model_override(self.settings, self.model).supports_reasoning
        request.native_search = native_search(self.settings.web)  # Claude's own search, where it runs
        return request

    def summary_request(self, model: str, messages: list[dict[str, Any]]) -> ChatRequest:
        """The condense request (agent/context/condense.py made its messages): a turn's
        settings — endpoint, key, timeouts, temperature — on the summary model (and its output
        limit), no tools."""
        return self._request(model, messages, [])

    def _request(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        estimated_tokens: int | None = None,
    ) -> ChatRequest:
        """`max_tokens`: the model's output limit (`model_limits`: a model's own override, else
        `llm.max_output_tokens`, else litellm's map, else `context.default_max_output_tokens`;
        capped to fit the window its server reported), the same figure the budget reserves."""
        from agent.llm.client import ChatRequest
        from agent.llm.models import model_limits

        llm = self.settings.llm
        return ChatRequest(
            model=model,
            messages=messages,
            tools=tools,
            api_base=self.settings.api_base,
            api_key=self.settings.api_key,
            temperature=llm.temperature,
            timeout=llm.request_timeout,
            idle_timeout=llm.stream_idle_timeout,
            max_tokens=model_limits(self.settings, model, self.windows.get(model)).max_output_tokens,
            estimated_tokens=estimated_tokens,
            client=llm.client,
            connections=self.connections,
        )

    @staticmethod
    def sent_record(build: BuildResult) -> dict[str, Any]:
        """What the assistant message answering this request records (`SENT_META`): when it was
        built, and the replacements it applied first (what later builds treat as sent)."""
        if build.cache is None:
            return {}
        return {SENT_META: {"at": build.cache.at, "applied": list(build.cache.applied_now)}}


def breakpoint_positions(messages: list[dict[str, Any]]) -> list[int]:
    """The newest message, and the last message the previous request carried (the one before
    the newest assistant message): a request reads the last one's cache, and writes its own."""
    if len(messages) < 2:
        return []
    positions = [len(messages) - 1]
    for index in range(len(messages) - 1, 0, -1):
        if messages[index].get("role") == "assistant":
            if 0 < index - 1 < len(messages) - 1 and messages[index - 1].get("role") != "system":
                positions.insert(0, index - 1)
            break
    return positions
