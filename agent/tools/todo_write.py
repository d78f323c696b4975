"""`todo-write`: the model's todo list for a multi-step task, replaced whole on each call.

The list is the model's plan made visible: the TUI pins it above the prompt, stream-json and
ACP send it to the program or editor. Sending the whole list each time (as Claude Code's
TodoWrite and opencode's todowrite do) keeps the tool free of ids and edit conflicts, and
lets a model trained on either call it with the arguments it already knows: keys beside
`content` and `status` (`activeForm`, `priority`, `id`) are kept, not refused. It touches
nothing outside the session, so it asks for no approval.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent.tools.base import Tool, ToolArgs, ToolContext, ToolResult, tool_prompt
from agent.tools.todos import META_KEY, TOOL_NAME, as_text

MAX_ITEMS = 100
MAX_CONTENT_CHARS = 500


def _no_extra_in_schema(schema: dict[str, Any]) -> None:
    # The model is told about content and status only; extra keys are accepted quietly.
    schema.pop("additionalProperties", None)


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="allow", json_schema_extra=_no_extra_in_schema)

    content: str = Field(
        min_length=1, max_length=MAX_CONTENT_CHARS, description="The step, short and imperative: 'Add parse() tests'."
    )
    status: Literal["pending", "in_progress", "completed"] = Field(
        description="pending, in_progress (exactly one while you work), or completed."
    )

    @field_validator("content")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    @field_validator("status", mode="before")
    @classmethod
    def _spelling(cls, value: Any) -> Any:
        """`in-progress`, `In Progress`: the same status spelt another way, not a mistake."""
        if isinstance(value, str):
            return "_".join(value.strip().lower().replace("-", " ").split())
        return value


class TodoArgs(ToolArgs):
    todos: list[TodoItem] = Field(
        max_length=MAX_ITEMS, description="The whole list, in order; it replaces the previous one."
    )


class TodoWrite(Tool):
    name = TOOL_NAME
    description = tool_prompt(name)
    Args = TodoArgs

    async def run(self, args: TodoArgs, ctx: ToolContext) -> ToolResult:
        todos = [item.model_dump() for item in args.todos]
        return ToolResult(content=as_text(todos), meta={META_KEY: todos})
