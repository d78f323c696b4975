"""Dependencies a user can upgrade safely (issue 21).

- Every requirement in pyproject.toml has a lower bound and an upper bound (below the next
  major, or an exact pin), and requirements.lock holds it at a version its range allows,
  with what its extras bring: a dependency added without `bash scripts/lock.sh` fails here.
- CI installs the lock and runs README's test command.
- No module under agent/ imports a private (`_`-prefixed) module or name of a dependency
  or assigns to attributes of a dependency's objects, except what README's "Dependencies"
  section lists, each with an exact pin in pyproject.toml and a guard test.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import PackageNotFoundError, packages_distributions, requires
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
LOCK = REPO / "requirements.lock"
# litellm's documented module-level settings (docs.litellm.ai): configuration, not patches.
# `disable_token_counter` is a public setting declared in litellm/__init__.py (not in the docs);
# tests/headless/test_one_encoding.py fails if it stops keeping litellm's second encoding away.
DOCUMENTED_MODULE_SETTINGS = {
    ("litellm", "suppress_debug_info"),
    ("litellm", "drop_params"),
    ("litellm", "telemetry"),
    ("litellm", "disable_token_counter"),
}
# Calls that hand back a dependency's module: what they return counts as the module itself.
MODULE_GETTERS = {"import_litellm", "import_module"}
LOWER_BOUND_OPERATORS = {">=", ">", "==", "~=", "==="}
UPPER_BOUND_OPERATORS = {"<", "<=", "==", "~=", "==="}


def _requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    listed = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        listed += extra
    return [Requirement(r) for r in listed]


def _locked() -> dict[str, str]:
    pins = {}
    for line in LOCK.read_text().splitlines():
        m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)", line)
        if m:
            pins[canonicalize_name(m.group(1))] = m.group(2)
    return pins


# -- bounds and the lock --------------------------------------------------------------------------


@pytest.mark.parametrize("requirement", _requirements(), ids=str)
def test_every_requirement_is_bounded_below_and_above(requirement):
    operators = {spec.operator for spec in requirement.specifier}
    assert operators & LOWER_BOUND_OPERATORS, f"{requirement}: no lower bound (the oldest release tested)"
    assert operators & UPPER_BOUND_OPERATORS, f"{requirement}: no upper bound (below the next major)"


def test_no_requirement_is_listed_twice():
    names = [canonicalize_name(r.name) for r in _requirements()]
    assert sorted({n for n in names if names.count(n) > 1}) == []


@pytest.mark.parametrize("requirement", _requirements(), ids=str)
def test_the_lock_holds_every_requirement_at_a_version_it_allows(requirement):
    locked = _locked()
    name = canonicalize_name(requirement.name)
    assert name in locked, f"{requirement.name} is missing from requirements.lock: run `bash scripts/lock.sh`"
    assert requirement.specifier.contains(locked[name], prereleases=True), (
        f"requirements.lock has {requirement.name}=={locked[name]}, outside {requirement.specifier}: "
        "run `bash scripts/lock.sh`"
    )


def test_the_lock_holds_what_an_extra_brings():
    """A requirement with extras (`pkg[extra]`) pulls in more than its name: each of those is locked too."""
    locked = _locked()
    for requirement in (r for r in _requirements() if r.extras):
        try:
            declared = requires(requirement.name) or []
        except PackageNotFoundError:
            continue  # not installed here: test_the_lock_holds_every_requirement_… names it
        for line in declared:
            needed = Requirement(line)
            if needed.marker is None or not any(needed.marker.evaluate({"extra": e}) for e in requirement.extras):
                continue
            if needed.marker.evaluate({"extra": ""}):
                continue  # not the extra's own (a plain platform marker)
            assert canonicalize_name(needed.name) in locked, (
                f"{requirement} brings {needed.name}, which requirements.lock lacks: run `bash scripts/lock.sh`"
            )


def test_ci_installs_the_lock_and_runs_the_readme_test_command():
    """.ci/run runs README's test command, ./test, which sets .venv up from the lock (the
    locked versions, then the project without resolving again) before the suite."""
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    commands = [line.strip() for line in ci if line.strip() and not line.lstrip().startswith("#")]
    readme = (REPO / "README.md").read_text()
    test_command = re.search(r"^(\./test)\s+#", readme, re.MULTILINE)
    assert test_command is not None and commands[-1] == test_command.group(1)
    setup = (REPO / "scripts" / "bootstrap.sh").read_text()
    lock_install = setup.index('-r "$_lock"')
    project_install = setup.index('--no-deps -e "$CAIRN_ROOT"')
    assert lock_install < project_install
    assert "cairn_bootstrap" in (REPO / "test").read_text()


# -- no patched or private internals --------------------------------------------------------------


def _third_party() -> set[str]:
    own = {"agent", "tests", "bench"}
    return {name for name in packages_distributions() if name not in own and name not in sys.stdlib_module_names}


def _private(dotted: str) -> bool:
    return any(
        part.startswith("_") and not (part.startswith("__") and part.endswith("__")) for part in dotted.split(".")
    )


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def scan(source: str, third_party: set[str]) -> list[str]:
    """What `source` does to its dependencies that a new version could silently break:
    private imports (statements, or module paths given as strings) and attribute writes."""
    tree = ast.parse(source)
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> the dependency module it is
    imported: dict[str, str] = {}  # local name -> what was imported from a dependency

    def is_dependency(dotted: str) -> bool:
        return dotted.split(".")[0] in third_party

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if is_dependency(alias.name):
                    if _private(alias.name):
                        found.append(alias.name)
                    local = alias.asname or alias.name.split(".")[0]
                    modules[local] = alias.name if alias.asname else local
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and is_dependency(node.module):
            if _private(node.module):
                found.append(node.module)
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{node.module}.{alias.name}")
                imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if (
                re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)+", node.value)
                and is_dependency(node.value)
                and _private(node.value)
            ):
                found.append(node.value)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in MODULE_GETTERS:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        arg = node.value.args[0] if node.value.args else None
                        modules[target.id] = arg.value if isinstance(arg, ast.Constant) else "litellm"

    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = node.targets
        for target in targets:
            if not isinstance(target, ast.Attribute):
                continue
            root = _root(target)
            if not isinstance(root, ast.Name):
                continue
            if root.id in modules and isinstance(target.value, ast.Name):
                if (modules[root.id], target.attr) not in DOCUMENTED_MODULE_SETTINGS:
                    found.append(f"{modules[root.id]}.{target.attr} =")
            elif root.id in modules or root.id in imported:
                base = modules.get(root.id) or imported[root.id]
                found.append(f"{base}.{target.attr} =")
        if isinstance(node, ast.Call):
            func = node.func
            writes = (isinstance(func, ast.Name) and func.id in ("setattr", "delattr")) or (
                isinstance(func, ast.Attribute) and func.attr in ("__setattr__", "__delattr__")
            )
            if writes and len(node.args) >= 2:
                target, attr = node.args[0], node.args[1]
                name = attr.value if isinstance(attr, ast.Constant) else "?"
                root = _root(target)
                if isinstance(root, ast.Name) and (root.id in modules or root.id in imported):
                    found.append(f"{modules.get(root.id) or imported[root.id]}.{name} =")
                elif isinstance(name, str) and name.startswith("__"):
                    found.append(f"{name} =")  # pydantic's or Python's internals of some object
    return found


def _readme_exceptions() -> list[dict[str, str]]:
    """Rows of the table in README's "Dependencies" section: module | name | pin | guard test | why."""
    readme = (REPO / "README.md").read_text()
    section = re.search(r"^## Dependencies\n(.*?)(?=^## |\Z)", readme, re.MULTILINE | re.DOTALL)
    assert section, 'README.md has no "## Dependencies" section'
    rows = []
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0].startswith("`agent/"):
            rows.append(
                {
                    "module": cells[0].strip("`"),
                    "name": cells[1].strip("`"),
                    "pin": cells[2].strip("`"),
                    "guard": cells[3].strip("`"),
                }
            )
    return rows


def test_agent_uses_no_private_or_patched_dependency_internals_beyond_the_readme_list():
    allowed = {(row["module"], row["name"]) for row in _readme_exceptions()}
    third_party = _third_party()
    found = []
    for path in sorted((REPO / "agent").rglob("*.py")):
        module = path.relative_to(REPO).as_posix()
        found += [
            (module, name)
            for name in scan(path.read_text(encoding="utf-8"), third_party)
            if (module, name) not in allowed
        ]
    assert found == []


def test_each_listed_exception_has_an_exact_pin_and_a_guard_test():
    pins = {canonicalize_name(r.name): str(r.specifier) for r in _requirements()}
    for row in _readme_exceptions():
        name, _, version = row["pin"].partition("==")
        assert version and pins.get(canonicalize_name(name)) == f"=={version}", (
            f"README lists {row['name']} under {row['pin']}, but pyproject.toml pins {name} as "
            f"{pins.get(canonicalize_name(name))!r}"
        )
        assert (REPO / row["guard"]).is_file(), f"{row['name']}: guard test {row['guard']} is missing"
        assert (REPO / row["module"]).is_file(), f"{row['name']}: {row['module']} does not exist"


def test_the_scan_finds_what_the_removed_sdk_patches_did():
    """The patterns of the old agent/llm/sdk_chunks.py and sdk_fastpath.py, and more."""
    source = """
import importlib
import litellm
from openai import _models
from openai._compat import field_get_default
from openai.resources.chat.completions import completions as module
from openai.types.chat import ChatCompletionChunk
from agent.llm.offline import import_litellm

def install(m, f):
    module.async_maybe_transform = f
    ChatCompletionChunk.construct = f
    object.__setattr__(m, "__pydantic_extra__", {})
    setattr(module, "construct_type", f)
    litellm.suppress_debug_info = True
    litellm.module_level_client = None
    importlib.import_module("litellm._service_logger")
    lite = import_litellm()
    lite.drop_params = True
    lite.success_callback = []
"""
    assert sorted(scan(source, {"openai", "litellm"})) == sorted(
        [
            "openai._models",
            "openai._compat",
            "litellm._service_logger",
            "openai.resources.chat.completions.completions.async_maybe_transform =",
            "openai.types.chat.ChatCompletionChunk.construct =",
            "litellm.module_level_client =",
            "litellm.success_callback =",
            "__pydantic_extra__ =",
            "openai.resources.chat.completions.completions.construct_type =",
        ]
    )
