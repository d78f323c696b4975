"""What a front end may ask of the agent: one typed vocabulary in, as `turn/events.py` is the one out.

A front end (the TUI, `cairn -p`, the ACP server) drives the agent only by `Runtime.submit(op)`
with one of these; what happens comes back as events. Ops are plain data, so every front end
asks for the same thing the same way, and what a session was asked is one list to read
(Codex's `Op`). What a front end only reads (the history, the sessions, `/context`'s report)
stays a query method of the runtime: reading changes nothing.

Each op names its result type (`Op[R]`): `await runtime.submit(Fork())` is a `Session`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:  # named in the ops' bases as strings: a front end imports no model to build an op
    from agent.session.models import Message, Session  # noqa: F401 - used in string bases
    from agent.session.rewind import RewindOutcome  # noqa: F401 - used in string bases
    from agent.tools.background_tasks import TaskView  # noqa: F401 - used in string bases

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Op(Generic[R]):
    """One request from a front end; `R` is what `submit` resolves to."""


# -- turns: run until done or interrupted; busy meanwhile -----------------------------
@dataclass(frozen=True, slots=True)
class Prompt(Op[None]):
    """The user's message: one turn, to the end or until `Interrupt`. Text naming a command
    (`/commit fix the typo`: a command file, a skill, an MCP prompt) is that command's turn,
    expanded by the runtime (agent/runtime/command_turn.py), so every front end sends what was typed."""

    text: str


@dataclass(frozen=True, slots=True)
class Compact(Op[None]):
    """`/compact [instructions]`: condense the conversation now (a refusal is a TurnError event)."""

    instructions: str | None = None


@dataclass(frozen=True, slots=True)
class Shell(Op["Message"]):
    """`!command`: the user's own command, run unasked, kept as a note the next request carries.
    `on_output` gets its output as it comes (the front end's live block)."""

    command: str
    on_output: Callable[[str], None] | None = None


@dataclass(frozen=True, slots=True)
class StopTask(Op["TaskView"]):
    """End a background task (`/tasks stop N`): its process group SIGTERMed, then SIGKILLed;
    resolves once it ended. KeyError (TaskNotFound) when the session has no such task."""

    task_id: str


# -- done at once: the future is already resolved ------------------------------------
@dataclass(frozen=True, slots=True)
class Interrupt(Op[bool]):
    """Stop the running turn (stream cancelled, tool processes killed); True if one ran."""


@dataclass(frozen=True, slots=True)
class SetMode(Op[None]):
    """The permission mode (agent/tools/modes.py), from the next approval check on."""

    mode: str


@dataclass(frozen=True, slots=True)
class SetModel(Op[None]):
    """The model of the next request (`/model`)."""

    model: str


@dataclass(frozen=True, slots=True)
class SetEffort(Op[None]):
    """How much a reasoning model thinks for the rest of the session (`/effort`); None: as configured."""

    effort: str | None


# -- sessions -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class NewSession(Op["Session"]):
    """`/clear`, `/new`: a fresh session in this folder."""


@dataclass(frozen=True, slots=True)
class OpenSession(Op["Session"]):
    """Switch to a stored session (the picker's Enter)."""

    session_id: str


@dataclass(frozen=True, slots=True)
class DeleteSession(Op[None]):
    """Remove a session for good; the open one is replaced by a fresh session first."""

    session_id: str


@dataclass(frozen=True, slots=True)
class Rename(Op["Session"]):
    title: str


@dataclass(frozen=True, slots=True)
class Fork(Op["Session"]):
    """Copy the active path (and its file checkpoints) into a new session and switch to it."""


@dataclass(frozen=True, slots=True)
class Rewind(Op["RewindOutcome"]):
    """Move the head to just before that user turn; `restore_files` also puts files back."""

    message_id: str
    restore_files: bool = False


@dataclass(frozen=True, slots=True)
class SwitchBranch(Op["RewindOutcome"]):
    """Move the head to another branch's end; `restore_files` re-applies its file changes."""

    leaf_id: str
    restore_files: bool = False


@dataclass(frozen=True, slots=True)
class Export(Op[Path]):
    """Write the session to a file (default: the data folder's exports/); ValueError: unknown format."""

    fmt: str = "md"
    path: Path | None = None


# -- MCP servers ------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class RestartMcp(Op[str]):
    """Restart one server and wait (bounded) for its state; KeyError: no such server."""

    name: str


@dataclass(frozen=True, slots=True)
class TrustMcpJson(Op[int]):
    """Trust the project's `.mcp.json` as it is now and start its servers; how many were added."""
