"""The house's floors: the engine never reaches up, front ends only talk to the runtime, rooms stay small.

Read from the source, like test_layout.py (TYPE_CHECKING and function-level imports count: a
type named from a higher floor is a dependency on it all the same):
- each module imports only its own floor or lower ones (`FLOORS`, lowest first);
- a front end (the TUI, `cairn -p`, the ACP server) drives the agent only by `Runtime.submit(op)`
  and reads its query methods: it never reaches `runtime.agent`, `.store` or the runtime's other
  parts, and imports nothing of the turn but its events;
- no module of `agent/` is over `MAX_MODULE_LINES` lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.architecture.test_layout import ROOT, imported, modules

# Lowest first. A module may import its own floor and those below, never above.
FLOORS: list[tuple[str, list[str]]] = [
    ("leaves", ["agent.fs", "agent.process", "agent.paths"]),
    (
        "engine",
        [
            "agent.context",
            "agent.tools",
            "agent.llm",
            "agent.mcp",
            "agent.session",
            "agent.settings",
            "agent.hooks",
            "agent.skills",
            "agent.subagents",
            "agent.commands",
            "agent.prompt",
            "agent.images",
            "agent.documents",
            "agent.instructions",
            "agent.lsp",
        ],
    ),
    ("turn", ["agent.turn"]),
    ("runtime", ["agent.runtime"]),
    ("front ends", ["agent.ui", "agent.headless", "agent.acp"]),
    ("entry point", ["agent.cli"]),
]
# Imports that run up a floor on purpose, each with why. Keep it short.
ALLOWED_UP = {
    ("agent.headless.warm", "agent.cli"): "the warm backend is an entry point itself: each forked child runs the CLI",
}
FRONT_ENDS = ("agent.ui", "agent.headless", "agent.acp")
# What a front end may import of the turn: the events it renders.
TURN_FOR_FRONT_ENDS = {"agent.turn.events"}
# The runtime's parts a front end must not reach through it: the agent and the store are the
# engine's; the session changes, MCP manager and window probes are driven by ops.
RUNTIME_INTERNALS = {"agent", "store", "sessions", "mcp", "windows"}
MAX_MODULE_LINES = 500


def _within(name: str, part: str) -> bool:
    return name == part or name.startswith(part + ".")


def floor_of(name: str) -> int | None:
    for level, (_, parts) in enumerate(FLOORS):
        if any(_within(name, part) for part in parts):
            return level
    return None


def upward_imports() -> list[str]:
    known = modules()
    found = []
    for name, path in sorted(known.items()):
        level = floor_of(name)
        if level is None:
            continue
        for target in sorted(imported(path, name, known)):
            above = floor_of(target)
            if above is not None and above > level and (name, _owner(target)) not in ALLOWED_UP:
                found.append(f"{name} ({FLOORS[level][0]}) -> {target} ({FLOORS[above][0]})")
    return found


def _owner(target: str) -> str:
    """The entry of ALLOWED_UP a target falls under (the module itself or its package)."""
    for _, up in ALLOWED_UP:
        if _within(target, up):
            return up
    return target


def test_every_package_of_agent_stands_on_a_floor():
    unplaced = sorted(n for n in modules() if n != "agent" and floor_of(n) is None)
    assert unplaced == []


def test_no_module_imports_a_higher_floor():
    assert upward_imports() == []


def test_the_floor_check_finds_an_upward_import(tmp_path, monkeypatch):
    """The check itself: an engine module naming the runtime (even for typing only) is found."""
    import tests.architecture.test_floors as floors

    fake = {"agent.tools.x": tmp_path / "x.py", "agent.runtime.runtime": tmp_path / "r.py"}
    fake["agent.tools.x"].write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agent.runtime.runtime import Runtime\n"
    )
    fake["agent.runtime.runtime"].write_text("")
    monkeypatch.setattr(floors, "modules", lambda: fake)
    assert floors.upward_imports() == ["agent.tools.x (engine) -> agent.runtime.runtime (runtime)"]


def front_end_reaches(source: str) -> list[str]:
    """`runtime.<internal>` in a front end's code, whatever holds the runtime (`self.runtime`,
    `app.runtime`, `session.runtime`, a local `runtime`)."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Attribute) or node.attr not in RUNTIME_INTERNALS:
            continue
        holder = node.value
        name = holder.id if isinstance(holder, ast.Name) else holder.attr if isinstance(holder, ast.Attribute) else ""
        if name == "runtime" or name.endswith("_runtime"):
            found.append((node.lineno, f"line {node.lineno}: {ast.unparse(node)}"))
    return [hit for _, hit in sorted(found)]


def test_front_ends_reach_no_runtime_internals():
    reaches = []
    for name, path in sorted(modules().items()):
        if any(_within(name, part) for part in FRONT_ENDS):
            reaches += [f"{path.relative_to(ROOT)} {hit}" for hit in front_end_reaches(path.read_text())]
    assert reaches == []


def test_the_reach_check_finds_each_spelling():
    source = "a = runtime.agent.guard\nb = self.runtime.store\nc = app.runtime.sessions\nd = runtime.session\n"
    assert front_end_reaches(source) == [
        "line 1: runtime.agent",
        "line 2: self.runtime.store",
        "line 3: app.runtime.sessions",
    ]


def test_front_ends_import_nothing_of_the_turn_but_its_events_nor_the_store():
    known = modules()
    found = []
    for name, path in sorted(known.items()):
        if not any(_within(name, part) for part in FRONT_ENDS):
            continue
        for target in imported(path, name, known):
            turn = _within(target, "agent.turn") and target not in TURN_FOR_FRONT_ENDS
            if turn or _within(target, "agent.session.store"):
                found.append(f"{name} -> {target}")
    assert sorted(found) == []


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_no_module_is_over_the_size_limit():
    big = {str(p.relative_to(ROOT)): _lines(p) for p in modules().values() if _lines(p) > MAX_MODULE_LINES}
    assert big == {}
