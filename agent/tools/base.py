"""What every tool is: a pydantic arguments model, a short description, one async `run`."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from agent.tools.permissions import Permissions


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
    content: str
    is_error: bool = False
    meta: dict[str, Any] = {}
    # Not sent to the model, not in meta: bytes go to the store's checkpoint tables.
    edits: list[FileEdit] = []

    @classmethod
    def error(cls, message: str, **meta: Any) -> "ToolResult":
        text = message if message.startswith("Error:") else f"Error: {message}"
        return cls(content=text, is_error=True, meta=meta)


@dataclass
class ToolContext:
    """Everything a tool may touch: the workspace, the user's permission, settings."""

    workspace: Path
    permissions: Permissions
    command_timeout: float = 120.0
    max_read_lines: int = 2000
    max_file_bytes: int = 10 * 1024 * 1024
    # Running subprocesses register here so an interrupt can kill their process groups.
    processes: set[asyncio.subprocess.Process] = field(default_factory=set)
    # The session's context files (agent.context.files.manager.ContextFiles), for context-* tools.
    context_files: Any = None


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[ToolArgs]]

    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def definition(self) -> dict[str, Any]:
        """OpenAI function-tool definition sent to the model."""
        schema = self.Args.model_json_schema()
        schema.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": schema},
        }
