"""The path to the first frame must stay light: heavy modules load in a worker after mount."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# Not listed: `tree_sitter` itself. Textual's TextArea imports the core binding (~1 ms,
# no grammars) for optional highlighting; the grammars (tree_sitter_language_pack, and
# any tree_sitter_<lang> module) are what is heavy, and those must stay out.
HEAVY = [
    "litellm",
    "tree_sitter_language_pack",
    "aiosqlite",
    "sqlite3",
    "tiktoken",
    "agent.turn.loop",
    "agent.session.store",
    "agent.llm.client",
    # The CLI hands the app its flags; settings (pydantic, config files) load after the first frame.
    "pydantic",
    "agent.settings.config",
    "agent.settings.schema",
    "agent.runtime.runtime",
]

SCRIPT = """
import json, sys
from pathlib import Path
import agent.cli
from agent.ui.app import CairnApp
app = CairnApp(workspace=Path.cwd(), flags={"model": "openai/fake"})  # as agent.cli builds it
app.compose()  # building the widget tree must not pull anything in either
print(json.dumps(sorted(sys.modules)))
"""


def test_ui_imports_nothing_heavy(workspace):
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
        env={**__import__("os").environ, "PYTHONPATH": str(repo)},
    )
    assert out.returncode == 0, out.stderr
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert [m for m in HEAVY if m in loaded] == []
    assert [m for m in loaded if m.startswith("tree_sitter_")] == []
