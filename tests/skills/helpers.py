"""Skill folders as a user or a repository has them."""

from __future__ import annotations

from pathlib import Path

# A skill as Claude Code users write them (Anthropic's webapp-testing skill, shortened): front
# matter with `license` and `allowed-tools`, a body pointing at a script beside it.
CLAUDE_CODE_DESCRIPTION = (
    "Toolkit for interacting with and testing local web applications using Playwright. Supports verifying "
    "frontend functionality, debugging UI behavior, capturing browser screenshots, and viewing browser logs."
)
CLAUDE_CODE_SKILL = f"""\
---
name: webapp-testing
description: {CLAUDE_CODE_DESCRIPTION}
license: Complete terms in LICENSE.txt
allowed-tools: Read, Bash(python:*), Grep
metadata:
  version: "1.2"
---

# Web Application Testing

To test local web applications, write native Python Playwright scripts.

**Helper Scripts Available**:
- `scripts/with_server.py` - Manages server lifecycle (supports multiple servers)

**Always run scripts with `--help` first** to see usage. DO NOT read the source until you try
running the script first and find that a customized solution is absolutely necessary.

## Decision Tree: Choosing Your Approach

```
User task → Is it static HTML?
    ├─ Yes → Read HTML file directly to identify selectors
    └─ No (dynamic webapp) → Is the server already running?
        ├─ No → Run: python scripts/with_server.py --help
        └─ Yes → Reconnaissance-then-action
```

CLAUDE_CODE_MARKER_7f3a: wait for `networkidle` before inspecting the DOM.
"""


def marker(i: int) -> str:
    return f"BODY_MARKER_{i:02d}_q9x"


def write_skill(root: Path, name: str, description: str, body: str, *, files: dict[str, str] | None = None) -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n\n{body}\n")
    for relative, text in (files or {}).items():
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(text)
    return folder


def write_many(root: Path, count: int) -> list[str]:
    """`count` skills, each body with its own marker; their names."""
    names = [f"skill-{i:02d}" for i in range(count)]
    for i, name in enumerate(names):
        write_skill(root, name, f"Use for task kind {i:02d} (the {name} conventions).", f"# {name}\n{marker(i)}\n")
    return names
