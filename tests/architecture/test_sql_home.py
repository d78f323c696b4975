"""Only the store runs SQL: agent/session/store/ (a package, one module per table group) and
session/peek.py, the first screen's standard-library SELECT (AGENTS.md's rules).

Read from the source (no imports run): outside those, no module imports sqlite3 or aiosqlite,
and none hands an SQL text to an `execute` (as `store.conn.execute("SELECT …")` would).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "agent"
SQL_HOME = AGENT / "session" / "store"
PEEK = AGENT / "session" / "peek.py"
DRIVERS = {"sqlite3", "aiosqlite"}
EXECUTES = {"execute", "executemany", "executescript"}


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def sql_uses(source: str) -> list[str]:
    """What in `source` runs SQL: an import of an SQLite driver, or an SQL text passed to an execute."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if a.name.split(".")[0] in DRIVERS]
        elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] in DRIVERS:
            found.append(f"from {node.module} import …")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in EXECUTES
            and node.args
            and _is_text(node.args[0])
        ):
            found.append(ast.unparse(node.func))
    return found


def test_only_the_store_package_and_peek_run_sql():
    assert SQL_HOME.is_dir() and (SQL_HOME / "__init__.py").is_file()
    outside = []
    for path in sorted(AGENT.rglob("*.py")):
        if path == PEEK or path.is_relative_to(SQL_HOME):
            continue
        outside += [f"{path.relative_to(ROOT)}: {use}" for use in sql_uses(path.read_text())]
    assert outside == []


def test_the_store_package_is_where_the_sql_is():
    runs = {p.name for p in SQL_HOME.glob("*.py") if sql_uses(p.read_text())}
    assert "connection.py" in runs  # the driver is imported there; its table groups execute
    assert sql_uses(PEEK.read_text())


def test_the_sql_check_sees_a_driver_and_an_execute():
    sample = (
        "import aiosqlite\nfrom sqlite3 import connect\n"
        "async def f(store, registry, call):\n"
        "    await store.conn.execute(f'SELECT {1}')\n"
        "    await registry.execute(call)\n"
    )
    assert sql_uses(sample) == ["import aiosqlite", "from sqlite3 import …", "store.conn.execute"]
