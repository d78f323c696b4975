"""What every tool is: a pydantic arguments model, a short description, one async `run`."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, field_validator

from agent.tools.background_tasks import BackgroundTasks
from agent.tools.modes import PlanReviewer
from agent.tools.permissions import Permissions
from agent.tools.schema import arguments_schema

if TYPE_CHECKING:
    from agent.lsp.manager import LspManager

# An error message repeats what the model sent (a path, a pattern); a 100 KB path must not
# come back whole. Longer messages keep their head and tail.
MAX_ERROR_CHARS = 2000

_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match) -> str:
    code = ord(match.group())
    # U+DC80..U+DCFF is how Python spells an undecodable byte of a file name (surrogateescape):
    # show the byte as `\xNN`, which workspace.resolve_path accepts back as that byte.
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def storable(text: str) -> str:
    """`text` without lone surrogates (file names that are not UTF-8, `\\udXXX` escapes in
    the model's JSON): they cannot be encoded as UTF-8, so SQLite, the API request and the
    terminal would all fail on them. Cheap when there are none (the usual case)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub(_escape_surrogate, text)
    return text


def storable_data(value: Any) -> Any:
    """`storable` applied to every string (keys included) of a JSON-like value."""
    if isinstance(value, str):
        return storable(value)
    if isinstance(value, dict):
        return {storable_data(k): storable_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable_data(v) for v in value]
    return value


def short_error(text: str, limit: int = MAX_ERROR_CHARS) -> str:
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]} … [{len(text) - 2 * keep} characters cut] … {text[-keep:]}"


# Each tool's description lives in `agent/tools/prompts/<tool name>.md` (package data), so the
# words the model reads about every tool can be reviewed, and changed, in one folder.
PROMPTS_FOLDER = "prompts"


def tool_prompt(name: str) -> str:
    """The description the model sees for the tool `name`. Read once, when the tool's class is
    defined; a missing file is a packaging bug and fails the import loudly rather than sending
    the model a tool it cannot know how to use."""
    text = resources.files("agent.tools").joinpath(PROMPTS_FOLDER, f"{name}.md").read_text(encoding="utf-8")
    return text.rstrip("\n")


class ToolError(Exception):
    """Raised inside a tool; the registry turns it into an `Error: …` result for the model."""


class ToolArgs(BaseModel):
    """Base for argument models: unknown keys are ignored, the schema is what the model sees."""

    model_config = ConfigDict(extra="ignore")


class FileEdit(BaseModel):
    """A file a tool changed: the loop stores both versions as a checkpoint for rewind."""

    path: str  # absolute
    before: bytes | None  # None: the file did not exist
    after: bytes | None  # None: the file was removed


class ToolResult(BaseModel):
    """What a tool returns. Its text is always storable (see `storable`), however it is made:
    constructed, or copied with `model_copy(update=...)` (which skips validation)."""

    content: str
    is_error: bool = False
    meta: dict[str, Any] = {}
    # Not sent to the model, not in meta: bytes go to the store's checkpoint tables.
    edits: list[FileEdit] = []
    # The bytes of the images `meta["images"]` names by hash (an MCP result's, agent/images.py):
    # the loop puts them in the store's blob table before the message that names them.
    blobs: list[bytes] = []

    @field_validator("content")
    @classmethod
    def _storable_content(cls, value: str) -> str:
        return storable(value)

    @field_validator("meta")
    @classmethod
    def _storable_meta(cls, value: dict[str, Any]) -> dict[str, Any]:
        return storable_data(value)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> ToolResult:
        if update:
            update = dict(update)
            if isinstance(update.get("content"), str):
                update["content"] = storable(update["content"])
            if isinstance(update.get("meta"), dict):
                update["meta"] = storable_data(update["meta"])
        return super().model_copy(update=update, deep=deep)

    @classmethod
    def error(cls, message: str, **meta: Any) -> ToolResult:
        text = message if message.startswith("Error:") else f"Error: {message}"
        return cls(content=short_error(text), is_error=True, meta=meta)


@dataclass
class ToolContext:
    """Everything a tool may touch: the workspace, the user's permission, settings."""

    workspace: Path
    permissions: Permissions
    command_timeout: float = 120.0
    max_command_timeout: float = 600.0  # `tools.max_command_timeout`: no command runs longer
    max_read_lines: int = 2000
    max_file_bytes: int = 10 * 1024 * 1024
    # Running subprocesses register here so an interrupt can kill their process groups.
    processes: set[asyncio.subprocess.Process] = field(default_factory=set)
    # The session's context files (agent.context.files.manager.ContextFiles), for context-* tools.
    context_files: Any = None
    # `[web]` settings (agent.settings.schema.WebSettings) for web-fetch; None: it loads them itself.
    web: Any = None
    # Set by the loop around each call: output text as it arrives, so a front end can show
    # a long command working (and keep what it printed when the user interrupts it).
    progress: Callable[[str], None] | None = None
    # Set by the runtime: shows exit-plan-mode's plan to the user and returns their answer
    # (agent/tools/modes.py); None: nobody to ask (`cairn -p`), the plan is the run's answer.
    plan_review: PlanReviewer | None = None
    # Set by the runtime: told when a tool switched `permissions.mode`, so front ends show it.
    mode_changed: Callable[[str], None] | None = None
    # The agent's background tasks (agent/tools/background_tasks.py); None: none can be started.
    tasks: BackgroundTasks | None = None
    # The agent's hooks (agent.hooks.dispatch.Hooks): the registry runs PreToolUse and
    # PostToolUse around each call; None: no hooks (a tool's own tests, a bare context).
    hooks: Any = None
    # Set by the loop: whether the model takes PDF documents (agent/documents.py), asked when a
    # PDF is read; None or False: filesystem-read shows a PDF's text instead.
    pdf_input: Callable[[], bool] | None = None
    # The session's language servers (agent/lsp/manager.py), set by the runtime: file edits append
    # the diagnostics they introduced; None: none (a subagent's child, a tool's own tests).
    lsp: LspManager | None = None


class Tool:
    # Set on the class by cairn's tools, per instance by an MCP server's (agent/mcp/tool.py).
    name: str
    description: str
    Args: ClassVar[type[ToolArgs]]

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def definition(self) -> dict[str, Any]:
        """OpenAI function-tool definition sent to the model."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": arguments_schema(self.Args)},
        }
