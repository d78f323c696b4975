"""/agents: the subagents this session ran, and their transcripts (read-only).

`/agents` lists them, each with what became of it (running, done, failed, interrupted), how
long it took and what it cost (agent_runs.py), and the agents the model may call, as they are
on disk now: one added while cairn runs is listed at once and offered to the model at its
next turn. `/agents N` (or an id prefix) opens that subagent's whole conversation: what it
read, ran and answered, kept in the store though the parent's context only ever held its
final answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.ui.commands.agent_runs import AgentRun, agent_runs
from agent.ui.commands.command import Command
from agent.ui.commands.listing import show_rows

if TYPE_CHECKING:
    from agent.ui.host import Host


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    from agent.session.models import now_ms

    runtime = app.runtime
    runs = agent_runs(await runtime.subagents(), await runtime.billed_messages(), busy=runtime.busy, now_ms=now_ms())
    wanted = args.strip()
    if wanted:
        chosen = _pick(runs, wanted)
        if chosen is None:
            app.chat.add_notice(f"No subagent run matches '{wanted}'. /agents lists them.", kind="warning")
            return
        from agent.ui.screens.transcript import TranscriptScreen

        _, messages = await runtime.subagent_history(chosen.session.id)
        app.push_screen(TranscriptScreen(chosen.title, messages, facts=chosen.facts()))  # `explore: the task`
        return
    rows: list[tuple[str, int]] = []
    if runs:
        rows.append(("Subagents run in this session (/agents N opens one's transcript):", 0))
        for i, agent_run in enumerate(runs, start=1):
            number = f"  {i}. "
            rows.append((f"{number}{agent_run.title}", len(number)))
            rows.append((" " * len(number) + f"{agent_run.facts()} · {agent_run.session.id[:8]}", len(number)))
    else:
        rows.append(("No subagent has run in this session yet.", 0))
    rows.append(("", 0))
    definitions = runtime.agent_definitions()
    rows.append((f"Agents the model can call ({len(definitions)}; subagent tool):", 0))
    for definition in definitions:
        where = "" if definition.source == "built-in" else f" [{definition.source}]"
        rows.append((f"  {definition.name}{where}: {definition.description}", 4))
        rows += [(f"    note: {note}", 10) for note in definition.notes]
    show_rows(app, rows)


def _pick(runs: list[AgentRun], wanted: str) -> AgentRun | None:
    if wanted.isdigit() and 1 <= int(wanted) <= len(runs):
        return runs[int(wanted) - 1]
    found = [r for r in runs if r.session.id.startswith(wanted)]
    return found[0] if len(found) == 1 else None


COMMAND = Command("agents", "subagents run in this session; /agents N opens a transcript", run, usage="[N]")
