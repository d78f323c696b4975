"""`cairn -p PROMPT`: one task without the TUI, same loop and store.

Text mode prints the final answer on stdout; json mode prints one object when the run ends,
Claude Code's result (`jq -r .result` is the answer) with cairn's keys and every message the
run stored (`messages`) beside (agent/headless/result.py); stream-json prints the events as they happen
(agent/headless/stream.py, docs/headless.md), and with `--input-format stream-json` reads
follow-up messages from stdin (agent/headless/input.py). Run limits (--max-turns, --max-cost,
--allowed-tools, --disallowed-tools) are agent/headless/limits.py. Errors go to stderr and
give exit code 1.
An answer cut off at the model's output limit (finish_reason "length") is still the answer:
it is printed, stderr gets a `Note:` naming `llm.max_output_tokens`, and the exit code stays 0
(its message's meta in json mode's `messages` says `finish_reason: "length"`).
Text from outside (the answer, a refused command quoted in a note, a config warning) is made
inert (agent/fs/terminal_text.py): on stderr always (it is for people), on stdout when it is
a terminal (piped, the answer's bytes are kept exactly); a JSON line keeps its values, with
the characters a terminal obeys written as escapes.
Without --yolo, commands and file changes are refused (nobody is there to approve) unless
a `[permissions]` rule in config.toml allows them; each refusal is noted on stderr.
`/compact [instructions]` condenses the session (with --resume/--continue) and prints the
summary; `/name args` runs a project command from .cairn/commands/.
MCP servers get up to `mcp.headless_wait` seconds to be ready before the first request, so
their tools are in it; one that fails is a `Note:` and the run goes on without it.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from agent import __version__
from agent.fs.terminal_text import inert_json, inert_on_terminal, inert_writer
from agent.headless.input import StdinMessages
from agent.headless.limits import RunGuard, RunLimits
from agent.headless.result import RunTally
from agent.headless.stream import SCHEMA_VERSION, StreamPrinter
from agent.runtime.errors import NoModelConfigured, SessionNotFound
from agent.runtime.opening import FrontEnd
from agent.runtime.ops import Compact, Prompt
from agent.runtime.runtime import Runtime
from agent.runtime.termination import on_termination
from agent.session.errors import StoreOpenError
from agent.session.models import Message
from agent.settings.schema import Settings
from agent.turn.events import (
    AssistantFinished,
    ContextManaged,
    Event,
    HookActed,
    Notice,
    TaskFinished,
    ToolFinished,
    TurnError,
    UserMessage,
)

NO_MODEL_HELP = (
    "Error: no model configured. Pass --model (e.g. --model anthropic/claude-sonnet-4-5), set CAIRN_MODEL, "
    "or set a provider key such as ANTHROPIC_API_KEY or OPENAI_API_KEY."
)


class _Printer:
    """Text and json output: stderr's notes as they happen; the answer (text) or the one
    result object (json: agent/headless/result.py, with `messages`: every message the run
    stored) once the run has ended."""

    def __init__(self, output_format: str, out: TextIO, err: TextIO) -> None:
        self.output_format = output_format
        self.out = out
        self.err = err
        self.tally = RunTally()
        self.messages: list[dict[str, Any]] = []  # json mode: every message the run stored, in order
        self.tasks_stopped: list[dict[str, Any]] = []  # background tasks the end of the run stopped

    def _keep(self, message: Message) -> None:
        if self.output_format == "json":
            self.messages.append(message.model_dump(mode="json"))

    def __call__(self, event: Event) -> None:
        self.tally(event)
        if isinstance(event, (UserMessage, AssistantFinished)):
            self._keep(event.message)
        elif isinstance(event, ToolFinished):
            self._keep(event.message)
            refused = describe_refusal(event.message)
            if refused:
                self.err.write(refused + "\n")
                self.err.flush()
        elif isinstance(event, ContextManaged):
            if event.summary is not None:
                self._keep(event.summary)
            self.err.write(describe_context_event(event) + "\n")
            self.err.flush()
        elif isinstance(event, (Notice, HookActed)):  # e.g. the answer was cut off; a hook blocked a call
            self.err.write(f"Note: {event.message}\n")
            self.err.flush()
        elif isinstance(event, TurnError):
            self.err.write(f"Error: {event.message}\n")
            self.err.flush()
        elif isinstance(event, TaskFinished) and event.stopped_by == "session_end":  # said, never left running
            self.tasks_stopped.append({"task_id": event.task_id, "command": event.command})
            self.err.write(f"Note: {event.message}\n")
            self.err.flush()

    def result(self, *, exit_code: int, session_id: str | None, message: str | None = None) -> None:
        """json mode: the one object, last thing on stdout (also when the run could not start)."""
        if self.output_format != "json":
            return
        line = self.tally.result(exit_code=exit_code, session_id=session_id, message=message)
        line["messages"] = self.messages
        if self.tasks_stopped:
            line["background_tasks_stopped"] = self.tasks_stopped
        try:
            self.out.write(inert_json(json.dumps(line, ensure_ascii=False)) + "\n")
            self.out.flush()
        except (BrokenPipeError, ValueError):  # the consumer went away: the run is stored all the same
            pass


def _stopped(signum: int, err: TextIO) -> int:
    """After SIGTERM/SIGHUP: one line (if stderr is still there), exit code 128 + signal."""
    try:
        err.write(
            f"Error: stopped by {signal.Signals(signum).name}; what ran is saved "
            "(`cairn -p … --continue` resumes it).\n"
        )
        err.flush()
    except (OSError, ValueError):  # the terminal that closed was stderr
        pass
    return 128 + signum


def describe_refusal(message: Message) -> str:
    """One line for stderr when a tool call was refused for want of approval or by plan mode; else ""."""
    permission = message.meta.get("permission")
    if not isinstance(permission, dict) or permission.get("decision") not in ("refused", "plan"):
        return ""
    what = permission.get("command") or permission.get("path") or ""
    subject = f"{permission.get('title', 'a tool call')}" + (
        f": {what}" if what and what not in str(permission.get("title")) else ""
    )
    if permission["decision"] == "plan":
        return f"Note: not run in plan mode: {subject}."
    return (
        f"Note: not allowed without approval: {subject}. Pass --yolo, or allow it in .cairn/config.toml [permissions]."
    )


def describe_context_event(managed: ContextManaged) -> str:
    """One line for stderr: what the budget step did to this request."""
    e = managed.event
    if e.action == "condense" and e.outcome == "failed":
        return f"Note: condensing failed ({e.error}); truncating the request instead."
    verb = "condensed" if e.action == "condense" else "truncated for this request"
    return (
        f"Note: context {verb} ({e.trigger}): {e.tokens_before:,} → {e.tokens_after:,} tokens"
        f" in {e.duration_ms / 1000:.1f} s."
    )


async def run_headless(
    settings: Settings,
    prompt: str,
    *,
    warnings: Sequence[str] = (),
    output_format: str = "text",
    input_format: str = "text",
    limits: RunLimits | None = None,
    resume_id: str | None = None,
    continue_last: bool = False,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
) -> int:
    """One headless run: `prompt`, then (stream-json input) each message read from stdin.
    `warnings`: what loading the settings found wrong (agent/settings/config.py LoadedConfig),
    written on `err` first.
    The exit code: 0, 1 error, 2 usage, 3-6 a run limit (agent/headless/limits.py), 130
    interrupted, 128+N a signal. In stream-json output the last line is always `result`."""
    stream = output_format == "stream-json"
    out, err = (inert_on_terminal(out) if output_format == "text" else out), inert_writer(err)
    printer = StreamPrinter(out, err) if stream else _Printer(output_format, out, err)
    session_id: list[str] = []

    def finish(code: int, message: str | None = None) -> int:
        printer.result(exit_code=code, session_id=session_id[0] if session_id else None, message=message)
        return code

    for warning in warnings:
        err.write(f"Warning: {warning}\n")
    if limits is not None and limits.allowed is not None:
        settings = settings.model_copy(deep=True)  # the allowed prefixes count as approved
        settings.permissions.allow_commands.extend(RunGuard(limits, settings.workspace).approved_prefixes())
    # SIGTERM/SIGHUP (`timeout`, a closed terminal) end the run as Ctrl-C does: the task is
    # cancelled, the turn kills its command's group and answers the call, the store closes.
    main = asyncio.current_task()
    stopped: list[int] = []
    closing = False

    def terminate(signum: int) -> None:
        if not stopped:
            stopped.append(signum)
            if not closing and main is not None:
                main.cancel()

    restore_signals = on_termination(terminate)
    guard = RunGuard(limits, settings.workspace) if limits is not None else None
    try:
        try:
            runtime = await Runtime.open(
                settings,
                FrontEnd(on_event=printer, guard=guard),
                resume_id=resume_id,
                continue_last=continue_last,
                warm_up=False,
            )
        except NoModelConfigured:
            err.write(NO_MODEL_HELP + "\n")
            return finish(2, NO_MODEL_HELP.removeprefix("Error: "))
        except SessionNotFound as exc:
            err.write(f"Error: {exc}\n")
            return finish(2, str(exc))
        except StoreOpenError as exc:
            err.write(f"Error: {exc}\n")
            return finish(1, str(exc))
        except asyncio.CancelledError:
            if not stopped:
                raise
            return finish(_stopped(stopped[0], err))
        session_id.append(runtime.session.id)
        if isinstance(printer, StreamPrinter):
            printer.session_cost_of = lambda: runtime.session_cost
            printer.writer.write(
                {
                    "type": "session",
                    "schema": SCHEMA_VERSION,
                    "session_id": runtime.session.id,
                    "model": runtime.model,
                    "cwd": str(settings.workspace),
                    "resumed": bool(resume_id or continue_last),
                    "cairn": __version__,
                }
            )
        for recovered in runtime.recovered:
            err.write(f"Note: {recovered.describe()}\n")
        inputs = StdinMessages(sys.stdin) if input_format == "stream-json" else None
        try:
            await runtime.wait_for_mcp()
            text: str | None = prompt if prompt.strip() or inputs is None else None
            if text is None and inputs is not None:
                text = await inputs.next(lambda m: _input_error(printer, m))
            while text is not None:
                await _one_prompt(runtime, settings, text)
                if printer.tally.status != "ok" or inputs is None:
                    break
                text = await inputs.next(lambda m: _input_error(printer, m))
        except asyncio.CancelledError:
            printer.tally.status = "interrupted"
        finally:
            closing = True  # a signal now would cut the clean-up short: it is on its way anyway
            await runtime.close()
    finally:
        restore_signals()
    if stopped:
        return finish(_stopped(stopped[0], err))
    if guard is not None and guard.reached is not None:
        err.write(f"{guard.reached.message}\n")  # a limit the user set: said, not an error
        return finish(guard.reached.exit_code)
    if printer.tally.status != "ok":
        return finish(130 if printer.tally.status == "interrupted" else 1)
    if output_format == "text":
        out.write(printer.tally.final_text.rstrip("\n") + "\n")
        out.flush()
    return finish(0)


async def _one_prompt(runtime: Runtime, settings: Settings, prompt: str) -> None:
    name, _, args = prompt.strip().partition(" ")
    if name == "/compact":
        await runtime.submit(Compact(args.strip() or None))
    else:  # a command file or skill (`/commit …`) is expanded by the runtime (agent/runtime/command_turn.py)
        await runtime.submit(Prompt(prompt))


def _input_error(printer, message: str) -> None:
    """A stdin line that is not a user message: said on the stream, and skipped."""
    if isinstance(printer, StreamPrinter):
        printer.writer.write({"type": "error", "message": message})
    else:
        printer.err.write(f"Warning: {message}\n")
