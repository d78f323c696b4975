"""/agents: the subagents this session ran, and their transcripts (read-only).

`/agents` lists them (and the agents the model may call, as they are on disk now: one added
while cairn runs is listed at once and offered to the model at its next turn); `/agents N` (or an id prefix)
opens that subagent's whole conversation: what it read, ran and answered, kept in the
store though the parent's context only ever held its final answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent.ui.commands.command import Command

if TYPE_CHECKING:
    from agent.ui.host import Host

TITLE_CHARS = 60


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    runs = await app.runtime.subagents()
    wanted = args.strip()
    if wanted:
        chosen = _pick(runs, wanted)
        if chosen is None:
            app.chat.add_notice(f"No subagent run matches '{wanted}'. /agents lists them.", kind="warning")
            return
        from agent.ui.screens.transcript import TranscriptScreen

        markdown = await app.runtime.subagent_transcript(chosen.id)
        app.push_screen(TranscriptScreen(f"{chosen.agent} agent · {chosen.title}", markdown))
        return
    lines = []
    if runs:
        lines.append("Subagents run in this session (/agents N opens one's transcript):")
        lines += [f"  {i}. {s.title[:TITLE_CHARS]}  ({s.id[:8]})" for i, s in enumerate(runs, start=1)]
    else:
        lines.append("No subagent has run in this session yet.")
    lines.append("")
    definitions = app.runtime.agent_definitions()
    lines.append(f"Agents the model can call ({len(definitions)}; subagent tool):")
    for definition in definitions:
        where = "" if definition.source == "built-in" else f" [{definition.source}]"
        lines.append(f"  {definition.name}{where}: {definition.description}")
        lines += [f"    note: {note}" for note in definition.notes]
    app.chat.add_notice("\n".join(lines), kind="help")


def _pick(runs, wanted: str):
    if wanted.isdigit() and 1 <= int(wanted) <= len(runs):
        return runs[int(wanted) - 1]
    found = [s for s in runs if s.id.startswith(wanted)]
    return found[0] if len(found) == 1 else None


COMMAND = Command("agents", "subagents run in this session; /agents N opens a transcript", run, usage="[N]")
