"""The house as AGENTS.md describes it: parts that stand apart, and no reaching into privates.

Read from the source (no imports run): the import graph of `agent/`, TYPE_CHECKING and
function-level imports included, must have no circle anywhere (the TUI's commands and screens
see the app through the `Host` Protocol of agent/ui/host.py); no module may use a private name of
another module; the layout section of AGENTS.md names every package and only those.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "agent"
# The only modules directly under agent/: the entry point and the three shared leaves.
TOP_MODULES = {"__init__.py", "cli.py", "paths.py", "prompt.py", "images.py", "documents.py"}
# Private names used across modules on purpose, each with why. Keep it short.
ALLOWED_PRIVATE = {
    ("agent/cli.py", "argparse._SubParsersAction"): "the type argparse's add_subparsers returns; it has no public name",
    ("agent/headless/warm.py", "os._exit"): "documented: a forked child must exit without running the parent's cleanup",
    ("agent/ui/early.py", "os._exit"): "documented: leaving at once after the terminal was restored",
    ("agent/ui/termination.py", "os._exit"): "documented: the last resort when the app cannot stop in time",
}


def modules() -> dict[str, Path]:
    found = {}
    for path in AGENT.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def imported(path: Path, name: str, known: dict[str, Path]) -> set[str]:
    """The agent modules `path` (module `name`) imports, wherever the import statement is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]

    def resolve(dotted: str) -> str | None:
        while dotted:
            if dotted in known:
                return dotted
            dotted = dotted.rpartition(".")[0]
        return None

    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [resolve(a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            targets = [
                resolve(f"{base}.{a.name}") if f"{base}.{a.name}" in known else resolve(base) for a in node.names
            ]
        else:
            continue
        out.update(t for t in targets if t and t != name)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


# What each part may not import (AGENTS.md says the same, part by part).
FORBIDDEN = {
    "agent.ui": ["agent.session.store", "agent.turn.loop"],
    "agent.headless": ["agent.ui"],
    "agent.acp": ["agent.ui", "agent.headless"],
    "agent.turn": ["agent.runtime.runtime", "agent.ui", "agent.acp"],
    "agent.context": [
        "agent.turn",
        "agent.runtime.runtime",
        "agent.ui",
        "agent.headless",
        "agent.acp",
        "agent.session.store",
    ],
    "agent.tools": ["agent.turn", "agent.ui", "agent.headless", "agent.acp"],
    "agent.hooks": ["agent.turn", "agent.runtime.runtime", "agent.ui", "agent.headless", "agent.acp"],
    "agent.session": ["agent.turn", "agent.ui", "agent.headless", "agent.acp"],
    "agent.settings": ["agent.tools", "agent.turn"],
    "agent.fs": ["agent"],
    "agent.process": ["agent"],
}


def _within(name: str, part: str) -> bool:
    return name == part or name.startswith(part + ".")


def test_each_part_keeps_to_its_side():
    known = modules()
    crossings = []
    for name, path in sorted(known.items()):
        for part, banned in FORBIDDEN.items():
            if not _within(name, part):
                continue
            for target in imported(path, name, known):
                if not _within(target, part) and any(_within(target, b) for b in banned):
                    crossings.append(f"{name} -> {target}")
    assert crossings == []


def test_only_the_entry_point_and_shared_leaves_sit_at_the_top():
    assert sorted(p.name for p in AGENT.glob("*.py")) == sorted(TOP_MODULES)


def test_no_import_circle_anywhere():
    known = modules()
    graph = {name: imported(path, name, known) for name, path in known.items()}
    assert circles(graph) == []


def test_the_circle_finder_finds_circles():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def _private_names_defined(tree: ast.AST) -> set[str]:
    """Private names a module defines itself: its functions, classes, attributes it sets."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("_"):
            names.add(node.value)  # __slots__ entries
    return {n for n in names if n.startswith("_")}


def private_uses(path: Path) -> list[str]:
    """Private names of another module this module uses: imported by name, or read off an
    object whose class is not defined here."""
    tree = ast.parse(path.read_text())
    own = _private_names_defined(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [
                f"from {node.module} import {a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            base = node.value
            if isinstance(base, ast.Name) and base.id in ("self", "cls"):
                continue
            if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id == "super":
                continue
            if node.attr in own:
                continue
            found.append(ast.unparse(node))
    return found


def test_no_module_uses_another_modules_private_names():
    used = []
    for path in sorted(AGENT.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        used += [(rel, use) for use in private_uses(path) if (rel, use) not in ALLOWED_PRIVATE]
    assert used == []


def test_the_private_check_sees_a_reach_into_another_module(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("from agent.x import _helper\n\ndef f(agent):\n    agent._append(1)\n    self._own = 1\n")
    assert private_uses(sample) == ["from agent.x import _helper", "agent._append"]


def test_agents_md_layout_names_every_package():
    text = (ROOT / "AGENTS.md").read_text()
    layout = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    named = {m.rstrip("/") for m in re.findall(r"^  ([a-z_]+/)", layout, flags=re.M)}
    packages = {p.parent.name for p in AGENT.glob("*/__init__.py")}
    assert named == packages
    for module in TOP_MODULES - {"__init__.py"}:
        assert re.search(rf"^  {re.escape(module)}\b", layout, flags=re.M), module


def _layout_blocks(layout: str) -> dict[str, str]:
    """Each top-level package's part of the map: from its `  name/` line to the next one."""
    blocks: dict[str, str] = {}
    current = None
    for line in layout.splitlines():
        top = re.match(r"^  ([a-z_]+)/", line)
        if top:
            current = top.group(1)
            blocks[current] = ""
        elif re.match(r"^  [a-z_]+\.py\b|^[a-z]", line):
            current = None
        if current is not None:
            blocks[current] += line + "\n"
    return blocks


def test_agents_md_layout_names_every_module_in_its_package():
    text = (ROOT / "AGENTS.md").read_text()
    blocks = _layout_blocks(text.split("## Layout", 1)[1].split("\n## ", 1)[0])
    unnamed = []
    for path in sorted(AGENT.rglob("*.py")):
        rel = path.relative_to(AGENT)
        if path.name == "__init__.py" or len(rel.parts) == 1:
            continue
        stem = path.stem
        if not re.search(rf"\b{re.escape(stem)}\b", blocks.get(rel.parts[0], "")):
            unnamed.append(str(rel))
    assert unnamed == []
