"""The `skill-load` tool (SPEC §13.3): the model reads a skill's instructions when a task needs them.

Its description carries the catalog (catalog.py: one line per skill; past its budget the
rest named and counted), part of the request's cached prefix: the loop makes a new tool only
when the skills changed (agent/turn/loop.py `_offer_skills`). Every skill loads by its exact
name, listed or not, and `query` searches every skill's name and description, so a skill the
budget left undescribed is still found (agent/skills/listing.py). Its result is what Claude
Code gives for a skill — the folder ("Base directory for this skill"), then the body of
SKILL.md — plus the files beside it, so the model reads what the body points to with
filesystem-read (unasked in a user's skill folder, though it is outside the workspace:
`Permissions.read_roots`). The result stays in the conversation: the context passes keep a
skill-load result whole (agent/context/passes/externalize.py,
agent/context/truncation/tool_filter.py), so a loaded skill stays loaded.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from agent.skills.catalog import Skill, SkillCatalog, SkillError, other_files, read_body
from agent.skills.listing import found_text
from agent.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult

NAME = "skill-load"
PROMPT = (Path(__file__).with_name("skill-load.md")).read_text(encoding="utf-8").rstrip("\n")
MAX_NAMES_IN_ERROR = 40


class SkillLoadArgs(ToolArgs):
    name: str = Field("", description="The skill to load: its exact name (listed in this tool's description or not).")
    query: str = Field(
        "",
        description="Instead of `name`: words to search every skill's name and description for, "
        "when none listed fits or the list says some are not described.",
    )


class SkillLoad(Tool):
    name = NAME
    Args = SkillLoadArgs

    def __init__(self, catalog: SkillCatalog) -> None:
        self.catalog = catalog
        self.description = f"{PROMPT}\n{catalog.text()}"

    def update(self, catalog: SkillCatalog) -> None:
        """The skills found again (agent/turn/loop.py `_offer_skills`): the same tool, a new list."""
        self.catalog = catalog
        self.description = f"{PROMPT}\n{catalog.text()}"

    async def run(self, args: SkillLoadArgs, ctx: ToolContext) -> ToolResult:
        if not args.name.strip():
            if not args.query.strip():
                raise ToolError("give `name` (the skill to load) or `query` (words to search the skills for).")
            found = self.catalog.search(args.query)
            use = "Load one with skill-load and its `name`."
            total = len(self.catalog.entries())
            return ToolResult(content=found_text(found, query=args.query, total=total, noun="skill", use=use))
        skill = self.catalog.get(args.name)
        if skill is None:
            names = [e.name for e in self.catalog.search(args.name.replace("-", " ")) or self.catalog.entries()]
            listed = ", ".join(names[:MAX_NAMES_IN_ERROR]) + (", …" if len(names) > MAX_NAMES_IN_ERROR else "")
            wanted = args.name.strip()[:70]
            raise ToolError(f"no skill named {wanted!r}. Skills: {listed} (skill-load with `query` searches them all)")
        if not skill.model_invocable:
            raise ToolError(
                f"the skill {skill.name} is invoked only by the user (/{skill.name}): its SKILL.md sets "
                f"disable-model-invocation."
            )
        try:
            body = read_body(self.catalog, skill)
        except SkillError as exc:
            raise ToolError(f"the skill {skill.name} could not be read: {exc}") from None
        files, total = other_files(self.catalog, skill)
        meta = {"skill": {"name": skill.name, "source": skill.source, "folder": str(skill.folder)}}
        return ToolResult(content=loaded_text(skill, body, files, total), meta=meta)


def loaded_text(skill: Skill, body: str, files: list[str], total: int) -> str:
    parts = [f"Base directory for this skill: {skill.folder}", body or "(The skill's SKILL.md has no body.)"]
    if files:
        listing = "\n".join(f"- {name}" for name in files)
        if total > len(files):
            listing += f"\n- … and {total - len(files)} more"
        parts.append(
            f"Files in the skill's folder (read one with filesystem-read as {skill.folder}/<path> when the "
            f"instructions point to it):\n{listing}"
        )
    return "\n\n".join(parts)
