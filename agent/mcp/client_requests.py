"""What cairn answers when a server asks something of it: `roots/list` and `elicitation/create`.

A server may ask its client for the folders it should work in (roots) and for input from the
user (elicitation, a form). The reference servers hide the tools that need them from a client
that does not declare them, so cairn declares both. Roots: the workspace, the one folder a
session works in. Elicitation: a front end that can show a form passes an `Elicit` to the
manager (agent/mcp/manager.py); where none can (`cairn -p`, an editor over ACP today) the
request is declined with the reason in the answer's `_meta.reason` and said to the user, so
a server's tool gets an answer at once rather than waiting on a form nobody will see.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

MAX_MESSAGE_CHARS = 2_000
MAX_FIELDS = 20
NO_FORMS = "this cairn front end cannot show a form (run cairn in its terminal UI to answer one)"


@dataclass(frozen=True)
class ElicitField:
    """One field of a form a server asks for (only top-level fields exist in MCP)."""

    name: str
    title: str
    kind: str  # "string", "number", "integer", "boolean"
    required: bool
    choices: tuple[str, ...] = ()  # an enum's values
    description: str = ""


@dataclass(frozen=True)
class ElicitRequest:
    """A server's form: its message and fields, from a server that may be hostile (bounded)."""

    server: str
    message: str
    fields: tuple[ElicitField, ...]


@dataclass(frozen=True)
class ElicitAnswer:
    action: Literal["accept", "decline", "cancel"]
    content: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


Elicit = Callable[[ElicitRequest], Awaitable[ElicitAnswer]]


def _text(value: Any, limit: int) -> str:
    text = str(value or "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def elicit_request(server: str, params: Any) -> ElicitRequest | None:
    """The form asked for, or None when it is not a form (a URL elicitation)."""
    if getattr(params, "mode", "form") != "form":
        return None
    schema = getattr(params, "requested_schema", None) or {}
    props = schema.get("properties") if isinstance(schema, dict) else None
    required = set(schema.get("required") or []) if isinstance(schema, dict) else set()
    fields = []
    for name, spec in list(props.items() if isinstance(props, dict) else [])[:MAX_FIELDS]:
        spec = spec if isinstance(spec, dict) else {}
        enum = spec.get("enum")
        choices: list[Any] = enum if isinstance(enum, list) else []
        fields.append(
            ElicitField(
                name=_text(name, 100),
                title=_text(spec.get("title") or name, 100),
                kind=str(spec.get("type") or "string"),
                required=name in required,
                choices=tuple(_text(c, 100) for c in choices[:50]),
                description=_text(spec.get("description"), 300),
            )
        )
    return ElicitRequest(
        server=server, message=_text(getattr(params, "message", ""), MAX_MESSAGE_CHARS), fields=tuple(fields)
    )


def roots_callback(workspace: Path) -> Callable[[Any], Awaitable[Any]]:
    """The `list_roots_callback` for the SDK's client: the workspace as a `file://` root."""

    async def roots(context: Any) -> Any:
        import mcp_types

        folder = Path(workspace).resolve()
        return mcp_types.ListRootsResult(roots=[mcp_types.Root(uri=folder.as_uri(), name=folder.name or str(folder))])

    return roots


def elicitation_callback(
    server: str, elicit: Elicit | None, told: Callable[[str], None]
) -> Callable[[Any, Any], Awaitable[Any]]:
    """The `elicitation_callback` for the SDK's client: the front end's form, or a decline
    with the reason (said to the user through `told`)."""

    async def answer(context: Any, params: Any) -> Any:
        import mcp_types

        request = elicit_request(server, params)
        if request is None:
            reason = "cairn answers form elicitations only (not URL ones)"
            result = ElicitAnswer("decline", reason=reason)
        elif elicit is None:
            result = ElicitAnswer("decline", reason=NO_FORMS)
        else:
            result = await elicit(request)
        if result.action != "accept" and result.reason:
            told(f"MCP server '{server}' asked for input; declined: {result.reason}")
        meta = {"reason": result.reason} if result.reason else None
        content = result.content if result.action == "accept" else None
        return mcp_types.ElicitResult(action=result.action, content=content, _meta=meta)

    return answer
