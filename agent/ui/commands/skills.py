"""/skills: the skills the model can load, where each comes from, and the ones skipped.

What is on disk now: a skill added while cairn runs is listed here at once and offered to the
model at its next turn (agent/runtime/runtime.py `skills`).

A skill the user expected and the model never loads is most often one that was skipped (a
name with capitals, no description, a symlink in a repository): the notices say which and why.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agent.ui.commands.command import Command
from agent.ui.commands.listing import short_path, show_list

if TYPE_CHECKING:
    from agent.skills.catalog import Skill
    from agent.ui.host import Host

DESCRIPTION_CHARS = 300


async def run(app: Host, args: str) -> None:
    if app.runtime is None:
        app.notice_not_ready()
        return
    catalog = app.runtime.skills()
    lines: list[str] = []
    if catalog.skills:
        count = len(catalog.skills)
        lines.append(
            f"Skills the model can load ({count}; skill-load: names and descriptions are in every request, "
            f"within a budget: past it, names only, and skill-load searches them):"
        )
        for skill in catalog.skills.values():
            description = skill.description
            if len(description) > DESCRIPTION_CHARS:
                description = description[: DESCRIPTION_CHARS - 1] + "…"
            only_you = "" if skill.model_invocable else " (only you invoke it: the model is not offered it)"
            lines.append(f"  {skill.name} [{skill.source}: {_where(skill, app.workspace)}]{only_you}: {description}")
    else:
        from agent.skills.catalog import user_folders

        lines.append(
            f"No skills found. A skill is a folder with a SKILL.md (front matter `name`, `description`) in "
            f"{short_path(user_folders()[-1], app.workspace)} (yours) or .cairn/skills/ (this project); "
            f".claude/skills/ and .agents/skills/ are read too, again at each /skills and each turn."
        )
    if catalog.notices:
        lines.append("")
        lines.append("Skipped:")
        lines += [f"  {notice}" for notice in catalog.notices]
    show_list(app, "\n".join(lines))  # a long description wraps under its skill, not at column 2


def _where(skill: Skill, workspace: Path) -> str:
    if skill.relative is not None:
        return skill.relative.as_posix()
    return short_path(skill.folder, workspace)


COMMAND = Command("skills", "the skills the model can load, and the ones skipped", run)
