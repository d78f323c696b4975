"""`cairn -p` without --yolo (an approval would be refused: nobody is there) reads a file in
the user's skill folder, outside the workspace, unasked; a file beside that folder is refused."""

from __future__ import annotations

from tests.fakes.llm_server import FakeLLMServer, text, tool_calls
from tests.headless.helpers import base_args, cairn, needs_cairn
from tests.skills.helpers import write_skill


@needs_cairn
def test_a_file_in_a_user_skill_folder_is_read_without_approval(workspace, _isolated_home):
    folder = write_skill(
        _isolated_home / "skills",
        "release",
        "How we release.",
        "Read reference.md first.",
        files={"reference.md": "REFERENCE_MARKER: tag, then push\n"},
    )
    (_isolated_home / "private.txt").write_text("PRIVATE_MARKER\n")
    reads = [
        ("r1", "filesystem-read", {"filePath": str(folder / "reference.md")}),
        ("r2", "filesystem-read", {"filePath": str(_isolated_home / "private.txt")}),
    ]
    with FakeLLMServer([tool_calls(reads), text("Tag, then push.")]) as srv:
        out = cairn(*base_args(srv, workspace), "-p", "how do we release?")
        requests = list(srv.requests)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Tag, then push.\n"
    results = {m["tool_call_id"]: m["content"] for m in requests[1]["messages"] if m["role"] == "tool"}
    assert "REFERENCE_MARKER: tag, then push" in results["r1"] and not results["r1"].startswith("Error")
    assert results["r2"].startswith("Error: not allowed") and "PRIVATE_MARKER" not in results["r2"]
    assert "skill-load" in {t["function"]["name"] for t in requests[0]["tools"]}
