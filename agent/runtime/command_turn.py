"""A prompt that invokes a command (`/commit fix the typo`): expanded, then run as the turn.

Every front end submits what the user typed as `Prompt` (agent/runtime/ops.py); when it
names a command of the runtime's sources (agent/commands/invocation.py: command files,
skills, then MCP prompts), the turn is the command's:

1. its grants (`allowed-tools`) are put in force for this turn only, as "always this session"
   keys the turn's end takes back (those the user had already stay);
2. each `` !`cmd` `` in it runs before the prompt goes, as the model's `terminal-execute` call
   would: through the agent's registry with its permissions, sandbox and hooks (a command that
   only reads runs unasked, another asks, and with nobody to ask, as in `cairn -p`, is
   refused); its output, or why it did not run, goes in the message;
3. its `model` is the turn's model, the session's again after it.

What the expansion had to say (a folder not trusted, a file not included) is a Notice.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from agent.commands.invocation import CommandSource, ExpandContext, command_sources, resolve
from agent.session.models import ToolCall, new_id
from agent.turn.events import Notice

if TYPE_CHECKING:
    from agent.turn.loop import Agent

TERMINAL_TOOL = "terminal-execute"


def sources(agent: Agent, *more: CommandSource) -> list[CommandSource]:
    """Where the runtime looks a command up: the workspace's files, the agent's skills, `more`
    (where MCP prompts join: agent/runtime/runtime.py passes them)."""
    from agent.skills.catalog import refreshed

    workspace = agent.settings.workspace  # skills as they are now: one added since the last turn runs as /name
    return command_sources(workspace, refreshed(agent.skills, workspace) or agent.skills, *more)


def output_text(content: str) -> str:
    """What a `` !`cmd` `` puts in the message: the command's output (stderr after stdout, the
    exit code when it failed), as Claude Code inlines it; a refusal or error as its text."""
    try:
        data = json.loads(content)
    except ValueError:
        return content
    if not isinstance(data, dict) or "stdout" not in data:
        return content
    parts = [str(data.get("stdout") or "").rstrip("\n"), str(data.get("stderr") or "").rstrip("\n")]
    text = "\n".join(part for part in parts if part)
    code = data.get("exitCode")
    return text + (f"\n[exit code {code}]" if code not in (0, None) else "")


def _project_trusted(agent: Agent) -> bool:
    from agent.subagents.definitions import folder_trusted

    try:
        return folder_trusted(agent.settings.workspace)
    except Exception:  # an unreadable config: not trusted
        return False


async def run_prompt(agent: Agent, text: str, found_in: list[CommandSource]) -> None:
    """The turn for `text`: a command's when it names one, else the prompt as it is."""
    notices: list[str] = []
    found = resolve(found_in, text, notices)
    for notice in notices:
        agent.emit(Notice(message=notice, kind="warning"))
    if found is None:
        await agent.run_turn(text)
        return
    invocable, args = found
    ctx = ExpandContext(workspace=agent.settings.workspace, trusted=lambda: _project_trusted(agent))
    expansion = invocable.expand(args, ctx)
    for notice in expansion.notices:
        agent.emit(Notice(message=notice, kind="info"))
    always = agent.permissions.always
    added = [key for key in expansion.grants if key not in always]
    always.update(added)
    model = agent.model
    try:

        async def run(command: str) -> str:
            call = ToolCall(
                id=f"command_{new_id()[:8]}", name=TERMINAL_TOOL, arguments=json.dumps({"command": command})
            )
            result = await agent.registry.execute(call, agent.ctx)
            if not result.is_error:
                return output_text(result.content)
            agent.emit(Notice(message=f"/{invocable.name}: `{command}` did not run: {result.content}", kind="warning"))
            return f"[`{command}` did not run. {result.content}]"

        message = await expansion.message(run)
        if expansion.model and expansion.model != model:
            agent.set_model(expansion.model)
        await agent.run_turn(message, typed=text)
    finally:
        always.difference_update(added)
        if agent.model != model:
            agent.set_model(model)
