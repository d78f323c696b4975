"""Issue 46, item 15: two children asking at once were both `[general agent] Run command`; a
child's approval names its task, shortened with "…"."""

from __future__ import annotations

from agent.tools.permissions import ApprovalRequest
from agent.turn.children import ASKER_TASK_CHARS, _naming


async def test_a_childs_question_names_its_task_shortened():
    asked: list[str] = []

    async def approver(request: ApprovalRequest):
        asked.append(request.title)
        return "deny"

    long_task = "TASK-C: make a notes folder and write X into notes/x.txt, then list it"
    ask = _naming("general", long_task, approver)
    assert ask is not None
    await ask(ApprovalRequest(tool="terminal-execute", kind="command", title="Run command", key="k"))
    [title] = asked
    said = title.removeprefix("[general agent: ").removesuffix("] Run command")
    assert said.startswith("TASK-C: make a notes") and said.endswith("…") and len(said) <= ASKER_TASK_CHARS
